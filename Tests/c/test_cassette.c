/*
 * test_cassette.c — record and replay: a client with `cassette` in record mode talks to
 * the test server and, when freed, writes every exchange to a cassette file with its
 * secrets redacted; a client in replay mode answers from that file without the network
 * (its connections would go to a Unix socket that does not exist), in the recorded
 * order, and an unmatched request is a clear error naming it. Bad cassette keys and
 * files are refused when the client is made, naming the key and the file.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "fault_helpers.h"

#include <fcntl.h>
#include <sys/stat.h>

/* Secrets the recording client sends; none may appear in the cassette. */
#define BEARER "canary-bearer-7f3a9c2e"
#define API_KEY "canary-apikey-5b1e44"
#define HEADER_SECRET "canary-header-91d0ab"
#define QUERY_SECRET "canary-query-2c77f0"

static char *make_temp_dir(void)
{
    char *dir = nlt_format("/tmp/nl-cassette-XXXXXX");
    REQUIRE(dir != NULL && mkdtemp(dir) != NULL);
    return dir;
}

static void write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    REQUIRE(fwrite(text, 1, strlen(text), f) == strlen(text));
    fclose(f);
}

/* A replay client over `file`, the recording's baseURL kept (URLs must match) and every
 * connection sent to a socket that does not exist: a request that reached for the
 * network would fail with not_connected instead of getting its recorded answer. */
static nl_client *replay_client(const char *dir, const char *file)
{
    return client_with_config(nlt_format("{\"baseURL\": \"%s\", \"unixSocket\": \"%s/nobody.sock\", "
                                         "\"cassette\": {\"file\": \"%s\", \"mode\": \"replay\"}}",
                                         base_url(), dir, file));
}

static void test_a_recording_replays_without_the_network_and_keeps_no_secret(void)
{
    char *dir = make_temp_dir();
    char *file = nlt_format("%s/api.cassette.json", dir);
    char *flaky = unique_key("cassette-flaky");
    char *twice = unique_key("cassette-twice");
    int gone = closed_port();
    nl_client *c;
    json_t *r, *doc;
    char *text;
    struct stat info;
    mode_t mask = umask(022);
    int i;
    static const long twice_status[] = {503, 200, 200};

    c = client_with_config(nlt_format(
        "{\"baseURL\": \"%s\", \"auth\": {\"bearer\": \"" BEARER "\"}, \"headers\": {\"X-Private\": \"" HEADER_SECRET "\"},"
        " \"log\": {\"redact\": [\"X-Private\"], \"redactQuery\": [\"trace_token\"]},"
        " \"cassette\": {\"file\": \"%s\", \"mode\": \"record\"}}", base_url(), file));
    r = request_json(c, "{\"path\": \"echo/one\", \"query\": {\"api_key\": \"" API_KEY "\", \"trace_token\": \""
                        QUERY_SECRET "\", \"page\": 2}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.authorization"), "Bearer " BEARER);
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"redirect/1\"}");
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    json_decref(r);
    r = request_json(c, "{\"path\": \"status/404\"}");
    CHECK_KIND(r, "status");
    json_decref(r);
    r = request_json(c, "{\"path\": \"bytes/300\"}");
    CHECK_STR_EQ(jpath_str(r, "decoder"), "base64");
    json_decref(r);
    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": [\"sid=abc123\", \"theme=dark\"]}}");
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"movies\", \"method\": \"POST\", \"body\": {\"title\": \"Solaris\"}}");
    CHECK_INT_EQ(result_status(r), 201);
    json_decref(r);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 2}, \"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}}",
                     flaky);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", 0), 3);
    json_decref(r);
    for (i = 0; i < 2; i++) {
        r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 1}}", twice);
        CHECK_INT_EQ(result_status(r), twice_status[i]);
        json_decref(r);
    }
    r = request_json(c, "{\"path\": \"delay/3000\", \"timeout\": 0.3}");
    CHECK_KIND(r, "timeout");
    json_decref(r);
    r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/gone\", \"isFullPath\": true}", gone);
    CHECK_KIND(r, "not_connected");
    json_decref(r);
    text = nl_request_batch(c, "[{\"path\": \"movies/1\"}, {\"path\": \"text\"}]");
    nl_free(text);
    nl_client_free(c);

    /* The file: written when the client was freed, new-file mode, every exchange, no secret. */
    REQUIRE_MSG(stat(file, &info) == 0, "no cassette at %s", file);
    CHECK_INT_EQ(info.st_mode & 0777, 0644);
    umask(mask);
    text = fh_read_file(file);
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "canary") == NULL, "a secret reached the cassette: %.200s", strstr(text, "canary"));
    CHECK(strstr(text, "REDACTED") != NULL);
    CHECK_MSG(strstr(text, "\n    {\n") != NULL, "the cassette is not indented, one key per line");
    doc = nlt_parse(text, "the cassette file");
    REQUIRE(doc != NULL);
    CHECK_INT_EQ(jpath_num(doc, "netlayerCassette", 0), 1);
    /* echo, json, 3 redirect hops, 404, bytes, set-cookie, POST, 3 flaky attempts, 2 more,
     * the timeout, the refused connection, 2 in the batch */
    CHECK_INT_EQ(json_array_size(jpath(doc, "exchanges")), 18);
    CHECK_STR_EQ(jpath_str(doc, "exchanges.0.request.method"), "GET");
    CHECK_STR_EQ(jpath_str(doc, "exchanges.0.request.headers.Authorization"), "REDACTED");
    CHECK_STR_EQ(jpath_str(doc, "exchanges.0.request.headers.X-Private"), "REDACTED");
    CHECK_MSG(strstr(jpath_str(doc, "exchanges.0.request.url") ? jpath_str(doc, "exchanges.0.request.url") : "",
                     "api_key=REDACTED&trace_token=REDACTED&page=2") != NULL, "%s", jpath_str(doc, "exchanges.0.request.url"));
    CHECK_INT_EQ(jpath_num(doc, "exchanges.0.response.status", 0), 200);
    CHECK(jpath_str(doc, "exchanges.6.response.bodyBase64") != NULL);
    CHECK_STR_EQ(jpath_str(doc, "exchanges.7.response.headers.set-cookie.0"), "REDACTED");
    CHECK_STR_EQ(jpath_str(doc, "exchanges.14.error.kind"), "timeout");
    CHECK_STR_EQ(jpath_str(doc, "exchanges.15.error.kind"), "not_connected");
    json_decref(doc);
    free(text);

    /* Replay: the same answers, and no network. */
    c = replay_client(dir, file);
    r = request_json(c, "{\"path\": \"echo/one\", \"query\": {\"api_key\": \"another-key\", \"trace_token\": \"t\", \"page\": 2}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.authorization"), "REDACTED");
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/one");
    CHECK_STR_EQ(jpath_str(r, "headers.content-type"), "application/json");
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\", \"response\": {\"keyPath\": \"title\"}}");
    CHECK_STR_EQ(jpath_str(r, "value"), "Dune");
    json_decref(r);
    r = request_json(c, "{\"path\": \"redirect/1\"}");
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    json_decref(r);
    r = request_json(c, "{\"path\": \"status/404\"}");
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 404);
    CHECK_MSG(jpath_str(r, "error.body") && strstr(jpath_str(r, "error.body"), "status 404"), "%s",
              jpath_str(r, "error.body"));
    json_decref(r);
    r = request_json(c, "{\"path\": \"bytes/300\"}");
    CHECK_STR_EQ(jpath_str(r, "decoder"), "base64");
    CHECK_MSG(jpath_str(r, "value") && strncmp(jpath_str(r, "value"), "AAECAwQF", 8) == 0, "%s", jpath_str(r, "value"));
    json_decref(r);
    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": [\"sid=abc123\", \"theme=dark\"]}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "setCookies.1"), "REDACTED");
    json_decref(r);
    r = request_json(c, "{\"path\": \"movies\", \"method\": \"POST\", \"body\": {\"title\": \"Solaris\"}}");
    CHECK_INT_EQ(result_status(r), 201);
    CHECK_STR_EQ(jpath_str(r, "value.data.title"), "Solaris");
    json_decref(r);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 2}, \"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}}",
                     flaky);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", 0), 3);
    json_decref(r);
    for (i = 0; i < 3; i++) {  /* in the recorded order, then the last answer again */
        r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 1}}", twice);
        CHECK_INT_EQ(result_status(r), twice_status[i]);
        json_decref(r);
    }
    r = request_json(c, "{\"path\": \"delay/3000\", \"timeout\": 0.3}");
    CHECK_KIND(r, "timeout");
    json_decref(r);
    r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/gone\", \"isFullPath\": true}", gone);
    CHECK_KIND(r, "not_connected");
    CHECK_MSG(strstr(error_message(r), "cassette") == NULL, "not the recorded error: %s", error_message(r));
    json_decref(r);
    text = nl_request_batch(c, "[{\"path\": \"movies/1\"}, {\"path\": \"text\"}, {\"path\": \"json\"}]");
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "\"Dune\"") && strstr(text, "hello, world") && !strstr(text, "\"ok\":false"), "%s", text);
    nl_free(text);
    nl_client_free(c);

    free(flaky);
    free(twice);
    unlink(file);
    rmdir(dir);
    free(file);
    free(dir);
}

static void test_an_unmatched_request_is_not_connected_naming_it(void)
{
    char *dir = make_temp_dir();
    char *file = nlt_format("%s/empty.json", dir);
    nl_client *c;
    json_t *r;
    write_text_file(file, "{\"netlayerCassette\": 1, \"exchanges\": []}");
    c = replay_client(dir, file);
    r = request_json(c, "{\"path\": \"movies/7\", \"method\": \"DELETE\", \"query\": {\"api_key\": \"" API_KEY "\"}}");
    CHECK_KIND(r, "not_connected");
    CHECK_MSG(strstr(error_message(r), "DELETE") && strstr(error_message(r), "/movies/7?api_key="),
              "%s", error_message(r));
    CHECK_MSG(strstr(error_message(r), API_KEY) == NULL, "the secret is in the message: %s", error_message(r));
    json_decref(r);
    nl_client_free(c);
    unlink(file);
    rmdir(dir);
    free(file);
    free(dir);
}

static void test_bad_cassette_keys_and_files_are_refused_naming_them(void)
{
    static const char *const keys[] = {
        "1", "{}", "{\"file\": \"x.json\"}", "{\"mode\": \"replay\"}", "{\"file\": \"\", \"mode\": \"record\"}",
        "{\"file\": \"x.json\", \"mode\": \"play\"}", "{\"file\": \"x.json\", \"mode\": \"record\", \"colour\": 1}",
        "{\"file\": \"/nonexistent-folder/x.json\", \"mode\": \"record\"}",
        "{\"file\": \"/nonexistent-folder/x.json\", \"mode\": \"replay\"}", "{\"file\": \"/tmp\", \"mode\": \"replay\"}",
    };
    static const char *const files[] = {
        "not json", "[]", "{\"exchanges\": []}", "{\"netlayerCassette\": 2, \"exchanges\": []}",
        "{\"netlayerCassette\": 1, \"exchanges\": {}}", "{\"netlayerCassette\": 1, \"exchanges\": [], \"extra\": 1}",
        "{\"netlayerCassette\": 1, \"exchanges\": [1]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\"}, \"response\": {\"status\": 200}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"A B\", \"url\": \"http://x/\"}, \"response\": {\"status\": 200}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"response\": {\"status\": 42}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"response\": {\"status\": \"200\"}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"response\": {\"status\": 200, \"bodyBase64\": \"!!\"}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"response\": {\"status\": 200, \"headers\": {\"X-A\": \"a\\r\\nX-B: b\"}}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"response\": {\"status\": 200, \"headers\": {\"X-A\": 1}}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"error\": {\"kind\": \"status\"}}]}",
        "{\"netlayerCassette\": 1, \"exchanges\": [{\"request\": {\"method\": \"GET\", \"url\": \"http://x/\"}, \"response\": {\"status\": 200}, \"error\": {\"kind\": \"tls\"}}]}",
    };
    char *dir = make_temp_dir();
    char *file = nlt_format("%s/bad.json", dir);
    size_t i;
    for (i = 0; i < NLT_COUNT(keys) + NLT_COUNT(files); i++) {
        char *config, *error = NULL;
        nl_client *c;
        json_t *e;
        if (i < NLT_COUNT(keys)) {
            config = nlt_format("{\"baseURL\": \"http://203.0.113.9/\", \"cassette\": %s}", keys[i]);
        } else {
            write_text_file(file, files[i - NLT_COUNT(keys)]);
            config = nlt_format("{\"baseURL\": \"http://203.0.113.9/\", \"cassette\": {\"file\": \"%s\", \"mode\": \"replay\"}}",
                                file);
        }
        c = nl_client_new(config, &error);
        e = error ? nlt_parse(error, "nl_client_new error_json") : NULL;
        CHECK_MSG(c == NULL && e, "%s: accepted", config);
        CHECK_MSG(strcmp(error_kind(e), "invalid_request") == 0 && strstr(error_message(e), "cassette"), "%s: %s", config,
                  error ? error : "(none)");
        if (i >= NLT_COUNT(keys))
            CHECK_MSG(strstr(error_message(e), file) != NULL, "%s: the message does not name the file: %s",
                      files[i - NLT_COUNT(keys)], error_message(e));
        if (c) nl_client_free(c);
        json_decref(e);
        nl_free(error);
        free(config);
    }
    {
        /* Too large to read: refused before a byte of it is read (a sparse file). */
        char *config = nlt_format("{\"cassette\": {\"file\": \"%s\", \"mode\": \"replay\"}}", file);
        char *error = NULL;
        nl_client *c;
        REQUIRE(truncate(file, (off_t)300 << 20) == 0);
        c = nl_client_new(config, &error);
        CHECK_MSG(c == NULL && error && strstr(error, "cassette") && strstr(error, "more than"), "%s",
                  error ? error : "(accepted)");
        if (c) nl_client_free(c);
        nl_free(error);
        free(config);
    }
    {
        char *error = NULL;
        nl_client *c = nl_client_new("{\"cassette\": {\"file\": \"x.json\", \"mode\": \"record\"}, \"stub\": []}", &error);
        CHECK_MSG(c == NULL && error && strstr(error, "'cassette'") && strstr(error, "'stub'"), "%s", error ? error : "(accepted)");
        if (c) nl_client_free(c);
        nl_free(error);
    }
    unlink(file);
    rmdir(dir);
    free(file);
    free(dir);
}

static void test_a_cassette_that_cannot_be_saved_is_reported_on_stderr(void)
{
    char *dir = make_temp_dir();
    char *file = nlt_format("%s/lost.json", dir);
    char *captured = nlt_format("/tmp/nl-cassette-stderr-%ld", (long)getpid());
    nl_client *c = client_with_config(nlt_format("{\"baseURL\": \"%s\", \"cassette\": {\"file\": \"%s\", \"mode\": \"record\"}}",
                                                 base_url(), file));
    json_t *r = request_json(c, "{\"path\": \"json\"}");
    int saved = dup(2), fd;
    char *text;
    CHECK_OK(r);
    json_decref(r);
    REQUIRE(rmdir(dir) == 0);  /* the folder is gone by the time the client is freed */
    fd = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    nl_client_free(c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    text = fh_read_file(captured);
    CHECK_MSG(text && strstr(text, "\"event\":\"error\"") && strstr(text, "cassette") && strstr(text, file),
              "stderr: %s", text ? text : "(none)");
    free(text);
    unlink(captured);
    free(captured);
    free(file);
    free(dir);
}

/* A text `body` holds no control character but TAB, LF and CR (what the writer keeps
 * as text): an edited cassette with an ESC or a NUL in one is refused when the client
 * is made, naming the exchange and the key; the same bytes as `bodyBase64` replay. */
static void test_a_text_body_with_control_characters_is_refused_naming_the_exchange(void)
{
    static const struct { const char *body, *where; } bad[] = {
        { "\"response\": {\"status\": 200, \"body\": \"red \\u001b[31mtext\"}", "exchange 1 key 'response' key 'body'" },
        { "\"response\": {\"status\": 200, \"body\": \"nul \\u0000 here\"}", "exchange 1 key 'response' key 'body'" },
        { "\"response\": {\"status\": 200, \"body\": \"del \\u007f\"}", "exchange 1 key 'response' key 'body'" },
    };
    static const char good[] = "{\"request\": {\"method\": \"GET\", \"url\": \"%stext\"},"
                               " \"response\": {\"status\": 200, \"headers\": {\"content-type\": \"text/plain\"},"
                               " \"body\": \"tab\\tlf\\ncr\\r caf\\u00e9 \\u0085\"}}";
    char *dir = make_temp_dir();
    char *file = nlt_format("%s/control.json", dir);
    char *first = nlt_format(good, base_url());
    size_t i;
    for (i = 0; i < NLT_COUNT(bad) + 1; i++) {
        char *text, *config, *error = NULL;
        nl_client *c;
        json_t *e;
        if (i < NLT_COUNT(bad))
            text = nlt_format("{\"netlayerCassette\": 1, \"exchanges\": [%s, {\"request\": {\"method\": \"GET\", "
                              "\"url\": \"http://x/\"}, %s}]}", first, bad[i].body);
        else   /* in a request body too */
            text = nlt_format("{\"netlayerCassette\": 1, \"exchanges\": [%s, {\"request\": {\"method\": \"POST\", "
                              "\"url\": \"http://x/\", \"body\": \"\\u001b]0;title\\u0007\"}, \"response\": {\"status\": 200}}]}",
                              first);
        write_text_file(file, text);
        config = nlt_format("{\"baseURL\": \"http://203.0.113.9/\", \"cassette\": {\"file\": \"%s\", \"mode\": \"replay\"}}", file);
        c = nl_client_new(config, &error);
        e = error ? nlt_parse(error, "nl_client_new error_json") : NULL;
        CHECK_MSG(c == NULL && e, "%s: accepted", text);
        if (e) {
            const char *message = error_message(e);
            const char *where = i < NLT_COUNT(bad) ? bad[i].where : "exchange 1 key 'request' key 'body'";
            CHECK_STR_EQ(error_kind(e), "invalid_request");
            CHECK_MSG(strstr(message, where) && strstr(message, "control character") && strstr(message, "'bodyBase64'")
                          && strstr(message, file),
                      "%s: %s", text, message);
        }
        if (c) nl_client_free(c);
        json_decref(e);
        nl_free(error);
        free(config);
        free(text);
    }

    /* TAB, LF, CR and other text (C1 controls included, as the writer writes them) replay as they are. */
    {
        char *text = nlt_format("{\"netlayerCassette\": 1, \"exchanges\": [%s]}", first);
        nl_client *c;
        json_t *r;
        write_text_file(file, text);
        c = replay_client(dir, file);
        r = request_json(c, "{\"path\": \"text\"}");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value"), "tab\tlf\ncr\r caf\xc3\xa9 \xc2\x85");
        json_decref(r);
        nl_client_free(c);
        free(text);
    }
    unlink(file);
    rmdir(dir);
    free(first);
    free(file);
    free(dir);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_a_recording_replays_without_the_network_and_keeps_no_secret),
        NLT_TEST(test_an_unmatched_request_is_not_connected_naming_it),
        NLT_TEST(test_bad_cassette_keys_and_files_are_refused_naming_them),
        NLT_TEST(test_a_cassette_that_cannot_be_saved_is_reported_on_stderr),
        NLT_TEST(test_a_text_body_with_control_characters_is_refused_naming_the_exchange),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
