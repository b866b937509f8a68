/*
 * test_credentials.c — a request's credentials, wherever they come from, in the one
 * list Netlayer keeps (docs/documents.md "Credentials"):
 *  - a .netrc password is an Authorization header Netlayer builds for the request's
 *    own origin: never sent to another port, or from https to http, on a redirect;
 *    a netrc file that cannot be used is refused naming the auth key;
 *  - the response cache keys on the jar's cookies too: a response cached while logged
 *    in is not served after logout, an anonymous one not after login;
 *  - cassettes and debug logs hold none of the credentials a request carries unseen
 *    (netrc, the jar's cookies, a decoded basic password, libcurl's digest answer) nor
 *    the secret fields of an OAuth token exchange;
 *  - the jar's cookies and a caller's Cookie header go out as one Cookie line;
 *  - the jar's cookies follow RFC 6265 on redirects (a cookie is not bound to a port),
 *    while a Cookie header the caller set stays with its origin.
 * Servers: A, B and T of origins.h. Loopback only.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 120
#include "harness.h"
#include "fault_helpers.h"
#include "origins.h"

#include <strings.h>
#include <sys/stat.h>

#define NETRC_PW "netrc-pw-5f2a9c"
#define JAR_SID "jar-sid-77c1e0"
#define BASIC_PW "basic-pw-93de41"
#define OAUTH_PW "oauth-pw-1b7e52"
#define CLIENT_SECRET "client-sec-4d0c86"

static char *temp_dir(void)
{
    char *dir = nlt_format("/tmp/netlayer-cred-XXXXXX");
    REQUIRE(dir != NULL && mkdtemp(dir) != NULL);
    return dir;
}

/* Writes `text` to DIR/NAME; returns the path (caller frees). */
static char *write_file(const char *dir, const char *name, const char *text)
{
    char *path = nlt_format("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs(text, f);
    fclose(f);
    return path;
}

/* ---- .netrc --------------------------------------------------------------------------------- */

static nl_client *netrc_client(const char *netrc)
{
    return make_client(json_pack("{s:s, s:f, s:{s:s}, s:{s:s+}}", "baseURL", base_url(), "timeout", 10.0, "auth",
                                 "netrc", netrc, "tls", "caFile", g_cert_dir, "/ca.pem"));
}

/* The echo at the end of `start` redirecting (with `status`) to `target`. */
static json_t *redirected(nl_client *c, const char *start, const char *target, int status)
{
    char code[8];
    snprintf(code, sizeof(code), "%d", status);
    return req(c, json_pack("{s:s, s:b, s:{s:s, s:s}}", "path", start, "isFullPath", 1, "query", "url", target,
                            "status", code));
}

static void test_a_netrc_password_goes_only_to_the_origin_it_was_read_for(void)
{
    char *dir = temp_dir();
    char *netrc = write_file(dir, "netrc", "machine 127.0.0.1\n  login nel\n  password " NETRC_PW "\n");
    char *a_start = nlt_format("%sredirect-to", base_url());
    char *a_echo = nlt_format("%sbasic-echo", base_url());
    char *b_echo = nlt_format("http://127.0.0.1:%d/echo", port_b());
    char *t_https_start = nlt_format("https://127.0.0.1:%d/redirect-to", port_t());
    char *t_http_echo = nlt_format("http://127.0.0.1:%d/echo", port_t());
    static const int statuses[] = { 302, 307 };
    nl_client *c = netrc_client(netrc);
    json_t *r;
    size_t k;

    r = request_doc(c, "{\"path\": \"basic-echo\"}");  /* its own origin */
    CHECK_STR_EQ(jpath_str(r, "value.user"), "nel");
    CHECK_STR_EQ(jpath_str(r, "value.password"), NETRC_PW);
    json_decref(r);
    r = redirected(c, a_start, a_echo, 302);  /* a same-origin redirect keeps it */
    CHECK_STR_EQ(jpath_str(r, "value.password"), NETRC_PW);
    json_decref(r);
    for (k = 0; k < NLT_COUNT(statuses); k++) {
        r = redirected(c, a_start, b_echo, statuses[k]);  /* another port of the same host */
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo");
        CHECK_MSG(jpath_str(r, "value.headers.authorization") == NULL, "%d to another port: %s", statuses[k],
                  jpath_str(r, "value.headers.authorization"));
        json_decref(r);
    }
    r = redirected(c, t_https_start, b_echo, 302);  /* https to http on another port */
    CHECK_OK(r);
    CHECK_MSG(jpath_str(r, "value.headers.authorization") == NULL, "sent in cleartext: %s",
              jpath_str(r, "value.headers.authorization"));
    json_decref(r);
    r = redirected(c, t_https_start, t_http_echo, 302);  /* https to http, same port */
    CHECK_OK(r);
    CHECK(jpath_str(r, "value.headers.authorization") == NULL);
    json_decref(r);
    nl_client_free(c);

    /* A file that lists neither the host nor a default sends nothing; a default entry does. */
    free(netrc);
    netrc = write_file(dir, "netrc-other", "machine api.example.invalid login x password other-pw-1\n");
    c = netrc_client(netrc);
    r = request_doc(c, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    CHECK(jpath_str(r, "value.headers.authorization") == NULL);
    json_decref(r);
    nl_client_free(c);
    free(netrc);
    netrc = write_file(dir, "netrc-default",
                       "# comment\nmachine api.example.invalid login x password other-pw-1\n"
                       "macdef init\ncd /pub\n\ndefault login \"dee fault\" password \"pw \\\"q\\\" x\"\n");
    c = netrc_client(netrc);
    r = request_doc(c, "{\"path\": \"basic-echo\"}");
    CHECK_STR_EQ(jpath_str(r, "value.user"), "dee fault");
    CHECK_STR_EQ(jpath_str(r, "value.password"), "pw \"q\" x");
    json_decref(r);
    nl_client_free(c);

    free(netrc);
    free(a_start);
    free(a_echo);
    free(b_echo);
    free(t_https_start);
    free(t_http_echo);
    fh_rm_dir(dir);
    free(dir);
}

/* nl_client_new with auth {"netrc": path} must fail naming the auth key and `reason`. */
static void check_netrc_refused(const char *path, const char *reason)
{
    char *config = nlt_format("{\"baseURL\": \"%s\", \"auth\": {\"netrc\": \"%s\"}}", base_url(), path);
    char *err = NULL;
    double t0 = now_ms();
    nl_client *c = nl_client_new(config, &err);
    json_t *doc;
    CHECK_MSG(c == NULL, "netrc '%s' was accepted", path);
    nl_client_free(c);
    doc = nlt_parse(err, "nl_client_new error");
    CHECK_STR_EQ(jpath_str(doc, "error.kind"), "invalid_request");
    CHECK_MSG(strstr(error_message(doc), "'auth'") != NULL && strstr(error_message(doc), reason) != NULL,
              "%s: %s", path, error_message(doc));
    CHECK_MSG(now_ms() - t0 < 5000, "%s took %.0f ms", path, now_ms() - t0);
    json_decref(doc);
    nl_free(err);
    free(config);
}

static void test_a_netrc_file_that_cannot_be_used_is_refused_naming_the_key(void)
{
    char *dir = temp_dir();
    char *missing = nlt_format("%s/none", dir);
    char *fifo = nlt_format("%s/fifo", dir);
    char *open_quote = write_file(dir, "quote", "machine 127.0.0.1 login \"nel password x\n");
    char *big = nlt_format("%s/big", dir);
    char *loop = nlt_format("%s/loop", dir);
    char *unreadable = write_file(dir, "unreadable", "machine 127.0.0.1 login nel password x\n");
    nl_client *c;
    json_t *r;
    FILE *f;
    int i;

    REQUIRE(mkfifo(fifo, 0600) == 0);
    f = fopen(big, "w");
    REQUIRE(f != NULL);
    for (i = 0; i < 70000; i++)
        fputs("machine h login l\n", f);  /* 1.26 MB */
    fclose(f);
    check_netrc_refused(missing, "does not exist");
    check_netrc_refused(dir, "is a folder");
    check_netrc_refused(fifo, "is a FIFO");
    check_netrc_refused("/dev/zero", "character device");
    check_netrc_refused(big, "more than");
    check_netrc_refused(open_quote, "quoted token");
    /* A file that cannot be opened says why: a link to itself always; a file without
       read permission when the tests do not run as root (root reads it anyway). */
    REQUIRE(symlink(loop, loop) == 0);
    check_netrc_refused(loop, "cannot be read: Too many levels of symbolic links");
    if (geteuid() != 0) {
        REQUIRE(chmod(unreadable, 0) == 0);
        check_netrc_refused(unreadable, "cannot be read: Permission denied");
    }

    /* An endpoint's own auth is checked when its request is built. */
    c = client_for(NULL);
    r = request_json(c, "{\"path\": \"echo\", \"auth\": {\"netrc\": \"%s\"}}", missing);
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "auth") != NULL && strstr(error_message(r), "does not exist") != NULL, "%s",
              error_message(r));
    json_decref(r);
    r = request_doc(c, "{\"path\": \"echo\"}");  /* and the next request works */
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);

    free(missing);
    free(fifo);
    free(open_quote);
    free(big);
    free(loop);
    free(unreadable);
    fh_rm_dir(dir);
    free(dir);
}

/* ---- the response cache and the jar ---------------------------------------------------------- */

static json_t *cached_echo(nl_client *c, const char *key, const char *vary)
{
    return request_json(c, "{\"path\": \"echo\", \"useCache\": true, \"query\": {\"k\": \"%s\", \"_max_age\": 60%s%s%s}}",
                        key, vary ? ", \"_vary\": \"" : "", vary ? vary : "", vary ? "\"" : "");
}

static void set_cookie(nl_client *c, const char *cookie)
{
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"%s\"}}", cookie);
    CHECK_OK(r);
    json_decref(r);
}

static void test_a_cached_response_follows_the_jars_session(void)
{
    static const char *const varies[] = { NULL, "Cookie" };
    size_t v;
    for (v = 0; v < NLT_COUNT(varies); v++) {
        nl_client *c = client_for("\"cache\": {\"enabled\": true}");
        char *key = unique_key("jar-cache");
        json_t *r;

        r = cached_echo(c, key, varies[v]);  /* anonymous, stored */
        CHECK(json_is_false(json_object_get(r, "fromCache")));
        json_decref(r);
        r = cached_echo(c, key, varies[v]);
        CHECK(json_is_true(json_object_get(r, "fromCache")));
        json_decref(r);

        set_cookie(c, "sid=alice-session; Path=/");  /* log in */
        r = cached_echo(c, key, varies[v]);
        CHECK_MSG(json_is_false(json_object_get(r, "fromCache")), "vary %s: the anonymous response was served after login",
                  varies[v] ? varies[v] : "-");
        CHECK_MSG(jpath_str(r, "value.headers.cookie") && strstr(jpath_str(r, "value.headers.cookie"), "alice"),
                  "cookie: %s", jpath_str(r, "value.headers.cookie"));
        json_decref(r);
        r = cached_echo(c, key, varies[v]);  /* stored for the session */
        CHECK(json_is_true(json_object_get(r, "fromCache")));
        CHECK_MSG(jpath_str(r, "value.headers.cookie") && strstr(jpath_str(r, "value.headers.cookie"), "alice"),
                  "cookie: %s", jpath_str(r, "value.headers.cookie"));
        json_decref(r);

        set_cookie(c, "sid=; Path=/; Max-Age=0");  /* the server ends the session */
        r = cached_echo(c, key, varies[v]);
        CHECK_MSG(json_is_true(json_object_get(r, "fromCache")) && jpath_str(r, "value.headers.cookie") == NULL,
                  "vary %s: after logout: fromCache %d, cookie %s", varies[v] ? varies[v] : "-",
                  json_is_true(json_object_get(r, "fromCache")), jpath_str(r, "value.headers.cookie"));
        json_decref(r);

        set_cookie(c, "sid=bob-session; Path=/");  /* another user */
        r = cached_echo(c, key, varies[v]);
        CHECK_MSG(json_is_false(json_object_get(r, "fromCache")), "alice's response was served to bob");
        CHECK_MSG(jpath_str(r, "value.headers.cookie") && strstr(jpath_str(r, "value.headers.cookie"), "bob"),
                  "cookie: %s", jpath_str(r, "value.headers.cookie"));
        json_decref(r);
        free(key);
        nl_client_free(c);
    }
}

/* ---- cassettes and logs ---------------------------------------------------------------------- */

typedef struct log_text {
    pthread_mutex_t m;
    char *all;
    size_t length;
} log_text;

static void collect_log(const char *event_json, nl_reply *reply, void *user_data)
{
    log_text *l = (log_text *)user_data;
    size_t n = strlen(event_json);
    char *grown;
    (void)reply;
    pthread_mutex_lock(&l->m);
    grown = (char *)realloc(l->all, l->length + n + 2);
    if (grown != NULL) {
        l->all = grown;
        memcpy(l->all + l->length, event_json, n);
        l->length += n;
        l->all[l->length++] = '\n';
        l->all[l->length] = '\0';
    }
    pthread_mutex_unlock(&l->m);
}

/* Where `text` holds PREFIX and 16 hex digits (an OAuth token of server.py), or NULL. */
static const char *find_token(const char *text, const char *prefix)
{
    const char *found;
    for (found = strstr(text, prefix); found != NULL; found = strstr(found + 1, prefix)) {
        size_t n = strlen(prefix), i = 0;
        while (i < 16 && isxdigit((unsigned char)found[n + i]))
            i++;
        if (i == 16)
            return found;
    }
    return NULL;
}

/* Fails when `text` (a cassette or the log) holds one of the secrets. */
static void check_no_secret(const char *what, const char *text)
{
    static const char *const secrets[] = { NETRC_PW, JAR_SID, BASIC_PW, OAUTH_PW, CLIENT_SECRET, "Digest username" };
    static const char *const tokens[] = { "at-", "rt-", "it-" };
    size_t i;
    REQUIRE(text != NULL);
    for (i = 0; i < NLT_COUNT(secrets); i++) {
        const char *found = strstr(text, secrets[i]);
        CHECK_MSG(found == NULL, "%s holds '%s': ...%.160s", what, secrets[i], found);
    }
    for (i = 0; i < NLT_COUNT(tokens); i++) {
        const char *found = find_token(text, tokens[i]);
        CHECK_MSG(found == NULL, "%s holds a token: ...%.160s", what, found);
    }
}

static void test_credentials_a_request_carries_unseen_stay_out_of_cassettes_and_logs(void)
{
    /* MD5("dan:netlayer:" BASIC_PW): the digest server of server.py checks it. */
    char *dir = temp_dir();
    char *netrc = write_file(dir, "netrc", "machine 127.0.0.1 login nel password " NETRC_PW "\n");
    char *cassette = nlt_format("%s/c.json", dir);
    log_text log = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };
    char *text, *ha1, session[32];
    json_t *doc, *exchanges;
    size_t i;
    json_t *r;
    nl_client *c = client_with_config(nlt_format(
        "{\"baseURL\": \"%s\", \"timeout\": 10, \"auth\": {\"netrc\": \"%s\"}, \"log\": {\"level\": \"debug\"},"
        " \"cassette\": {\"file\": \"%s\", \"mode\": \"record\"}}", base_url(), netrc, cassette));
    REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, collect_log, &log) == 0);
    REQUIRE(fh_sh("printf '%%s' 'dan:netlayer:%s' | md5sum > %s/ha1", BASIC_PW, dir));
    text = nlt_format("%s/ha1", dir);
    ha1 = fh_read_file(text);
    free(text);
    REQUIRE(ha1 != NULL && strlen(ha1) >= 32);
    ha1[32] = '\0';

    r = request_doc(c, "{\"path\": \"echo\"}");  /* the netrc Authorization, echoed */
    CHECK_MSG(jpath_str(r, "value.headers.authorization") != NULL, "no netrc credentials sent");
    json_decref(r);
    r = request_doc(c, "{\"path\": \"basic-echo\"}");  /* the netrc password, echoed decoded */
    CHECK_STR_EQ(jpath_str(r, "value.password"), NETRC_PW);
    json_decref(r);
    r = request_doc(c, "{\"path\": \"login\", \"query\": {\"seed\": \"ann\"}}");  /* a session the request does not show */
    REQUIRE(jpath_str(r, "setCookies.0") != NULL && strncmp(jpath_str(r, "setCookies.0"), "sid=sess-", 9) == 0);
    memcpy(session, jpath_str(r, "setCookies.0") + 4, 21);
    session[21] = '\0';
    json_decref(r);
    r = request_doc(c, "{\"path\": \"echo\", \"auth\": {}}");  /* the jar's cookie, echoed */
    CHECK_MSG(jpath_str(r, "value.headers.cookie") && strstr(jpath_str(r, "value.headers.cookie"), session),
              "cookie: %s", jpath_str(r, "value.headers.cookie"));
    json_decref(r);
    r = request_doc(c, "{\"path\": \"basic-echo\", \"auth\": {\"basic\": {\"user\": \"ann\", \"password\": \""
                       BASIC_PW "\"}}}");
    CHECK_STR_EQ(jpath_str(r, "value.password"), BASIC_PW);
    json_decref(r);
    r = request_json(c, "{\"path\": \"digest-auth/dan/ha1:%s\", \"query\": {\"echo\": 1},"
                        " \"auth\": {\"digest\": {\"user\": \"dan\", \"password\": \"" BASIC_PW "\"}}}", ha1);
    CHECK_OK(r);
    CHECK_MSG(jpath_str(r, "value.headers.authorization") &&
                  strncmp(jpath_str(r, "value.headers.authorization"), "Digest username", 15) == 0,
              "no digest answer echoed: %s", jpath_str(r, "value.headers.authorization"));
    json_decref(r);
    r = request_doc(c, "{\"path\": \"oauth/token\", \"method\": \"POST\", \"auth\": {}, \"bodyEncoding\": \"form\","
                       " \"body\": {\"grant_type\": \"password\", \"username\": \"ann\", \"password\": \"" OAUTH_PW "\","
                       " \"client_id\": \"app\", \"client_secret\": \"" CLIENT_SECRET "\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.form.password"), OAUTH_PW);
    CHECK(jpath_str(r, "value.access_token") != NULL);
    json_decref(r);
    nl_client_free(c);

    text = fh_read_file(cassette);
    check_no_secret("the cassette", text);
    CHECK_MSG(text && !strstr(text, session), "the cassette holds the session %s", session);
    doc = nlt_parse(text, "the cassette");
    exchanges = json_object_get(doc, "exchanges");
    for (i = 0; i < json_array_size(exchanges); i++) {  /* the token exchange: its secret fields marked */
        json_t *x = json_array_get(exchanges, i), *body;
        if (!jpath_str(x, "request.url") || !strstr(jpath_str(x, "request.url"), "oauth/token"))
            continue;
        CHECK_MSG(strstr(jpath_str(x, "request.body"), "password=REDACTED&") &&
                      strstr(jpath_str(x, "request.body"), "client_secret=REDACTED"),
                  "request body: %s", jpath_str(x, "request.body"));
        body = json_loads(jpath_str(x, "response.body"), 0, NULL);
        CHECK_STR_EQ(jpath_str(body, "access_token"), "REDACTED");
        CHECK_STR_EQ(jpath_str(body, "refresh_token"), "REDACTED");
        CHECK_STR_EQ(jpath_str(body, "id_token"), "REDACTED");
        CHECK_STR_EQ(jpath_str(body, "form.password"), "REDACTED");
        CHECK_STR_EQ(jpath_str(body, "form.username"), "ann");  /* the rest as it was */
        json_decref(body);
    }
    json_decref(doc);
    free(text);
    check_no_secret("the debug log", log.all);
    CHECK_MSG(log.all && !strstr(log.all, session), "the log holds the session %s", session);
    CHECK(log.all && strstr(log.all, "<redacted>") != NULL);
    free(log.all);
    free(ha1);
    free(netrc);
    free(cassette);
    fh_rm_dir(dir);
    free(dir);
}

/* ---- one Cookie line; the jar on redirects ------------------------------------------------------ */

/* How many Cookie lines the echo saw, and the value of the last. */
static int cookie_lines(json_t *echo, const char **value)
{
    json_t *lines = jpath(echo, "value.headerLines");
    size_t i;
    int n = 0;
    *value = NULL;
    for (i = 0; i < json_array_size(lines); i++) {
        const char *name = json_string_value(json_array_get(json_array_get(lines, i), 0));
        if (name && strcasecmp(name, "cookie") == 0) {
            n++;
            *value = json_string_value(json_array_get(json_array_get(lines, i), 1));
        }
    }
    return n;
}

static void test_the_jars_cookies_and_the_callers_go_out_as_one_cookie_line(void)
{
    nl_client *c = client_for(NULL);
    const char *value;
    json_t *r;
    set_cookie(c, "jar=1; Path=/");
    r = request_doc(c, "{\"path\": \"echo\", \"headers\": {\"Cookie\": \"extra=x; more=y\"}}");
    CHECK_OK(r);
    CHECK_INT_EQ(cookie_lines(r, &value), 1);
    CHECK_MSG(value && strstr(value, "jar=1") && strstr(value, "extra=x; more=y"), "Cookie: %s", value);
    json_decref(r);
    r = request_doc(c, "{\"path\": \"echo\"}");  /* the next request has the jar's alone */
    CHECK_INT_EQ(cookie_lines(r, &value), 1);
    CHECK_STR_EQ(value, "jar=1");
    json_decref(r);
    nl_client_free(c);

    c = client_for("\"cookies\": false, \"headers\": {\"Cookie\": \"config=1\"}");  /* no jar: the caller's */
    r = request_doc(c, "{\"path\": \"echo\"}");
    CHECK_INT_EQ(cookie_lines(r, &value), 1);
    CHECK_STR_EQ(value, "config=1");
    json_decref(r);
    nl_client_free(c);
}

static void test_the_jars_cookies_follow_rfc_6265_and_a_callers_cookie_stays_with_its_origin(void)
{
    char *start = nlt_format("%sredirect-to", base_url());
    char *other_port = nlt_format("http://127.0.0.1:%d/echo", port_b());
    char *other_host = nlt_format("http://localhost:%d/echo", port_b());
    nl_client *c = make_client(json_pack("{s:s, s:f}", "baseURL", base_url(), "timeout", 10.0));
    const char *value;
    json_t *r;

    set_cookie(c, "sid=" JAR_SID "; Path=/");
    /* Another port of the same host: a cookie is not bound to a port (RFC 6265 section
       8.5), so the jar sends it as it would to a request made there directly; the
       Cookie header the caller set for A does not follow. */
    r = req(c, json_pack("{s:s, s:b, s:{s:s}, s:{s:s}}", "path", start, "isFullPath", 1, "query", "url", other_port,
                         "headers", "Cookie", "mine=explicit"));
    CHECK_OK(r);
    CHECK_INT_EQ(cookie_lines(r, &value), 1);
    CHECK_MSG(value && strstr(value, JAR_SID) && !strstr(value, "explicit"), "Cookie at B: %s", value);
    json_decref(r);
    /* Another host: the jar holds nothing for it (host-only cookie of 127.0.0.1). */
    r = req(c, json_pack("{s:s, s:b, s:{s:s}, s:{s:s}}", "path", start, "isFullPath", 1, "query", "url", other_host,
                         "headers", "Cookie", "mine=explicit"));
    CHECK_OK(r);
    CHECK_INT_EQ(cookie_lines(r, &value), 0);
    json_decref(r);
    nl_client_free(c);
    free(start);
    free(other_port);
    free(other_host);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_a_netrc_password_goes_only_to_the_origin_it_was_read_for),
        NLT_TEST(test_a_netrc_file_that_cannot_be_used_is_refused_naming_the_key),
        NLT_TEST(test_a_cached_response_follows_the_jars_session),
        NLT_TEST(test_credentials_a_request_carries_unseen_stay_out_of_cassettes_and_logs),
        NLT_TEST(test_the_jars_cookies_and_the_callers_go_out_as_one_cookie_line),
        NLT_TEST(test_the_jars_cookies_follow_rfc_6265_and_a_callers_cookie_stays_with_its_origin),
    };
    int rc = nlt_main(argc, argv, tests, NLT_COUNT(tests));
    origins_teardown();
    return rc;
}
