/*
 * test_openapi_limits.c — what a hostile OpenAPI document, caller or server meets
 * through the header: a YAML alias bomb of long strings is refused by its size, failure
 * messages quote values clipped, schema patterns match in linear time (responses
 * checked with validateResponses included), anyOf/$ref chains validate in linear time,
 * an apiKey credential with a line break is refused naming the config key, cookie
 * values encode commas, and a `?` or `#` in a path key stays in the path.
 *
 * The inputs are small (kilobytes) so that the valgrind run stays quick; the large ones
 * (50 000 operations, the 64 MiB bounds) are in bindings/python/tests/test_openapi.py.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

/* Generous for valgrind: what these bound used to take minutes. */
#define FAST_MS 10000.0

static json_t *call_json(nl_client *c, const char *name, const char *overlay)
{
    char *text = nl_call(c, name, overlay);
    json_t *j = nlt_parse(text, name);
    nl_free(text);
    return j;
}

/* The error document of nl_client_new(config), or NULL when the client was made. */
static char *creation_error(char *config)
{
    char *error = NULL;
    nl_client *c = nl_client_new(config, &error);
    free(config);
    if (c != NULL) nl_client_free(c);
    return error;
}

/* `count` copies of `c`, NUL-terminated (malloc'ed). */
static char *repeated(char c, size_t count)
{
    char *s = malloc(count + 1);
    REQUIRE(s != NULL);
    memset(s, c, count);
    s[count] = '\0';
    return s;
}

static void test_an_alias_bomb_of_long_strings_is_refused_by_its_size(void)
{
    /* 100 KB of text, repeated 64 times by aliases: 6.4 MB as JSON from a 100 KB text,
     * past the 4 MiB a text that small may expand to. Few values: the value count
     * alone never saw it. */
    char *big = repeated('x', 100000);
    char *error = creation_error(nlt_format(
        "{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"document\": "
        "\"openapi: 3.1.0\\ninfo: {title: t, version: '1'}\\nx-big: &a %s\\n"
        "x-many: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a,"
        " *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a,"
        " *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a,"
        " *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\\npaths: {}\\n\"}}",
        big));
    CHECK_MSG(error && strstr(error, "config key 'openapi' document") && strstr(error, "more than 4194304 bytes"),
              "%s", error ? error : "(accepted)");
    nl_free(error);
    free(big);
}

static void test_failure_messages_quote_values_clipped(void)
{
    /* An enum of four 20 000-character strings (aliases, so the document is short) and
     * a body whose members must be empty objects: each failure quotes what is wrong,
     * and where, clipped. */
    char *big = repeated('y', 20000);
    char *longkey = repeated('k', 50000);
    nl_client *c = client_with_config(nlt_format(
        "{\"baseURL\": \"%s\", \"openapi\": {\"document\": "
        "\"openapi: 3.1.0\\ninfo: {title: t, version: '1'}\\nx-big: &b %s\\npaths:\\n"
        "  /echo/e:\\n    post:\\n      operationId: e\\n      parameters:\\n"
        "        - {name: q, in: query, schema: {enum: [*b, *b, *b, *b]}}\\n"
        "      requestBody: {content: {application/json: {schema:\\n"
        "        {type: object, additionalProperties: {type: object, additionalProperties: false}}}}}\\n\"}}",
        base_url(), big));
    json_t *r = call_json(c, "e", "{\"params\": {\"q\": \"z\"}}");
    char *text;
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(error_message(r) && strstr(error_message(r), "parameter 'q' must be one of") &&
              strlen(error_message(r)) < 2000, "%.300s (%zu bytes)", error_message(r) ? error_message(r) : "",
              error_message(r) ? strlen(error_message(r)) : 0);
    json_decref(r);

    /* The pointer of the value at fault and the name it has too many of, both long. */
    text = nlt_format("{\"body\": {\"%s\": {\"%s\": 1}}}", longkey, longkey);
    r = call_json(c, "e", text);
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(error_message(r) && strstr(error_message(r), "body at '/kkk") &&
              strstr(error_message(r), "(50001 characters)") && strstr(error_message(r), "has unknown property 'kkk") &&
              strstr(error_message(r), "(50000 characters)") && strlen(error_message(r)) < 2000,
              "%.300s (%zu bytes)", error_message(r) ? error_message(r) : "", error_message(r) ? strlen(error_message(r)) : 0);
    json_decref(r);
    free(text);
    nl_client_free(c);
    free(longkey);
    free(big);
}

static void test_patterns_match_in_linear_time_in_requests_and_responses(void)
{
    /* /reflect answers with the request body: the response's `v` is what the server
     * sends, checked against ^(a+)+$, which a backtracking engine takes 2^n steps on. */
    nl_client *c = client_with_config(nlt_format(
        "{\"baseURL\": \"%s\", \"openapi\": {\"validateResponses\": true, \"document\": {"
        "\"openapi\": \"3.1.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"paths\": {"
        " \"/reflect\": {\"post\": {\"operationId\": \"reflect\","
        "   \"parameters\": [{\"name\": \"mail\", \"in\": \"query\", \"schema\": {\"pattern\": \"[a-z0-9._-]+@[a-z0-9.-]+\"}}],"
        "   \"requestBody\": {\"content\": {\"application/json\": {\"schema\": {}}}},"
        "   \"responses\": {\"200\": {\"description\": \"ok\", \"content\": {\"application/json\": {\"schema\":"
        "     {\"type\": \"object\", \"properties\": {\"v\": {\"type\": \"string\", \"pattern\": \"^(a+)+$\"}}}}}}}}}}}}}",
        base_url()));
    char *as = repeated('a', 30);
    char *mail = repeated('a', 32768);
    char *overlay = nlt_format("{\"body\": {\"v\": \"%s!\"}}", as);
    double t0 = now_ms();
    json_t *r = call_json(c, "reflect", overlay);
    double elapsed = now_ms() - t0;
    CHECK_KIND(r, "parsing");
    CHECK_MSG(error_message(r) && strstr(error_message(r), "the response body at '/v' must match the pattern '^(a+)+$'"),
              "%s", error_message(r) ? error_message(r) : "");
    CHECK_MSG(elapsed < FAST_MS, "took %.0f ms", elapsed);
    json_decref(r);
    free(overlay);

    overlay = nlt_format("{\"body\": {\"v\": \"%s\"}}", as);  /* matches */
    r = call_json(c, "reflect", overlay);
    CHECK_OK(r);
    json_decref(r);
    free(overlay);

    overlay = nlt_format("{\"params\": {\"mail\": \"%s\"}, \"body\": {}}", mail);
    t0 = now_ms();
    r = call_json(c, "reflect", overlay);
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(error_message(r) && strstr(error_message(r), "parameter 'mail' must match the pattern"),
              "%s", error_message(r) ? error_message(r) : "");
    CHECK_MSG(elapsed < FAST_MS, "took %.0f ms", elapsed);
    json_decref(r);
    free(overlay);
    free(mail);
    free(as);
    nl_client_free(c);
}

static void test_anyof_ref_chains_validate_in_linear_time(void)
{
    /* S40 is anyOf of two $refs to S39, ..., S1 of two to S0 (an integer): a string
     * fails every branch, which used to cost 2^40 checks. */
    size_t cap = 16384, used = 0;
    char *schemas = malloc(cap);
    int i;
    json_t *r;
    nl_client *c;
    double t0, elapsed;
    REQUIRE(schemas != NULL);
    used += (size_t)snprintf(schemas + used, cap - used, "\"S0\": {\"type\": \"integer\"}");
    for (i = 1; i <= 40; i++) {
        used += (size_t)snprintf(schemas + used, cap - used,
                                 ", \"S%d\": {\"anyOf\": [{\"$ref\": \"#/components/schemas/S%d\"},"
                                 " {\"$ref\": \"#/components/schemas/S%d\"}]}", i, i - 1, i - 1);
    }
    REQUIRE(used < cap);
    c = client_with_config(nlt_format(
        "{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"document\": {"
        "\"openapi\": \"3.1.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"},"
        "\"components\": {\"schemas\": {%s}}, \"paths\": {\"/p\": {\"get\": {\"operationId\": \"p\","
        " \"parameters\": [{\"name\": \"q\", \"in\": \"query\", \"schema\": {\"$ref\": \"#/components/schemas/S40\"}}]}}}}}}",
        schemas));
    t0 = now_ms();
    r = call_json(c, "p", "{\"params\": {\"q\": \"x\"}}");
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(error_message(r) && strstr(error_message(r), "matches none of the 2 schemas of anyOf") &&
              strlen(error_message(r)) < 4000, "%.300s (%zu bytes)", error_message(r) ? error_message(r) : "",
              error_message(r) ? strlen(error_message(r)) : 0);
    CHECK_MSG(elapsed < FAST_MS, "took %.0f ms", elapsed);
    json_decref(r);
    nl_client_free(c);
    free(schemas);
}

static void test_an_api_key_with_a_line_break_is_refused_naming_the_config_key(void)
{
    char *error = creation_error(nlt_format(
        "{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"credentials\": {\"X\": \"k\\nInjected: 1\"}, \"document\": {"
        "\"openapi\": \"3.1.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"paths\": {},"
        "\"components\": {\"securitySchemes\": {\"X\": {\"type\": \"apiKey\", \"in\": \"header\", \"name\": \"X-Key\"}}}}}}"));
    CHECK_MSG(error && strstr(error, "config key 'openapi' credentials 'X' holds an LF") && !strstr(error, "Authorization"),
              "%s", error ? error : "(accepted)");
    nl_free(error);
}

static void test_cookies_encode_commas_and_path_keys_keep_question_marks(void)
{
    static const char *document =
        "{\"openapi\": \"3.1.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, %s \"paths\": {"
        " \"/echo/q?x=1#f\": {\"get\": {\"operationId\": \"q\", \"parameters\": ["
        "  {\"name\": \"sid\", \"in\": \"cookie\", \"schema\": {\"type\": \"string\"}},"
        "  {\"name\": \"list\", \"in\": \"cookie\", \"explode\": false, \"schema\": {\"type\": \"array\"}}]}}}}";
    char *servers = nlt_format("\"servers\": [{\"url\": \"%s\"}],", base_url());
    char *relative = nlt_format(document, "");
    char *absolute = nlt_format(document, servers);
    nl_client *c = client_with_config(nlt_format("{\"baseURL\": \"%s\", \"openapi\": {\"document\": %s}}", base_url(), relative));
    json_t *r = call_json(c, "q", "{\"params\": {\"sid\": \"a,b;c d\", \"list\": [\"x,y\", \"z\"]}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/q%3Fx=1%23f");
    CHECK_STR_EQ(jpath_str(r, "value.query"), "");
    CHECK_STR_EQ(jpath_str(r, "value.headers.cookie"), "sid=a%2Cb%3Bc%20d; list=x%2Cy,z");
    json_decref(r);
    nl_client_free(c);

    /* Without baseURL the absolute server is the base: the path key stays a path there too. */
    c = client_with_config(nlt_format("{\"openapi\": {\"document\": %s}}", absolute));
    r = call_json(c, "q", NULL);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/q%3Fx=1%23f");
    CHECK_STR_EQ(jpath_str(r, "value.query"), "");
    json_decref(r);
    nl_client_free(c);
    free(absolute);
    free(relative);
    free(servers);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_an_alias_bomb_of_long_strings_is_refused_by_its_size),
        NLT_TEST(test_failure_messages_quote_values_clipped),
        NLT_TEST(test_patterns_match_in_linear_time_in_requests_and_responses),
        NLT_TEST(test_anyof_ref_chains_validate_in_linear_time),
        NLT_TEST(test_an_api_key_with_a_line_break_is_refused_naming_the_config_key),
        NLT_TEST(test_cookies_encode_commas_and_path_keys_keep_question_marks),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
