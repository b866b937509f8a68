/*
 * test_cache.c — the response cache where the C ABI and its threads matter (the RFC
 * 9111 / RFC 5861 rules themselves are the table of Tests/cache/rfc9111.json, run by
 * the Python suite):
 *  - stale-while-revalidate answers a blocking request at once and refreshes the
 *    response with a request of its own in the background;
 *  - a client freed while such a refresh is in flight stops it (no wait, no leak);
 *  - a cached response whose status is not acceptable fails like the network's would.
 * Server: /scenario-setup, /scenario, /scenario-log of Tests/server/server.py.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 60
#include "harness.h"

/* Scripts the server's answers for /scenario/<id> (see server.py). */
static void setup_scenario(const char *id, const char *script)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"scenario-setup/%s\", \"method\": \"POST\", \"body\": %s}", id, script);
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

/* How many requests /scenario/<id> saw; the headers of the last one in *last (caller
 * json_decref()s) when `last` is not NULL. */
static long scenario_requests(const char *id, json_t **last)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"scenario-log/%s\"}", id);
    json_t *requests = jpath(r, "value.requests");
    long n = json_is_array(requests) ? (long)json_array_size(requests) : -1;
    CHECK_OK(r);
    if (last != NULL) {
        *last = n > 0 ? json_incref(json_object_get(json_array_get(requests, (size_t)n - 1), "headers")) : NULL;
    }
    json_decref(r);
    nl_client_free(c);
    return n;
}

static int from_cache(json_t *r)
{
    return json_is_true(json_object_get(r, "fromCache"));
}

/* Waits up to 5 s for /scenario/<id> to have seen `count` requests. */
static long wait_for_requests(const char *id, long count)
{
    double t0 = now_ms();
    long n;
    while ((n = scenario_requests(id, NULL)) < count && now_ms() - t0 < 5000)
        sleep_ms(20);
    return n;
}

static void test_stale_while_revalidate_answers_at_once_and_refreshes_in_the_background(void)
{
    char *id = unique_key("swr");
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    json_t *r, *sent = NULL;
    double t0, took;

    setup_scenario(id, "{\"\": [{\"headers\": [[\"Cache-Control\", \"max-age=1, stale-while-revalidate=600\"],"
                       " [\"Age\", \"10\"], [\"ETag\", \"\\\"v1\\\"\"]]},"
                       " {\"status\": 304, \"delayMs\": 2000, \"headers\": [[\"Cache-Control\", \"max-age=3600\"]]}]}");
    r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true}", id);
    CHECK_OK(r);
    CHECK(!from_cache(r));
    json_decref(r);

    t0 = now_ms();
    r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true}", id);
    took = now_ms() - t0;
    CHECK_OK(r);
    CHECK_MSG(from_cache(r), "a stale response within stale-while-revalidate answers from the cache");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 0);
    CHECK_INT_EQ(jpath_num(r, "value.n", -1), 1);
    CHECK_MSG(took < 1500, "the answer waited for the refresh (%.0f ms; the server takes 2000)", took);
    json_decref(r);

    CHECK_INT_EQ(wait_for_requests(id, 2), 2);
    CHECK_INT_EQ(scenario_requests(id, &sent), 2);
    CHECK_STR_EQ(jpath_str(sent, "if-none-match"), "\"v1\"");
    json_decref(sent);
    sleep_ms(2500);  /* the 304 arrives after 2 s */

    r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true}", id);
    CHECK_OK(r);
    CHECK_MSG(from_cache(r), "the refreshed response answers from the cache");
    CHECK_STR_EQ(jpath_str(r, "headers.cache-control"), "max-age=3600");
    CHECK_INT_EQ(jpath_num(r, "value.n", -1), 1);
    json_decref(r);
    CHECK_INT_EQ(scenario_requests(id, NULL), 2);
    nl_client_free(c);
    free(id);
}

static void test_a_client_freed_during_a_background_revalidation_stops_it(void)
{
    char *id = unique_key("swr-free");
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    json_t *r;
    double t0;

    setup_scenario(id, "{\"\": [{\"headers\": [[\"Cache-Control\", \"max-age=1, stale-while-revalidate=600\"],"
                       " [\"Age\", \"10\"]]}, {\"delayMs\": 3000}]}");
    r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true}", id);
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true}", id);
    CHECK_OK(r);
    CHECK(from_cache(r));
    json_decref(r);
    CHECK_INT_EQ(wait_for_requests(id, 2), 2);  /* the refresh is on the wire */
    t0 = now_ms();
    nl_client_free(c);
    CHECK_MSG(now_ms() - t0 < 2000, "nl_client_free waited %.0f ms for the background refresh", now_ms() - t0);
    free(id);
}

static void test_a_cached_status_outside_acceptable_status_fails_as_from_the_network(void)
{
    char *id = unique_key("cached-404");
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    int i;

    setup_scenario(id, "{\"\": [{\"status\": 404, \"headers\": [[\"Cache-Control\", \"max-age=3600\"]]}]}");
    for (i = 0; i < 2; i++) {
        json_t *r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true}", id);
        CHECK_KIND(r, "status");
        CHECK_INT_EQ(result_status(r), 404);
        json_decref(r);
    }
    CHECK_INT_EQ(scenario_requests(id, NULL), 1);  /* the second came from the cache */
    {
        json_t *r = request_json(c, "{\"path\": \"scenario/%s\", \"useCache\": true, \"acceptableStatus\": [404]}", id);
        CHECK_OK(r);
        CHECK(from_cache(r));
        json_decref(r);
    }
    nl_client_free(c);
    free(id);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_stale_while_revalidate_answers_at_once_and_refreshes_in_the_background),
        NLT_TEST(test_a_client_freed_during_a_background_revalidation_stops_it),
        NLT_TEST(test_a_cached_status_outside_acceptable_status_fails_as_from_the_network),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
