/*
 * test_transport.c — transport choices of the config: httpVersion, unixSocket (a
 * server.py on a Unix domain socket started here), resolve (curl's --resolve) and
 * interface; what is refused, naming the key; failures that name their local cause
 * (a socket path that takes no connection, a process out of file descriptors).
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "fault_helpers.h"
#include <sys/resource.h>
#include <sys/un.h>

static void test_a_unix_socket_carries_every_request(void)
{
    char dir[] = "/tmp/netlayer-unix-XXXXXX";
    fh_server s = { -1, -1, 0, "" };
    char *path, *config;
    const char *extra[3];
    nl_client *c;
    json_t *r;
    REQUIRE(mkdtemp(dir) != NULL);
    path = nlt_format("%s/http.sock", dir);
    extra[0] = "--unix";
    extra[1] = path;
    extra[2] = NULL;
    REQUIRE_MSG(fh_server_start(&s, "server.py", extra), "cannot start server.py --unix");
    /* The URL names a host no DNS knows: only the socket can answer. */
    config = nlt_format("{\"baseURL\": \"http://docker.invalid/\", \"unixSocket\": \"%s\"}", path);
    c = client_with_config(config);
    r = request_json(c, "{\"path\": \"echo/containers\"}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/containers");
    CHECK_STR_EQ(jpath_str(r, "value.headers.host"), "docker.invalid");
    json_decref(r);
    {  /* the event loop too */
        char *text = nl_request_batch(c, "[{\"path\": \"echo\"}, {\"path\": \"echo\"}]");
        CHECK(text != NULL && strstr(text, "\"ok\":false") == NULL);
        nl_free(text);
    }
    nl_client_free(c);
    fh_server_stop(&s);
    free(path);
    fh_sh("rm -rf '%s'", dir);
}

static void test_resolve_entries_answer_for_their_host(void)
{
    int port = atoi(strrchr(base_url(), ':') + 1);
    char *config = nlt_format("{\"baseURL\": \"http://api.example.test:%d/\", \"resolve\": [\"api.example.test:%d:127.0.0.1\"],"
                              " \"interface\": \"127.0.0.1\"}", port, port);
    nl_client *c = client_with_config(config);  /* takes config */
    json_t *r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    {
        char *host = nlt_format("api.example.test:%d", port);
        CHECK_STR_EQ(jpath_str(r, "value.headers.host"), host);
        free(host);
    }
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\"}");  /* again: the entry is the transfer's, set each time */
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

static void test_http_version_is_chosen_and_3_is_refused_clearly(void)
{
    nl_client *c = client_for("\"httpVersion\": \"1.1\"");
    json_t *r = request_json(c, "{\"path\": \"json\"}");
    char *error = NULL;
    char *config;
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "httpVersion"), "1.1");
    json_decref(r);
    nl_client_free(c);
    /* HTTP/2 without asking, to a server that only speaks HTTP/1.1: a failure, not a hang. */
    c = client_for("\"httpVersion\": \"2-prior-knowledge\", \"timeout\": 5");
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK(!result_ok(r));
    json_decref(r);
    nl_client_free(c);
    config = nlt_format("{\"baseURL\": \"%s\", \"httpVersion\": \"3\"}", base_url());
    c = nl_client_new(config, &error);
    if (c == NULL) {
        CHECK_MSG(error && strstr(error, "httpVersion") && strstr(error, "HTTP/3"), "%s", error);
    } else {
        nlt_note("this libcurl has HTTP/3");
        nl_client_free(c);
    }
    nl_free(error);
    free(config);
}

static void test_malformed_transport_choices_are_refused_naming_the_key(void)
{
    static const struct { const char *member, *key; } cases[] = {
        {"\"httpVersion\": \"2.0\"", "httpVersion"}, {"\"httpVersion\": 2", "httpVersion"},
        {"\"unixSocket\": \"\"", "unixSocket"}, {"\"resolve\": [\"host:80\"]", "resolve"},
        {"\"resolve\": [\"host:99999:127.0.0.1\"]", "resolve"}, {"\"resolve\": \"h:1:a\"", "resolve"},
        {"\"resolve\": [1]", "resolve"}, {"\"interface\": \"\"", "interface"}, {"\"interface\": \"a b\"", "interface"},
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        char *config = nlt_format("{\"baseURL\": \"%s\", %s}", base_url(), cases[i].member);
        char *error = NULL;
        nl_client *c = nl_client_new(config, &error);
        CHECK_MSG(c == NULL && error && strstr(error, cases[i].key), "%s: %s", cases[i].member, error ? error : "(accepted)");
        if (c) nl_client_free(c);
        nl_free(error);
        free(config);
    }
}

/* What libcurl would take only to fail at the first transfer (a resolve address that is
 * not an IP literal: kind generic) or to ignore (an interface of 255 bytes or more) is
 * refused when the client is made, naming the key and the entry; what it takes passes. */
/* libcurl refuses a malformed proxy only when a transfer starts, as a connection
 * failure that retries would repeat; the client refuses it when it is made, naming
 * the key and never echoing the value (it may hold a password). A named endpoint's
 * path that no parameters can fill fails at creation too. */
static void test_proxies_and_named_endpoint_paths_are_checked_at_creation(void)
{
    static const struct { const char *proxy, *named; } bad[] = {
        {"http://user:pw@proxy\\r\\nX-Injected: 1", "a CR"},
        {"bogus://user:pw@proxy", "'bogus' is not a proxy scheme"},
        {"http://user:pw@proxy:99999", "is not a proxy URL"},
        {"http://user:pw@", "is not a proxy URL"},
    };
    static const char *const good[] = {
        "http://proxy:3128", "proxy:3128", "socks5h://user:pw@[::1]:1080", "https://proxy", "",
    };
    size_t i;
    char *config, *error;
    nl_client *c;
    json_t *e;
    for (i = 0; i < NLT_COUNT(bad); i++) {
        config = nlt_format("{\"baseURL\": \"%s\", \"proxy\": \"%s\"}", base_url(), bad[i].proxy);
        error = NULL;
        c = nl_client_new(config, &error);
        e = error ? json_loads(error, 0, NULL) : NULL;
        CHECK_MSG(c == NULL && e != NULL && strcmp(error_kind(e), "invalid_request") == 0
                  && strstr(error_message(e), "config key 'proxy'") && strstr(error_message(e), bad[i].named)
                  && !strstr(error, "pw"),
                  "proxy %s: %s", bad[i].proxy, error ? error : "(accepted)");
        json_decref(e);
        nl_client_free(c);
        nl_free(error);
        free(config);
    }
    for (i = 0; i < NLT_COUNT(good); i++) {
        config = nlt_format("{\"baseURL\": \"%s\", \"proxy\": \"%s\"}", base_url(), good[i]);
        error = NULL;
        c = nl_client_new(config, &error);
        CHECK_MSG(c != NULL, "proxy %s was refused: %s", good[i], error ? error : "");
        nl_client_free(c);
        nl_free(error);
        free(config);
    }

    config = nlt_format("{\"baseURL\": \"%s\", \"endpoints\": {\"broken\": {\"path\": \"items/{id\"}}}", base_url());
    error = NULL;
    c = nl_client_new(config, &error);
    e = error ? json_loads(error, 0, NULL) : NULL;
    CHECK_MSG(c == NULL && e != NULL && strcmp(error_kind(e), "invalid_request") == 0
              && strstr(error_message(e), "named endpoint 'broken' key 'path'")
              && strstr(error_message(e), "unclosed '{'"), "%s", error ? error : "(accepted)");
    json_decref(e);
    nl_client_free(c);
    nl_free(error);
    free(config);
    config = nlt_format("{\"baseURL\": \"%s\", \"endpoints\": {\"fine\": {\"path\": \"items/{id}/{part}\"}}}",
                        base_url());
    c = nl_client_new(config, NULL);
    CHECK(c != NULL);
    nl_client_free(c);
    free(config);
}

static void test_resolve_addresses_and_interface_length_are_checked_at_creation(void)
{
    char long_name[256], *config, *error;
    static const struct { const char *entry, *named; } bad[] = {
        {"api.test:80:notanip", "notanip"}, {"api.test:80:127.0.0.1,example.com", "example.com"},
        {"api.test:80:[127.0.0.1", "[127.0.0.1"}, {"api.test:80:256.1.1.1", "256.1.1.1"},
        {"api.test:80:127.0.0.1,", "''"}, {"api.test:80:[]", "[]"}, {"api.test:80:::1%eth0", "::1%eth0"},
    };
    static const char *const good[] = {
        "api.test:80:127.0.0.1", "api.test:80:[::1]", "api.test:80:::1", "+api.test:80:127.0.0.1,::1,[::2]",
        "api.test:80:[127.0.0.1]",
    };
    size_t i;
    nl_client *c;
    for (i = 0; i < NLT_COUNT(bad); i++) {
        json_t *e;
        config = nlt_format("{\"baseURL\": \"%s\", \"resolve\": [\"%s\"]}", base_url(), bad[i].entry);
        error = NULL;
        c = nl_client_new(config, &error);
        e = error ? json_loads(error, 0, NULL) : NULL;
        CHECK_MSG(c == NULL && e != NULL && strcmp(error_kind(e), "invalid_request") == 0
                  && strstr(error_message(e), "'resolve'") && strstr(error_message(e), bad[i].entry)
                  && strstr(error_message(e), bad[i].named) && strstr(error_message(e), "IPv4 or IPv6"),
                  "resolve %s: %s", bad[i].entry, error ? error : "(accepted)");
        json_decref(e);
        nl_client_free(c);
        nl_free(error);
        free(config);
    }
    for (i = 0; i < NLT_COUNT(good); i++) {
        config = nlt_format("{\"baseURL\": \"%s\", \"resolve\": [\"%s\"]}", base_url(), good[i]);
        error = NULL;
        c = nl_client_new(config, &error);
        CHECK_MSG(c != NULL, "resolve %s was refused: %s", good[i], error ? error : "");
        nl_client_free(c);
        nl_free(error);
        free(config);
    }
    /* libcurl binds to an interface name only when it is shorter than 255 bytes. */
    memset(long_name, 'e', sizeof(long_name));
    long_name[255] = '\0';
    config = nlt_format("{\"baseURL\": \"%s\", \"interface\": \"%s\"}", base_url(), long_name);
    error = NULL;
    c = nl_client_new(config, &error);
    CHECK_MSG(c == NULL && error && strstr(error, "invalid_request") && strstr(error, "'interface'")
              && strstr(error, "254"), "an interface of 255 bytes: %s", error ? error : "(accepted)");
    nl_client_free(c);
    nl_free(error);
    free(config);
    long_name[254] = '\0';
    config = nlt_format("{\"baseURL\": \"%s\", \"interface\": \"%s\"}", base_url(), long_name);
    error = NULL;
    c = nl_client_new(config, &error);
    CHECK_MSG(c != NULL, "an interface of 254 bytes was refused: %s", error ? error : "");
    nl_client_free(c);
    nl_free(error);
    free(config);
}

/* A socket path that takes no connection fails as not_connected with a message that
 * names the path and why, never the 127.0.0.1 and port 80 of libcurl's own text;
 * through a blocking request and the event loop (a batch) alike. */
static void test_unix_socket_failures_name_the_socket_and_the_cause(void)
{
    char dir[] = "/tmp/netlayer-unix-XXXXXX";
    struct sockaddr_un address;
    int unlistened, fd, i;
    char *paths[4];
    static const char *const causes[4] = { "no such file", "not a socket", "not a socket", "no server is listening" };
    REQUIRE(mkdtemp(dir) != NULL);
    paths[0] = nlt_format("%s/missing.sock", dir);
    paths[1] = nlt_format("%s/file", dir);
    paths[2] = nlt_format("%s", dir);
    paths[3] = nlt_format("%s/bound.sock", dir);
    fd = open(paths[1], O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    close(fd);
    /* Bound but not listening: connect() is refused. */
    unlistened = socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(unlistened >= 0);
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof(address.sun_path), "%s", paths[3]);
    REQUIRE(bind(unlistened, (struct sockaddr *)&address, sizeof(address)) == 0);
    for (i = 0; i < 4; i++) {
        nl_client *c = client_with_config(nlt_format("{\"baseURL\": \"http://localhost/\", \"unixSocket\": \"%s\"}",
                                                     paths[i]));
        json_t *r = request_doc(c, "{\"path\": \"echo\"}");
        char *batch = nl_request_batch(c, "[{\"path\": \"echo\"}]");
        json_t *b = nlt_parse(batch, "nl_request_batch");
        json_t *first = json_array_get(b, 0);
        CHECK_KIND(r, "not_connected");
        CHECK_KIND(first, "not_connected");
        CHECK_MSG(strstr(error_message(r), paths[i]) && strstr(error_message(r), causes[i])
                  && strstr(error_message(r), "unixSocket") && !strstr(error_message(r), "port 80")
                  && !strstr(error_message(r), "127.0.0.1"),
                  "%s: %s", paths[i], error_message(r));
        CHECK_STR_EQ(error_message(first), error_message(r));
        json_decref(r);
        json_decref(b);
        nl_free(batch);
        nl_client_free(c);
    }
    close(unlistened);
    unlink(paths[3]);
    unlink(paths[1]);
    CHECK(rmdir(dir) == 0);
    for (i = 0; i < 4; i++)
        free(paths[i]);
}

/* Lowers the soft RLIMIT_NOFILE to at most 512 (`*old` gets the limits to restore) and
 * opens descriptors until none is left; returns them (caller closes them with
 * release_descriptors). */
static int *exhaust_descriptors(struct rlimit *old, int *count)
{
    struct rlimit low;
    int *held, capacity, spare;
    *count = 0;
    REQUIRE(getrlimit(RLIMIT_NOFILE, old) == 0);
    low = *old;
    if (low.rlim_cur > 512)
        low.rlim_cur = 512;
    REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
    capacity = (int)low.rlim_cur + 1;
    held = (int *)malloc(sizeof(int) * (size_t)capacity);
    REQUIRE(held != NULL);
    spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(spare >= 0);
    held[(*count)++] = spare;
    while (*count < capacity) {
        int fd = fcntl(spare, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            break;
        held[(*count)++] = fd;
    }
    CHECK_MSG(errno == EMFILE, "dup stopped with errno %d after %d descriptors", errno, *count);
    return held;
}

static void release_descriptors(int *held, int count, const struct rlimit *old)
{
    int i;
    for (i = 0; i < count; i++)
        close(held[i]);
    free(held);
    CHECK(setrlimit(RLIMIT_NOFILE, old) == 0);
}

/* The result of a batch of one (the event loop's path), parsed. */
static json_t *batch_of_one(nl_client *c, const char *endpoint)
{
    char *doc = nlt_format("[%s]", endpoint);
    char *text = nl_request_batch(c, doc);
    json_t *all = nlt_parse(text, "nl_request_batch");
    json_t *first = json_incref(json_array_get(all, 0));
    json_decref(all);
    nl_free(text);
    free(doc);
    return first;
}

static void check_out_of_descriptors(json_t *r, const char *how)
{
    CHECK_KIND(r, "generic");
    CHECK_MSG(strstr(error_message(r), "out of file descriptors") && strstr(error_message(r), "EMFILE"), "%s: %s",
              how, error_message(r));
    nlt_note("%s: %s", how, error_message(r));
}

/* A process at its descriptor limit cannot open a socket: the failure says so, as kind
 * generic, never not_connected (which points at the network): a blocking request, a
 * request on a running event loop (libcurl's socket() fails: curlCode 7), and the
 * first asynchronous request of a client, whose event loop cannot start. Once
 * descriptors are free, the same clients work. */
static void test_descriptor_exhaustion_is_reported_as_such_not_as_not_connected(void)
{
    nl_client *running = client_for("\"timeout\": 10");
    nl_client *idle = client_for("\"timeout\": 10");
    struct rlimit old;
    int *held, count;
    json_t *blocking, *on_loop, *loop_start, *r;
    /* Starts the loop without leaving a connection in the pool. */
    r = batch_of_one(running, "{\"path\": \"http://127.0.0.1:1/\", \"isFullPath\": true}");
    CHECK_KIND(r, "not_connected");
    json_decref(r);

    held = exhaust_descriptors(&old, &count);
    blocking = request_doc(running, "{\"path\": \"json\"}");
    on_loop = batch_of_one(running, "{\"path\": \"json\"}");
    loop_start = batch_of_one(idle, "{\"path\": \"json\"}");
    release_descriptors(held, count, &old);

    check_out_of_descriptors(blocking, "blocking");
    CHECK_MSG(jpath_num(blocking, "error.curlCode", -1) > 0, "no curlCode");
    check_out_of_descriptors(on_loop, "on the loop");
    CHECK_INT_EQ(jpath_num(on_loop, "error.curlCode", -1), 7);
    check_out_of_descriptors(loop_start, "loop start");
    json_decref(blocking);
    json_decref(on_loop);
    json_decref(loop_start);
    r = batch_of_one(running, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    r = batch_of_one(idle, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(idle);
    nl_client_free(running);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_a_unix_socket_carries_every_request),
        NLT_TEST(test_resolve_entries_answer_for_their_host),
        NLT_TEST(test_http_version_is_chosen_and_3_is_refused_clearly),
        NLT_TEST(test_malformed_transport_choices_are_refused_naming_the_key),
        NLT_TEST(test_resolve_addresses_and_interface_length_are_checked_at_creation),
        NLT_TEST(test_proxies_and_named_endpoint_paths_are_checked_at_creation),
        NLT_TEST(test_unix_socket_failures_name_the_socket_and_the_cause),
        NLT_TEST(test_descriptor_exhaustion_is_reported_as_such_not_as_not_connected),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
