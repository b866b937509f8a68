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

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_stub_rules_answer_without_the_network),
        NLT_TEST(test_retries_and_cancel_work_over_the_stub),
        NLT_TEST(test_malformed_stub_rules_are_refused),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
