/*
 * test_stub.c — a client over the stub transport of the config's `stub` rules: every
 * path of the library (blocking, batch, hooks, retries) answered without the network,
 * an unmatched request a clear error naming it, and malformed rules refused.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <time.h>

/* No baseURL server exists: port 9 (discard) on a documentation address. */
#define STUB_CONFIG(rules) "{\"baseURL\": \"http://203.0.113.9:9/api/v1/\", \"timeout\": 2, \"stub\": " rules "}"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static nl_client *stub_client(const char *config)
{
    char *error = NULL;
    nl_client *c = nl_client_new(config, &error);
    REQUIRE_MSG(c != NULL, "nl_client_new: %s", error ? error : "(null)");
    return c;
}

static void test_stub_rules_answer_without_the_network(void)
{
    nl_client *c = stub_client(STUB_CONFIG("["
        "{\"method\": \"GET\", \"path\": \"movies/*\", \"body\": {\"id\": 7, \"title\": \"Dune\"}},"
        "{\"method\": \"POST\", \"path\": \"movies\", \"status\": 201, \"headers\": {\"Location\": \"/movies/8\"}},"
        "{\"path\": \"/api/v1/text\", \"body\": \"plain\"},"
        "{\"path\": \"**/missing\", \"status\": 404, \"body\": {\"detail\": \"gone\"}},"
        "{\"path\": \"slow\", \"delay\": 0.2, \"bodyBase64\": \"AAE=\"},"
        "{\"path\": \"down\", \"error\": {\"kind\": \"timeout\", \"message\": \"stubbed timeout\"}}]"));
    json_t *r;
    char *text;
    double t0;

    r = request_json(c, "{\"path\": \"movies/7\", \"response\": {\"keyPath\": \"title\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value"), "Dune");
    json_decref(r);
    r = request_json(c, "{\"path\": \"movies\", \"method\": \"POST\", \"body\": {\"title\": \"x\"}}");
    CHECK_INT_EQ(jpath_num(r, "status", 0), 201);
    CHECK_STR_EQ(jpath_str(r, "headers.location"), "/movies/8");
    json_decref(r);
    r = request_json(c, "{\"path\": \"text\"}");
    CHECK_STR_EQ(jpath_str(r, "value"), "plain");
    CHECK_STR_EQ(jpath_str(r, "decoder"), "text");
    json_decref(r);
    r = request_json(c, "{\"path\": \"a/b/missing\"}");
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(jpath_num(r, "status", 0), 404);
    json_decref(r);
    t0 = now_s();
    r = request_json(c, "{\"path\": \"slow\"}");
    CHECK_STR_EQ(jpath_str(r, "value"), "AAE=");
    CHECK_MSG(now_s() - t0 >= 0.19, "the delay was %.3f s", now_s() - t0);
    json_decref(r);
    r = request_json(c, "{\"path\": \"down\"}");
    CHECK_KIND(r, "timeout");
    CHECK_STR_EQ(error_message(r), "stubbed timeout");
    json_decref(r);

    /* Unmatched: a clear error naming the request. */
    r = request_json(c, "{\"path\": \"movies/7\", \"method\": \"DELETE\"}");
    CHECK_KIND(r, "not_connected");
    CHECK_MSG(strstr(error_message(r), "DELETE") && strstr(error_message(r), "/api/v1/movies/7"), "%s", error_message(r));
    json_decref(r);

    /* The event loop answers from the same rules. */
    text = nl_request_batch(c, "[{\"path\": \"movies/1\"}, {\"path\": \"slow\"}, {\"path\": \"nope\"}]");
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "\"Dune\"") && strstr(text, "AAE=") && strstr(text, "not_connected"), "%s", text);
    nl_free(text);
    nl_client_free(c);
}

static void test_retries_and_cancel_work_over_the_stub(void)
{
    nl_client *c = stub_client(STUB_CONFIG("[{\"path\": \"busy\", \"status\": 503},"
                                           " {\"path\": \"hang\", \"delay\": 30}]"));
    json_t *r = request_json(c, "{\"path\": \"busy\", \"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}}");
    double t0;
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(jpath_num(r, "attempts", 0), 3);
    json_decref(r);
    t0 = now_s();
    r = request_json(c, "{\"path\": \"hang\", \"deadline\": 0.3}");
    CHECK(!result_ok(r));
    CHECK_MSG(now_s() - t0 < 5, "a deadline did not end a stubbed delay (%.1f s)", now_s() - t0);
    json_decref(r);
    nl_client_free(c);
}

static void test_malformed_stub_rules_are_refused(void)
{
    static const char *const rules[] = {
        "{}", "[{}]", "[{\"path\": \"\"}]", "[{\"path\": \"x\", \"status\": 99}]", "[{\"path\": \"x\", \"method\": \"A B\"}]",
        "[{\"path\": \"x\", \"bodyBase64\": \"!!\"}]", "[{\"path\": \"x\", \"delay\": -1}]",
        "[{\"path\": \"x\", \"error\": {\"kind\": \"status\"}}]", "[{\"path\": \"x\", \"colour\": 1}]",
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(rules); i++) {
        char *config = nlt_format("{\"baseURL\": \"http://203.0.113.9/\", \"stub\": %s}", rules[i]);
        char *error = NULL;
        nl_client *c = nl_client_new(config, &error);
        CHECK_MSG(c == NULL && error && strstr(error, "stub"), "%s: %s", rules[i], error ? error : "(accepted)");
        if (c) nl_client_free(c);
        nl_free(error);
        free(config);
    }
}

/* `*` stays within a segment, `**` crosses them, and a pattern without a leading `/`
 * matches the end of the path at a segment boundary. */
static void test_stub_path_patterns_match_as_documented(void)
{
    static const struct { const char *pattern, *path; int matches; } cases[] = {
        { "/a/*/c", "/a/b/c", 1 }, { "/a/*/c", "/a/b/x/c", 0 }, { "/a/*/c", "/a//c", 1 },
        { "/a/**/c", "/a/b/x/c", 1 }, { "/a/**/c", "/a/c", 0 }, { "/a/**", "/a/b", 1 }, { "/a/**", "/a", 0 },
        { "/a**", "/a/b/c", 1 }, { "/a*", "/a/b", 0 }, { "/*.json", "/x.json", 1 }, { "/*.json", "/d/x.json", 0 },
        { "/**.json", "/d/x.json", 1 }, { "/a/***", "/a/b/c", 1 }, { "/x*y*z", "/xaaybbz", 1 }, { "/x*y*z", "/xaaybb", 0 },
        { "movies/*", "/api/v1/movies/7", 1 }, { "movies/*", "/api/v1/xmovies/7", 0 }, { "movies/*", "/movies/7/8", 0 },
        { "movies", "/movies", 1 }, { "movies", "/xmovies", 0 }, { "*/7", "/api/movies/7", 1 }, { "**", "/", 1 },
        { "**/missing", "/a/b/missing", 1 }, { "**/missing", "/missing", 0 }, { "/", "/", 1 }, { "/", "/a", 0 },
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        char *config = nlt_format("{\"baseURL\": \"http://203.0.113.9:9/\", \"stub\": [{\"path\": \"%s\", \"status\": 204}]}",
                                  cases[i].pattern);
        nl_client *c = stub_client(config);
        json_t *r = request_json(c, "{\"path\": \"http://203.0.113.9:9%s\", \"isFullPath\": true}", cases[i].path);
        CHECK_MSG(cases[i].matches ? result_ok(r) : !result_ok(r), "pattern '%s' against '%s' should %smatch",
                  cases[i].pattern, cases[i].path, cases[i].matches ? "" : "not ");
        json_decref(r);
        nl_client_free(c);
        free(config);
    }
}

/* Many `**` against a long path: matching is polynomial (a backtracking matcher takes
 * minutes here), and a pattern longer than the limit is refused naming the rule. */
static void test_stub_globs_with_many_wildcards_answer_at_once(void)
{
    char pattern[256] = "/", path[256] = "", *config, *error = NULL, *long_pattern;
    nl_client *c;
    json_t *r;
    double t0, dt;
    int i;
    for (i = 0; i < 12; i++) strcat(pattern, "**/x/");
    strcat(pattern, "end");
    for (i = 0; i < 48; i++) strcat(path, "/x");
    config = nlt_format("{\"baseURL\": \"http://203.0.113.9:9/\", \"stub\": [{\"path\": \"%s\", \"status\": 204},"
                        " {\"path\": \"**\", \"status\": 404}]}", pattern);
    c = stub_client(config);
    t0 = now_s();
    r = request_json(c, "{\"path\": \"http://203.0.113.9:9%s\", \"isFullPath\": true}", path);   /* no match: every split tried */
    CHECK_INT_EQ(jpath_num(r, "status", 0), 404);
    json_decref(r);
    r = request_json(c, "{\"path\": \"http://203.0.113.9:9%s/end\", \"isFullPath\": true}", path);
    CHECK_INT_EQ(jpath_num(r, "status", 0), 204);
    json_decref(r);
    dt = now_s() - t0;
    CHECK_MSG(dt < 2.0, "two requests over a 12-wildcard rule took %.2f s", dt);
    nl_client_free(c);
    free(config);

    long_pattern = calloc(1, 1030);
    REQUIRE(long_pattern != NULL);
    long_pattern[0] = '/';
    memset(long_pattern + 1, 'a', 1024);
    config = nlt_format("{\"baseURL\": \"http://203.0.113.9/\", \"stub\": [{\"path\": \"x\"}, {\"path\": \"%s\"}]}", long_pattern);
    c = nl_client_new(config, &error);
    CHECK_MSG(c == NULL && error && strstr(error, "invalid_request") && strstr(error, "rule 1 key 'path'") && strstr(error, "1024"),
              "%s", error ? error : "(accepted)");
    if (c) nl_client_free(c);
    nl_free(error);
    free(config);
    long_pattern[1024] = '\0';   /* 1024 bytes: accepted */
    config = nlt_format("{\"baseURL\": \"http://203.0.113.9/\", \"stub\": [{\"path\": \"%s\"}]}", long_pattern);
    c = stub_client(config);
    nl_client_free(c);
    free(config);
    free(long_pattern);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_stub_rules_answer_without_the_network),
        NLT_TEST(test_retries_and_cancel_work_over_the_stub),
        NLT_TEST(test_malformed_stub_rules_are_refused),
        NLT_TEST(test_stub_path_patterns_match_as_documented),
        NLT_TEST(test_stub_globs_with_many_wildcards_answer_at_once),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
