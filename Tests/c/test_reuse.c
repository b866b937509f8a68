/*
 * test_reuse.c — what the per-request fast paths must not change:
 *
 * - a JSON body is copied into the result document when a quick check proves it
 *   valid, and parsed otherwise: either way `value` is the body's value, and
 *   invalid bodies are `parsing` errors;
 * - easy handles keep their options between plain requests: nothing of one
 *   request (method, body, headers, timeout) may reach the next one on the same
 *   handle, on the caller's thread (nl_request) or on the event loop (batches with
 *   maxConcurrent 1, so every request runs on the same handle).
 */
#include "harness.h"

/* json_equal, but integers and reals compare by value (Netlayer writes 1e2 as 100). */
static int same_json(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_array(a)) {
        size_t i;
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (i = 0; i < json_array_size(a); i++)
            if (!same_json(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        const char *key;
        json_t *value;
        if (json_object_size(a) != json_object_size(b))
            return 0;
        json_object_foreach(a, key, value) {
            json_t *other = json_object_get(b, key);
            if (other == NULL || !same_json(value, other))
                return 0;
        }
        return 1;
    }
    return json_equal(a, b);
}

/* POSTs `text` as a text body to /reflect, which answers it verbatim as JSON. */
static json_t *reflect(nl_client *c, const char *text)
{
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s}", "path", "reflect", "method", "POST", "bodyEncoding", "text",
                            "body", text);
    char *endpoint = json_dumps(doc, JSON_COMPACT);
    json_t *result = request_doc(c, endpoint);
    free(endpoint);
    json_decref(doc);
    return result;
}

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 2 + 1);
    int i;
    for (i = 0; i < depth; i++) {
        s[i] = '[';
        s[depth * 2 - 1 - i] = ']';
    }
    s[depth * 2] = '\0';
    return s;
}

static void test_json_bodies_arrive_as_their_values(void)
{
    static const char *bodies[] = {
        "{\"a\":1,\"b\":[true,false,null],\"c\":\"x\",\"d\":-0.5}",
        "  {\"a\" : 1 ,\n\t\"b\" : { } }  \n",
        "[]", "{}", "\"just a string\"", "42", "-0.25", "null", "true",
        "{\"s\":\"quote \\\" backslash \\\\ slash \\/ tab \\t newline \\n\"}",
        "{\"u\":\"\\u00e9\\ud83d\\ude00\"}",
        "{\"\xc3\xa9\":\"\xc3\xbc\"}",
        "{\"big\":12345678901234567,\"small\":-1}",
        "{\"e\":1.5e3,\"f\":2E-2}",
        "{\"k\":1,\"inner\":{\"k\":2,\"K\":3},\"list\":[{\"k\":4},{\"k\":5}]}",
        "{\"\":0,\"a\":\"\"}",
    };
    nl_client *c = client_for(NULL);
    size_t i;
    char *deep = nested(200);
    for (i = 0; i <= sizeof bodies / sizeof bodies[0]; i++) {
        const char *text = i < sizeof bodies / sizeof bodies[0] ? bodies[i] : deep;
        json_error_t err;
        json_t *expected = json_loads(text, JSON_DECODE_ANY, &err);
        json_t *r = reflect(c, text);
        REQUIRE(expected != NULL);
        CHECK_OK(r);
        CHECK_MSG(same_json(jpath(r, "value"), expected), "body %.80s came back as a different value", text);
        json_decref(expected);
        json_decref(r);
    }
    free(deep);
    nl_client_free(c);
}

static void test_invalid_json_bodies_are_parsing_errors(void)
{
    static const char *bodies[] = {
        "{\"a\":1,\"a\":2}",
        "{\"a\\u0041\":1,\"aA\":2}",
        "{\"a\":1} x",
        "[1,2,]",
        "{\"a\":01}",
        "{\"a\":\"\x01\"}",
        "[",
        "{\"a\":1e999}",
        "",
    };
    nl_client *c = client_for(NULL);
    size_t i;
    char *too_deep = nested(300);
    for (i = 0; i <= sizeof bodies / sizeof bodies[0]; i++) {
        const char *text = i < sizeof bodies / sizeof bodies[0] ? bodies[i] : too_deep;
        json_t *r = reflect(c, text);
        CHECK_MSG(!result_ok(r), "invalid body %.60s was accepted", text);
        if (*text != '\0') {
            CHECK_KIND(r, "parsing");
            CHECK(strstr(error_message(r) ? error_message(r) : "", "not valid JSON") != NULL);
        }
        json_decref(r);
    }
    free(too_deep);
    nl_client_free(c);
}

/* The endpoints of one sequence, each checked against what the server saw. */
static const char *sequence[] = {
    "{\"path\":\"delay/400\",\"timeout\":0.1}",
    "{\"path\":\"delay/400\"}",
    "{\"path\":\"echo\",\"method\":\"POST\",\"body\":{\"x\":1},\"headers\":{\"X-Only-Here\":\"1\"}}",
    "{\"path\":\"echo\"}",
    "{\"path\":\"echo\",\"method\":\"DELETE\"}",
    "{\"path\":\"echo\"}",
    "{\"path\":\"json\",\"method\":\"HEAD\"}",
    "{\"path\":\"echo\"}",
    /* A handle keeps the header list of its last request for the next one with the
     * same headers: a changed value, the same again, a changed User-Agent, none. */
    "{\"path\":\"echo\",\"headers\":{\"X-Only-Here\":\"2\"}}",
    "{\"path\":\"echo\",\"headers\":{\"X-Only-Here\":\"2\"}}",
    "{\"path\":\"echo\",\"headers\":{\"X-Only-Here\":\"3\",\"User-Agent\":\"mine/1\"}}",
    "{\"path\":\"echo\"}",
};

/* Whether the server saw Netlayer's own User-Agent. */
static int sent_netlayer_user_agent(json_t *r)
{
    const char *agent = jpath_str(r, "value.headers.user-agent");
    return agent != NULL && strncmp(agent, "netlayer/", 9) == 0;
}

static void check_sequence_result(size_t i, json_t *r)
{
    switch (i) {
    case 0:
        CHECK_KIND(r, "timeout");
        break;
    case 1:
        CHECK_OK(r);  /* the 0.1 s timeout of the request before must be gone */
        break;
    case 2:
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.method"), "POST");
        CHECK_STR_EQ(jpath_str(r, "value.headers.x-only-here"), "1");
        break;
    case 8: case 9:
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.headers.x-only-here"), "2");
        CHECK(sent_netlayer_user_agent(r));
        break;
    case 10:
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.headers.x-only-here"), "3");
        CHECK_STR_EQ(jpath_str(r, "value.headers.user-agent"), "mine/1");
        break;
    case 3: case 5: case 7: case 11:
        CHECK_OK(r);
        CHECK(sent_netlayer_user_agent(r));
        CHECK_STR_EQ(jpath_str(r, "value.method"), "GET");
        CHECK(jpath_num(r, "value.bodyLength", -1) == 0);
        CHECK(jpath(r, "value.headers.x-only-here") == NULL);
        CHECK(jpath(r, "value.headers.content-type") == NULL);
        break;
    case 4:
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.method"), "DELETE");
        break;
    case 6:
        CHECK_OK(r);
        CHECK(result_status(r) == 200);
        CHECK(json_is_null(jpath(r, "value")));
        break;
    }
}

static void test_options_do_not_leak_between_blocking_requests(void)
{
    nl_client *c = client_for("\"timeout\": 5");
    size_t round, i;
    for (round = 0; round < 2; round++) {
        for (i = 0; i < sizeof sequence / sizeof sequence[0]; i++) {
            json_t *r = request_doc(c, sequence[i]);
            check_sequence_result(i, r);
            json_decref(r);
        }
    }
    nl_client_free(c);
}

static void test_options_do_not_leak_between_loop_requests(void)
{
    nl_client *c = client_for("\"timeout\": 5, \"maxConcurrent\": 1");
    size_t round, i;
    for (round = 0; round < 2; round++) {
        for (i = 0; i < sizeof sequence / sizeof sequence[0]; i++) {
            /* A batch of two: the request under test, then a plain GET that must
             * not inherit anything from it. Batches run on the event loop. */
            char *batch = nlt_format("[%s,{\"path\":\"echo\"}]", sequence[i]);
            char *text = nl_request_batch(c, batch);
            json_t *results = nlt_parse(text, "nl_request_batch");
            nl_free(text);
            free(batch);
            REQUIRE(json_is_array(results) && json_array_size(results) == 2);
            check_sequence_result(i, json_array_get(results, 0));
            check_sequence_result(3, json_array_get(results, 1));
            json_decref(results);
        }
    }
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_json_bodies_arrive_as_their_values),
        NLT_TEST(test_invalid_json_bodies_are_parsing_errors),
        NLT_TEST(test_options_do_not_leak_between_blocking_requests),
        NLT_TEST(test_options_do_not_leak_between_loop_requests),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
