/*
 * test_habits.c — what callers of other HTTP clients expect, through the C ABI: a POST
 * without a body sends no Content-Type, a request's own cookies replace the jar's of
 * the same name in the one Cookie line, a result names its final URL and the redirects
 * that led there (secrets redacted), the auto decoder reads text in its declared
 * charset and names it, and Content-Type lines are read as the Fetch standard's
 * "extract a MIME type" reads them.
 */
#define _GNU_SOURCE
#include "harness.h"

/* The values of the request's header lines named `name` (any case) as the server
 * saw them, one line each: how many there were, the last one in *value. */
static int header_lines(json_t *echo, const char *name, const char **value)
{
    json_t *lines = jpath(echo, "value.headerLines"), *line;
    size_t i;
    int n = 0;
    if (value)
        *value = NULL;
    json_array_foreach(lines, i, line) {
        if (strcasecmp(json_string_value(json_array_get(line, 0)), name) == 0) {
            n++;
            if (value)
                *value = json_string_value(json_array_get(line, 1));
        }
    }
    return n;
}

static void test_a_post_without_a_body_sends_no_content_type(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    const char *value;
    json_t *r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\"}");
    CHECK_OK(r);
    CHECK_MSG(header_lines(r, "Content-Type", &value) == 0, "Content-Type: %s", value ? value : "");
    CHECK(header_lines(r, "Content-Length", &value) == 1 && value && strcmp(value, "0") == 0);
    json_decref(r);

    /* 307 repeats the request as it was */
    r = request_json(c, "{\"path\": \"redirect-to\", \"method\": \"POST\", \"query\": {\"url\": \"/echo\", \"status\": 307}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.method"), "POST");
    CHECK(header_lines(r, "Content-Type", NULL) == 0);
    json_decref(r);

    /* the caller's own type is sent, and a body's */
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"headers\": {\"Content-Type\": \"text/plain\"}}");
    CHECK(header_lines(r, "Content-Type", &value) == 1 && value && strcmp(value, "text/plain") == 0);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"body\": {\"a\": 1}}");
    CHECK(header_lines(r, "Content-Type", &value) == 1 && value && strcmp(value, "application/json") == 0);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"multipart\": [{\"name\": \"n\", \"text\": \"t\"}]}");
    CHECK(header_lines(r, "Content-Type", &value) == 1 && value && strncmp(value, "multipart/form-data", 19) == 0);
    json_decref(r);
    nl_client_free(c);
}

static void test_a_result_names_its_final_url_and_the_redirects_before_it(void)
{
    nl_client *c = client_for("\"timeout\": 10, \"log\": {\"redactQuery\": [\"sig_v2\"]}");
    json_t *r = request_json(c, "{\"path\": \"redirect/2\"}"), *hops;
    char *expected;
    CHECK_OK(r);
    expected = nlt_format("%sjson", base_url());
    CHECK_STR_EQ(jpath_str(r, "url"), expected);
    free(expected);
    hops = json_object_get(r, "redirects");
    REQUIRE(json_is_array(hops) && json_array_size(hops) == 3);
    CHECK_INT_EQ((long long)jpath_num(r, "redirects.0.status", 0), 302);
    expected = nlt_format("%sredirect/2", base_url());
    CHECK_STR_EQ(jpath_str(r, "redirects.0.url"), expected);
    free(expected);
    expected = nlt_format("%sredirect/0", base_url());
    CHECK_STR_EQ(jpath_str(r, "redirects.2.url"), expected);
    free(expected);
    json_decref(r);

    /* without redirects: the URL, no list */
    r = request_json(c, "{\"path\": \"json\", \"query\": {\"page\": 1}}");
    expected = nlt_format("%sjson?page=1", base_url());
    CHECK_STR_EQ(jpath_str(r, "url"), expected);
    free(expected);
    CHECK(json_object_get(r, "redirects") == NULL);
    json_decref(r);

    /* secrets as logs show them: the well-known names and the config's own */
    r = request_json(c, "{\"path\": \"redirect-to\", \"query\": {\"url\": \"/echo?token=t0p&page=1&sig_v2=abc\","
                        " \"status\": 301, \"api_key\": \"k3y\"}}");
    CHECK_OK(r);
    expected = nlt_format("%secho?token=<redacted>&page=1&sig_v2=<redacted>", base_url());
    CHECK_STR_EQ(jpath_str(r, "url"), expected);
    free(expected);
    CHECK_INT_EQ((long long)jpath_num(r, "redirects.0.status", 0), 301);
    CHECK_MSG(jpath_str(r, "redirects.0.url") && strstr(jpath_str(r, "redirects.0.url"), "api_key=<redacted>")
              && !strstr(jpath_str(r, "redirects.0.url"), "k3y"), "hop: %s", jpath_str(r, "redirects.0.url"));
    json_decref(r);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_a_post_without_a_body_sends_no_content_type),
        NLT_TEST(test_a_result_names_its_final_url_and_the_redirects_before_it),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
