/*
 * test_requests.c — requests, results and error kinds of the Netlayer C ABI,
 * against the loopback test server (run through Tests/server/with_server.py).
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <strings.h>

/* ---- basic GET and the result document ------------------------------------- */

static void test_get_json_returns_value_headers_and_metadata(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\"}");
    json_t *headers = json_object_get(r, "headers");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    CHECK(json_is_object(headers));
    CHECK_MSG(json_is_string(json_object_get(headers, "content-type")),
              "headers must have lower-case \"content-type\"");
    CHECK(jpath_str(r, "headers.content-type") != NULL &&
          strstr(jpath_str(r, "headers.content-type"), "application/json") != NULL);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
    CHECK(json_is_number(jpath(r, "timing.totalMs")));
    CHECK(jpath_num(r, "timing.totalMs", -1) >= 0);
    CHECK(json_is_false(json_object_get(r, "fromCache")));
    CHECK(json_object_get(r, "error") == NULL || json_is_null(json_object_get(r, "error")));
    json_decref(r);
    nl_client_free(c);
}

static void test_path_joins_base_url_with_one_slash(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"/json\"}");
    char *base;
    size_t n;
    nl_client *c2;
    char *config;
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    json_decref(r);
    nl_client_free(c);

    /* baseURL without a trailing slash, path without a leading one */
    base = nlt_format("%s", base_url());
    REQUIRE(base != NULL);
    n = strlen(base);
    if (n > 0 && base[n - 1] == '/')
        base[n - 1] = '\0';
    config = nlt_format("{\"baseURL\": \"%s/echo\"}", base);
    REQUIRE(config != NULL);
    c2 = nl_client_new(config, NULL);
    REQUIRE(c2 != NULL);
    r = request_json(c2, "{\"path\": \"sub/x\"}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/sub/x");
    json_decref(r);
    nl_client_free(c2);
    free(config);
    free(base);
}

static void test_keypath_indexes_arrays(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\", \"response\": {\"keyPath\": \"results.1.name\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value"), "b");
    json_decref(r);
    nl_client_free(c);
}

static void test_keypath_walks_nested_objects(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\", \"response\": {\"keyPath\": \"data.nested.value\"}}");
    CHECK_OK(r);
    CHECK(json_is_number(json_object_get(r, "value")));
    CHECK_INT_EQ(jpath_num(r, "value", -1), 42);
    json_decref(r);
    nl_client_free(c);
}

static void test_missing_keypath_is_parsing_error_naming_the_key(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\", \"response\": {\"keyPath\": \"data.nosuchkey.value\"}}");
    CHECK_KIND(r, "parsing");
    CHECK_MSG(strstr(error_message(r), "nosuchkey") != NULL, "message: %s", error_message(r));
    json_decref(r);
    nl_client_free(c);
}

/* ---- query, headers, bodies ------------------------------------------------- */

static int args_equal(json_t *r, const char *name, const char *v1, const char *v2)
{
    json_t *a = jpath(r, "value.args");
    json_t *list = json_object_get(a, name);
    size_t want = v2 ? 2 : 1;
    if (!json_is_array(list) || json_array_size(list) != want)
        return 0;
    if (strcmp(json_string_value(json_array_get(list, 0)) ? json_string_value(json_array_get(list, 0)) : "", v1) != 0)
        return 0;
    if (v2 && strcmp(json_string_value(json_array_get(list, 1)) ? json_string_value(json_array_get(list, 1)) : "", v2) != 0)
        return 0;
    return 1;
}

static void test_query_merges_over_config_and_percent_encodes(void)
{
    nl_client *c = client_for("\"query\": {\"api_key\": \"k\", \"lang\": \"en\"}");
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"query\": {\"lang\": \"fr\", \"ids\": [1, 2], \"adult\": false,"
        " \"q\": \"a b&c\"}}");
    const char *raw;
    CHECK_OK(r);
    CHECK(args_equal(r, "api_key", "k", NULL));
    CHECK_MSG(args_equal(r, "lang", "fr", NULL), "endpoint query must win over the config's");
    CHECK_MSG(args_equal(r, "ids", "1", "2"), "arrays repeat the key");
    CHECK(args_equal(r, "adult", "false", NULL));
    CHECK(args_equal(r, "q", "a b&c", NULL));
    raw = jpath_str(r, "value.query");
    CHECK(raw != NULL);
    CHECK_MSG(raw && strstr(raw, "a%20b") != NULL, "raw query: %s", raw ? raw : "(null)");
    CHECK_MSG(raw && strstr(raw, "%26c") != NULL, "raw query: %s", raw ? raw : "(null)");
    CHECK_MSG(raw && strchr(raw, '+') == NULL, "space must be %%20, not '+': %s", raw ? raw : "(null)");
    if (!result_ok(r))
        nlt_dump("result", r);
    json_decref(r);
    nl_client_free(c);
}

static void test_headers_merge_case_insensitively_endpoint_wins(void)
{
    nl_client *c = client_for("\"headers\": {\"X-A\": \"1\", \"X-B\": \"config\"}");
    json_t *r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"x-b\": \"endpoint\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-a"), "1");
    /* the server joins repeated headers with ", ", so "config, endpoint" would fail here */
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-b"), "endpoint");
    json_decref(r);
    nl_client_free(c);
}

static void test_json_body_is_posted_with_json_content_type(void)
{
    nl_client *c = client_for(NULL);
    const char *body = "{\"title\": \"Dune\", \"n\": [1, 2.5, {\"x\": null}], \"u\": \"\\u00e9\\u2603\", \"t\": true}";
    json_t *r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"body\": %s}", body);
    json_t *expected = json_loads(body, 0, NULL);
    json_t *got = NULL;
    const char *sent = jpath_str(r, "value.body");
    const char *ct = jpath_str(r, "value.headers.content-type");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.method"), "POST");
    CHECK_MSG(ct && strncmp(ct, "application/json", 16) == 0, "content-type: %s", ct ? ct : "(null)");
    CHECK(sent != NULL);
    if (sent)
        got = json_loads(sent, 0, NULL);
    CHECK_MSG(got != NULL && json_equal(got, expected), "server got body: %s", sent ? sent : "(null)");
    json_decref(got);
    json_decref(expected);
    json_decref(r);
    nl_client_free(c);
}

static void test_form_body_is_url_encoded(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"form\","
        " \"body\": {\"a\": \"1 2\", \"b\": [\"x\", \"y\"], \"c\": true}}");
    const char *ct = jpath_str(r, "value.headers.content-type");
    CHECK_OK(r);
    CHECK_MSG(ct && strncmp(ct, "application/x-www-form-urlencoded", 33) == 0, "content-type: %s",
              ct ? ct : "(null)");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "a=1%202&b=x&b=y&c=true");
    json_decref(r);
    nl_client_free(c);
}

/* Binary bodies from memory: base64 in the document, sent as the bytes it encodes. */
static void test_base64_bodies_are_sent_as_their_bytes(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"reflect\", \"method\": \"POST\", \"bodyEncoding\": \"base64\","
                                " \"body\": \"AAH/gA==\", \"response\": {\"decoder\": \"base64\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value"), "AAH/gA==");
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"PUT\", \"bodyEncoding\": \"base64\", \"body\": \"/4D+\"}");
    CHECK_STR_EQ(jpath_str(r, "value.headers.content-type"), "application/octet-stream");
    CHECK_INT_EQ(jpath_num(r, "value.bodyLength", -1), 3);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"base64\", \"body\": \"aGk=\","
                        " \"headers\": {\"Content-Type\": \"application/x-protobuf\"}}");
    CHECK_STR_EQ(jpath_str(r, "value.headers.content-type"), "application/x-protobuf");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "hi");
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"base64\", \"body\": \"a*b\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK(strstr(error_message(r), "base64") != NULL && strstr(error_message(r), "body") != NULL);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"base64\", \"body\": [1]}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    nl_client_free(c);
}

static void test_text_body_is_sent_verbatim_as_text_plain(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"text\", \"body\": \"plain text\"}");
    const char *ct = jpath_str(r, "value.headers.content-type");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.body"), "plain text");
    CHECK_INT_EQ(jpath_num(r, "value.bodyLength", -1), 10);
    CHECK_MSG(ct && strcasecmp(ct, "text/plain; charset=utf-8") == 0, "content-type: %s",
              ct ? ct : "(null)");
    json_decref(r);
    nl_client_free(c);
}

static void test_methods_are_sent_as_given(void)
{
    static const char *methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
                                    "PROPFIND", "PURGE", "REPORT", "MKCOL", "M-SEARCH"};
    static const char *not_tokens[] = {"", "GET X", "GE\\r\\nT", "(GET)", "G\\u00e9T", "GET/1"};
    nl_client *c = client_for(NULL);
    json_t *r;
    size_t i;
    for (i = 0; i < NLT_COUNT(not_tokens); i++) {
        r = request_json(c, "{\"path\": \"echo\", \"method\": \"%s\"}", not_tokens[i]);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r) ? error_message(r) : "", "'method'") != NULL, "%s", error_message(r));
        json_decref(r);
    }
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"propfind\", \"body\": {\"depth\": 1}}");
    CHECK_OK(r);  /* only the well-known names are case-insensitive; a body goes with any other method */
    CHECK_STR_EQ(jpath_str(r, "value.method"), "propfind");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "{\"depth\":1}");
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"delete\"}");
    CHECK_STR_EQ(jpath_str(r, "value.method"), "DELETE");
    json_decref(r);
    for (i = 0; i < NLT_COUNT(methods); i++) {
        r = request_json(c, "{\"path\": \"echo\", \"method\": \"%s\"}", methods[i]);
        CHECK_OK(r);
        CHECK_MSG(jpath_str(r, "value.method") && strcmp(jpath_str(r, "value.method"), methods[i]) == 0,
                  "sent %s, server saw %s", methods[i],
                  jpath_str(r, "value.method") ? jpath_str(r, "value.method") : "(null)");
        json_decref(r);
    }
    nl_client_free(c);
}

static void test_head_request_has_null_value(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\", \"method\": \"HEAD\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_MSG(json_is_null(json_object_get(r, "value")), "value must be present and null");
    json_decref(r);
    nl_client_free(c);
}

/* ---- status handling --------------------------------------------------------- */

static void test_404_is_status_error_with_status_and_body(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"status/404\"}");
    const char *body = jpath_str(r, "error.body");
    CHECK(!result_ok(r));
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 404);
    CHECK_INT_EQ(jpath_num(r, "error.status", -1), 404);
    CHECK_MSG(body && strstr(body, "status 404") != NULL, "error.body: %s", body ? body : "(null)");
    CHECK(strlen(error_message(r)) > 0);
    json_decref(r);
    nl_client_free(c);
}

static void test_endpoint_acceptable_status_can_accept_404(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"status/404\", \"acceptableStatus\": [[200, 299], 404]}");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 404);
    CHECK_STR_EQ(jpath_str(r, "value.detail"), "status 404");
    json_decref(r);
    /* and the same client still rejects 404 without the override */
    r = request_json(c, "{\"path\": \"status/404\"}");
    CHECK_KIND(r, "status");
    json_decref(r);
    nl_client_free(c);
}

static void test_500_is_status_error(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"status/500\"}");
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 500);
    CHECK_INT_EQ(jpath_num(r, "error.status", -1), 500);
    json_decref(r);
    nl_client_free(c);
}

static void test_204_is_ok_with_null_value(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"status/204\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 204);
    CHECK_MSG(json_is_null(json_object_get(r, "value")), "value must be present and null");
    json_decref(r);
    nl_client_free(c);
}

/* ---- decoders ------------------------------------------------------------------ */

static void test_empty_body_with_json_decoder_is_no_response(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"empty\", \"response\": {\"decoder\": \"json\"}}");
    CHECK_KIND(r, "no_response");
    json_decref(r);
    nl_client_free(c);
}

static void test_body_that_is_not_json_is_parsing_error(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"notjson\"}");
    CHECK_KIND(r, "parsing");
    CHECK_INT_EQ(result_status(r), 200);
    json_decref(r);
    nl_client_free(c);
}

/* The default decoder follows Content-Type (contract section 8): JSON for
 * application/json and +json, text for text/ and other textual types, base64 for the
 * rest; the result names its choice in "decoder". An explicit decoder wins. */
static void test_the_default_decoder_follows_the_content_type(void)
{
    static const struct { const char *type, *body, *decoder, *value; } cases[] = {
        {"text/plain", "hello", "text", "hello"},
        {"text/html; charset=utf-8", "<p>", "text", "<p>"},
        {"application/xml", "<a/>", "text", "<a/>"},
        {"image/svg+xml", "<svg/>", "text", "<svg/>"},
        {"application/x-www-form-urlencoded", "a=1", "text", "a=1"},
        {"application/octet-stream", "hi", "base64", "aGk="},
        {NULL, "hi", "base64", "aGk="},
        {"application/json", "\"s\"", "json", "s"},
        {"Application/Problem+JSON; charset=utf-8", "\"p\"", "json", "p"},
    };
    nl_client *c = client_for(NULL);
    json_t *r, *endpoint, *query;
    char *text;
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        query = json_pack("{s:s}", "body", cases[i].body);
        if (cases[i].type) json_object_set_new(query, "type", json_string(cases[i].type));
        endpoint = json_pack("{s:s, s:o}", "path", "typed", "query", query);
        text = json_dumps(endpoint, JSON_COMPACT);
        r = request_doc(c, text);
        CHECK_OK(r);
        CHECK_MSG(jpath_str(r, "decoder") && strcmp(jpath_str(r, "decoder"), cases[i].decoder) == 0,
                  "%s: decoder %s, expected %s", text, jpath_str(r, "decoder"), cases[i].decoder);
        CHECK_MSG(jpath_str(r, "value") && strcmp(jpath_str(r, "value"), cases[i].value) == 0,
                  "%s: value %s, expected %s", text, jpath_str(r, "value"), cases[i].value);
        json_decref(r);
        free(text);
        json_decref(endpoint);
    }
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.id", -1), 1);
    CHECK_STR_EQ(jpath_str(r, "decoder"), "json");
    json_decref(r);
    r = request_json(c, "{\"path\": \"invalid-utf8\"}");  /* text/plain that is not UTF-8 */
    CHECK_STR_EQ(jpath_str(r, "decoder"), "base64");
    CHECK_STR_EQ(jpath_str(r, "value"), "YWL//mNk");
    json_decref(r);
    r = request_json(c, "{\"path\": \"empty\"}");
    CHECK_OK(r);
    CHECK(json_is_null(json_object_get(r, "value")));
    CHECK_STR_EQ(jpath_str(r, "decoder"), "none");
    json_decref(r);
    r = request_json(c, "{\"path\": \"notjson\"}");  /* declared JSON: still a parsing error */
    CHECK_KIND(r, "parsing");
    json_decref(r);
    r = request_json(c, "{\"path\": \"text\", \"response\": {\"decoder\": \"json\"}}");
    CHECK_KIND(r, "parsing");
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\", \"response\": {\"decoder\": \"text\"}}");
    CHECK_OK(r);
    CHECK(json_is_string(json_object_get(r, "value")));
    CHECK_STR_EQ(jpath_str(r, "decoder"), "text"); /* named, though the endpoint chose it */
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\", \"response\": {\"keyPath\": \"title\"}}");
    CHECK_STR_EQ(jpath_str(r, "value"), "Dune");
    json_decref(r);
    nl_client_free(c);
}

/* Timing from libcurl's own marks: DNS, connect, TLS, first byte, total, redirects. */
static void test_timing_breaks_the_total_down(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"delay/30\"}");
    double dns, connect, tls, first, total;
    CHECK_OK(r);
    dns = jpath_num(r, "timing.dnsMs", -1);
    connect = jpath_num(r, "timing.connectMs", -1);
    tls = jpath_num(r, "timing.tlsMs", -1);
    first = jpath_num(r, "timing.firstByteMs", -1);
    total = jpath_num(r, "timing.totalMs", -1);
    CHECK_MSG(dns >= 0 && connect >= dns && tls == 0 && first >= 30 && total >= first,
              "dns %.3f connect %.3f tls %.3f first %.3f total %.3f", dns, connect, tls, first, total);
    CHECK(jpath_num(r, "timing.redirectMs", -1) == 0);
    json_decref(r);

    r = request_json(c, "{\"path\": \"redirect/2\"}");
    CHECK_OK(r);
    CHECK_MSG(jpath_num(r, "timing.redirectMs", 0) > 0 &&
                  jpath_num(r, "timing.totalMs", 0) >= jpath_num(r, "timing.redirectMs", 0),
              "redirect %.3f total %.3f", jpath_num(r, "timing.redirectMs", 0), jpath_num(r, "timing.totalMs", 0));
    json_decref(r);

    r = request_json(c, "{\"path\": \"status/404\"}");  /* failures that got a response carry it too */
    CHECK_KIND(r, "status");
    CHECK(jpath_num(r, "timing.firstByteMs", -1) >= 0 && json_object_get(json_object_get(r, "timing"), "dnsMs") != NULL);
    json_decref(r);
    nl_client_free(c);
}

static void test_text_decoder_returns_the_body_as_string(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"text\", \"response\": {\"decoder\": \"text\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value"), "hello, world");
    json_decref(r);
    nl_client_free(c);
}

static void test_text_decoder_rejects_invalid_utf8(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"invalid-utf8\", \"response\": {\"decoder\": \"text\"}}");
    CHECK_KIND(r, "parsing");
    json_decref(r);
    nl_client_free(c);
}

static void test_base64_decoder_encodes_raw_bytes(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"bytes/3\", \"response\": {\"decoder\": \"base64\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value"), "AAEC");
    json_decref(r);
    nl_client_free(c);
}

static void test_none_decoder_gives_null_value(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\", \"response\": {\"decoder\": \"none\"}}");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_MSG(json_is_null(json_object_get(r, "value")), "value must be present and null");
    json_decref(r);
    nl_client_free(c);
}

/* ---- transport errors ----------------------------------------------------------- */

static void test_connection_refused_is_not_connected(void)
{
    char *err = NULL;
    nl_client *c = nl_client_new("{\"baseURL\": \"http://127.0.0.1:1/\"}", &err);
    json_t *r;
    REQUIRE_MSG(c != NULL, "nl_client_new: %s", err ? err : "(null)");
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "not_connected");
    json_decref(r);
    nl_client_free(c);
}

static void test_endpoint_timeout_gives_timeout_kind_quickly(void)
{
    nl_client *c = client_for(NULL);
    double t0 = now_ms(), elapsed;
    json_t *r = request_json(c, "{\"path\": \"delay/2000\", \"timeout\": 0.3}");
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "timeout");
    CHECK_MSG(elapsed < 1500.0, "took %.0f ms", elapsed);
    json_decref(r);
    nl_client_free(c);
}

/* ---- redirects and URLs --------------------------------------------------------- */

static void test_redirects_are_followed_by_default(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"redirect/2\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    json_decref(r);
    nl_client_free(c);
}

static void test_redirect_is_status_error_when_not_followed(void)
{
    nl_client *c = client_for("\"followRedirects\": false");
    json_t *r = request_json(c, "{\"path\": \"redirect/2\"}");
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 302);
    json_decref(r);
    nl_client_free(c);
}

static void test_max_redirects_limits_the_chain(void)
{
    nl_client *c = client_for("\"maxRedirects\": 1");
    json_t *r = request_json(c, "{\"path\": \"redirect/3\"}");
    CHECK(!result_ok(r));
    nlt_note("maxRedirects 1 on /redirect/3 -> ok=%d status=%lld kind=\"%s\" message=\"%s\"",
             result_ok(r), result_status(r), error_kind(r), error_message(r));
    json_decref(r);
    nl_client_free(c);
}

static void test_full_path_to_the_same_server_works(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"%sjson\", \"isFullPath\": true}", base_url());
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    json_decref(r);
    nl_client_free(c);
}

static void test_path_may_not_change_the_host(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"//evil.example/x\"}");
    CHECK_KIND(r, "url_generation");
    json_decref(r);
    r = request_json(c, "{\"path\": \"http://evil.example/x\"}");
    CHECK_KIND(r, "url_generation");
    json_decref(r);
    nl_client_free(c);
}

/* ---- connections ----------------------------------------------------------------- */

static void test_sequential_requests_reuse_keep_alive_connections(void)
{
    nl_client *c = client_for(NULL);
    json_t *r;
    int i, failures = 0;
    double connections;
    long long first_conn, second_conn;

    r = request_json(c, "{\"path\": \"stats/reset\"}");
    CHECK_OK(r);
    json_decref(r);
    for (i = 0; i < 200; i++) {
        r = request_json(c, "{\"path\": \"json\"}");
        if (!result_ok(r)) {
            if (failures++ == 0)
                nlt_dump("failed request", r);
        }
        json_decref(r);
    }
    CHECK_INT_EQ(failures, 0);
    r = request_json(c, "{\"path\": \"stats\"}");
    CHECK_OK(r);
    connections = jpath_num(r, "value.connections", -1);
    CHECK_MSG(connections >= 0 && connections <= 2, "200 requests used %.0f connections", connections);
    json_decref(r);

    r = request_json(c, "{\"path\": \"echo\"}");
    first_conn = (long long)jpath_num(r, "value.connection", -1);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\"}");
    second_conn = (long long)jpath_num(r, "value.connection", -2);
    json_decref(r);
    CHECK_INT_EQ(second_conn, first_conn);
    nl_client_free(c);
}

/* A client remembers the requests built from the documents it saw last (by their
 * bytes; kept when a document comes a second time). 300 distinct documents, more
 * than it keeps, first each three times in a row, then again after others took
 * its place or stayed: every result must still be its own document's. */
static void test_repeated_documents_give_their_own_results(void)
{
    nl_client *c = client_for(NULL);
    int round, i, failures = 0;
    for (round = 0; round < 4; round++) {
        for (i = 0; i < (round == 0 ? 900 : 300); i++) {
            int k = round == 0 ? i / 3 : (i * 37 + round * 11) % 300;
            json_t *r = request_json(c, "{\"path\": \"echo/d%d\", \"query\": {\"k\": %d},"
                                        " \"headers\": {\"X-Doc\": \"%d\"}}", k, k * 3, k);
            char path[32], query[32], header[16];
            const char *got_header;
            snprintf(path, sizeof path, "/echo/d%d", k);
            snprintf(query, sizeof query, "k=%d", k * 3);
            snprintf(header, sizeof header, "%d", k);
            got_header = jpath_str(r, "value.headers.x-doc");
            if (!result_ok(r) || jpath_str(r, "value.path") == NULL || strcmp(jpath_str(r, "value.path"), path) != 0 ||
                jpath_str(r, "value.query") == NULL || strcmp(jpath_str(r, "value.query"), query) != 0 ||
                got_header == NULL || strcmp(got_header, header) != 0) {
                if (failures++ == 0)
                    nlt_dump("result of another document", r);
            }
            json_decref(r);
        }
    }
    CHECK_INT_EQ(failures, 0);
    nl_client_free(c);
}

/* ---- misc ------------------------------------------------------------------------ */

static void test_version_matches_the_header(void)
{
    CHECK(nl_version() != NULL);
    CHECK_STR_EQ(nl_version(), NL_VERSION_STRING);
    CHECK_INT_EQ(nl_abi_version(), NL_ABI_VERSION);
}

static void test_repeated_response_headers_are_joined(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"headers-multi\"}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.x-multi"), "a, b");
    json_decref(r);
    nl_client_free(c);
}

/* Header values that are not UTF-8 arrive as ISO-8859-1 text (one code point per
 * byte) with their names in latin1Headers, so the exact bytes come back; UTF-8 values
 * stay as they are; repeated fields are joined as bytes first. */
static void test_header_values_that_are_not_utf8_arrive_without_loss(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"header-bytes\"}");
    json_t *latin1;
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.x-latin1"), "caf\xc3\xa9 \xc3\xbf");  /* U+00E9, U+00FF */
    CHECK_STR_EQ(jpath_str(r, "headers.x-utf8"), "caf\xc3\xa9");
    CHECK_STR_EQ(jpath_str(r, "headers.x-mixed"), "a, \xc3\xa9");
    CHECK_STR_EQ(jpath_str(r, "headers.x-ctl-latin1"), "\x04\xc2\x88");  /* U+0004, U+0088 */
    latin1 = json_object_get(r, "latin1Headers");
    REQUIRE(json_is_array(latin1));
    CHECK_INT_EQ(json_array_size(latin1), 3);
    CHECK_STR_EQ(json_string_value(json_array_get(latin1, 0)), "x-latin1");
    CHECK_STR_EQ(json_string_value(json_array_get(latin1, 1)), "x-mixed");
    CHECK_STR_EQ(json_string_value(json_array_get(latin1, 2)), "x-ctl-latin1");
    json_decref(r);

    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK(json_object_get(r, "latin1Headers") == NULL);
    json_decref(r);
    nl_client_free(c);
}

static void test_config_user_agent_is_sent(void)
{
    nl_client *c = client_for("\"userAgent\": \"ua-test/1\"");
    json_t *r = request_json(c, "{\"path\": \"echo\"}");
    char *want;
    int i;
    CHECK_OK(r);
    /* exactly once: a second header line would be joined into the value with ", " */
    CHECK_STR_EQ(jpath_str(r, "value.headers.user-agent"), "ua-test/1");
    json_decref(r);
    /* an endpoint's own User-Agent header wins, alone */
    r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"user-agent\": \"mine/2\"}}");
    CHECK_STR_EQ(jpath_str(r, "value.headers.user-agent"), "mine/2");
    json_decref(r);
    nl_client_free(c);

    /* the default, on every request of a client (repeated ones too) */
    c = client_for(NULL);
    want = nlt_format("netlayer/%s", nl_version());
    REQUIRE(want != NULL);
    for (i = 0; i < 3; i++) {
        r = request_json(c, "{\"path\": \"echo\"}");
        CHECK_STR_EQ(jpath_str(r, "value.headers.user-agent"), want);
        json_decref(r);
    }
    free(want);
    nl_client_free(c);
}

static void test_named_endpoint_call_fills_path_params(void)
{
    nl_client *c = client_for(
        "\"endpoints\": {\"movie\": {\"path\": \"movies/{id}\", \"response\": {\"keyPath\": \"data\"}}}");
    char *text = nl_call(c, "movie", "{\"params\": {\"id\": 2}}");
    json_t *r = nlt_parse(text, "nl_call");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Arrival");
    json_decref(r);
    nl_free(text);

    text = nl_call(c, "movie", "{\"params\": {\"id\": 9}}");
    r = nlt_parse(text, "nl_call");
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 404);
    json_decref(r);
    nl_free(text);

    text = nl_call(c, "nosuchendpoint", NULL);
    r = nlt_parse(text, "nl_call");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "nosuchendpoint") != NULL, "message: %s", error_message(r));
    json_decref(r);
    nl_free(text);
    nl_client_free(c);
}

/* A failure document carries at most 64 KiB of the body, cut before a UTF-8 sequence
   that would not fit, and says that it was cut and how large the body was; a small
   body comes whole, without those keys. */
/* Issue: numbers beyond 64 bits or a Double's digits were rounded. They pass through a
 * request body, a response value (whole and under a keyPath), a query and a path
 * parameter with their exact text, and the result says "bigIntegers" for parsers that
 * stop at 64 bits (jansson would refuse this document, so it is checked as text). */
static void test_numbers_keep_their_exact_text_both_ways(void)
{
    static const char *const numbers[] = {
        "18446744073709551616", "-99999999999999999999999", "3.14159265358979323846264338327950288",
        "1e-400", "0.30000000000000004",
    };
    nl_client *c = client_for(NULL);
    char *text;
    size_t i;

    text = nl_request(c, "{\"path\": \"reflect\", \"method\": \"POST\", \"body\": {\"a\": 18446744073709551616, "
                         "\"b\": -99999999999999999999999, \"c\": 3.14159265358979323846264338327950288, "
                         "\"e\": 1e-400, \"f\": 0.30000000000000004, \"g\": 1.5}}");
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "\"ok\":true") != NULL, "%s", text);
    for (i = 0; i < NLT_COUNT(numbers); i++)
        CHECK_MSG(strstr(text, numbers[i]) != NULL, "%s is not in %s", numbers[i], text);
    CHECK_MSG(strstr(text, "\"g\":1.5") != NULL, "%s", text);
    CHECK_MSG(strstr(text, "\"bigIntegers\":true") != NULL, "%s", text);
    nl_free(text);

    text = nl_request(c, "{\"path\": \"reflect\", \"method\": \"POST\", \"body\": {\"n\": [1, 18446744073709551616]},"
                         " \"response\": {\"keyPath\": \"n.1\"}}");
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "\"value\":18446744073709551616,\"bigIntegers\":true") != NULL, "%s", text);
    nl_free(text);

    text = nl_request(c, "{\"path\": \"reflect\", \"method\": \"POST\", \"body\": {\"n\": 3.14159265358979323846}}");
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "3.14159265358979323846") != NULL, "%s", text);
    CHECK_MSG(strstr(text, "bigIntegers") == NULL, "only integers are marked: %s", text);
    nl_free(text);

    nl_client_free(c);
    c = client_for("\"endpoints\": {\"item\": {\"path\": \"echo/{id}\"}}");
    text = nl_call(c, "item", "{\"params\": {\"id\": 18446744073709551616},"
                              " \"query\": {\"q\": 123456789012345678901234567890}}");
    REQUIRE(text != NULL);
    CHECK_MSG(strstr(text, "/echo/18446744073709551616") != NULL, "%s", text);
    CHECK_MSG(strstr(text, "q=123456789012345678901234567890") != NULL, "%s", text);
    nl_free(text);
    nl_client_free(c);
}

static void test_failure_documents_carry_at_most_64_kib_of_the_body(void)
{
    enum { HEAD = 65535, TAIL = 40000 };
    nl_client *c = client_for(NULL);
    json_t *endpoint, *r, *err;
    char *body = malloc(HEAD + 2 + TAIL + 1);
    char *text;
    const char *got;
    size_t i;
    REQUIRE(body != NULL);
    memset(body, 'a', HEAD);
    body[HEAD] = (char)0xC3;     /* "é" straddles byte 65536 */
    body[HEAD + 1] = (char)0xA9;
    memset(body + HEAD + 2, 'b', TAIL);
    body[HEAD + 2 + TAIL] = 0;
    endpoint = json_pack("{s:s, s:s, s:s, s:s, s:[[i,i]]}", "path", "reflect", "method", "POST",
                         "bodyEncoding", "text", "body", body, "acceptableStatus", 201, 201);
    text = json_dumps(endpoint, JSON_COMPACT);
    r = request_doc(c, text);
    CHECK_KIND(r, "status");
    err = json_object_get(r, "error");
    got = jpath_str(err, "body");
    REQUIRE(got != NULL);
    CHECK_INT_EQ(strlen(got), HEAD);
    for (i = 0; got[i]; i++)
        if (got[i] != 'a') { CHECK_MSG(0, "byte %d of the carried body is %d", (int)i, got[i]); break; }
    CHECK(json_is_true(json_object_get(err, "bodyTruncated")));
    CHECK_INT_EQ(jpath_num(err, "bodyBytes", -1), HEAD + 2 + TAIL);
    json_decref(r);
    free(text);
    json_decref(endpoint);

    r = request_json(c, "{\"path\": \"status/404\"}");
    CHECK_KIND(r, "status");
    err = json_object_get(r, "error");
    CHECK(json_object_get(err, "bodyTruncated") == NULL);
    CHECK(json_object_get(err, "bodyBytes") == NULL);
    CHECK(strstr(jpath_str(err, "body"), "status 404") != NULL);
    json_decref(r);
    free(body);
    nl_client_free(c);
}

/* One easy handle carries these requests one after another; whichever way the URL
 * reached libcurl for the one before (its parts under a known origin, or the whole
 * string), the server sees each request target exactly as built: a query cleared, a
 * percent-encoding's upper-case hex kept, a dot segment resolved as a URL parser does,
 * another origin's host, and back. */
static void test_each_request_target_reaches_the_server_as_built_whatever_came_before(void)
{
    static const struct {
        const char *endpoint;
        const char *path;
        const char *query;
        int other_host;
    } cases[] = {
        {"{\"path\": \"echo/a\", \"query\": {\"x\": \"1\"}}", "/echo/a", "x=1", 0},
        {"{\"path\": \"echo/b\"}", "/echo/b", "", 0},
        {"{\"path\": \"echo/c d\", \"query\": {\"k\": \"a:b\"}}", "/echo/c%20d", "k=a%3Ab", 0},
        {"{\"path\": \"echo/e\", \"query\": {\"k\": \"v\"}}", "/echo/e", "k=v", 0},
        {"{\"path\": \"http://localhost:%d/echo/f?y=2\", \"isFullPath\": true}", "/echo/f", "y=2", 1},
        {"{\"path\": \"echo/g\"}", "/echo/g", "", 0},
        {"{\"path\": \"echo/.well-known/h\"}", "/echo/.well-known/h", "", 0},
        {"{\"path\": \"echo/i/./j\"}", "/echo/i/j", "", 0},
        {"{\"path\": \"echo/k\", \"query\": {\"q\": \"%%41\"}}", "/echo/k", "q=%2541", 0},
        {"{\"path\": \"echo/l\"}", "/echo/l", "", 0},
    };
    int port = atoi(strrchr(base_url(), ':') + 1);
    nl_client *c = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        char *endpoint = nlt_format(cases[i].endpoint, port);
        json_t *r = request_doc(c, endpoint);
        const char *host = jpath_str(r, "value.headers.host");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.path"), cases[i].path);
        CHECK_STR_EQ(jpath_str(r, "value.query"), cases[i].query);
        CHECK_MSG(host != NULL && strncmp(host, cases[i].other_host ? "localhost:" : "127.0.0.1:", 10) == 0,
                  "case %zu: Host %s", i, host ? host : "(none)");
        json_decref(r);
        free(endpoint);
    }
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_each_request_target_reaches_the_server_as_built_whatever_came_before),
        NLT_TEST(test_version_matches_the_header),
        NLT_TEST(test_get_json_returns_value_headers_and_metadata),
        NLT_TEST(test_path_joins_base_url_with_one_slash),
        NLT_TEST(test_keypath_indexes_arrays),
        NLT_TEST(test_keypath_walks_nested_objects),
        NLT_TEST(test_missing_keypath_is_parsing_error_naming_the_key),
        NLT_TEST(test_query_merges_over_config_and_percent_encodes),
        NLT_TEST(test_headers_merge_case_insensitively_endpoint_wins),
        NLT_TEST(test_json_body_is_posted_with_json_content_type),
        NLT_TEST(test_form_body_is_url_encoded),
        NLT_TEST(test_text_body_is_sent_verbatim_as_text_plain),
        NLT_TEST(test_methods_are_sent_as_given),
        NLT_TEST(test_head_request_has_null_value),
        NLT_TEST(test_404_is_status_error_with_status_and_body),
        NLT_TEST(test_endpoint_acceptable_status_can_accept_404),
        NLT_TEST(test_500_is_status_error),
        NLT_TEST(test_204_is_ok_with_null_value),
        NLT_TEST(test_empty_body_with_json_decoder_is_no_response),
        NLT_TEST(test_body_that_is_not_json_is_parsing_error),
        NLT_TEST(test_text_decoder_returns_the_body_as_string),
        NLT_TEST(test_text_decoder_rejects_invalid_utf8),
        NLT_TEST(test_base64_decoder_encodes_raw_bytes),
        NLT_TEST(test_none_decoder_gives_null_value),
        NLT_TEST(test_connection_refused_is_not_connected),
        NLT_TEST(test_endpoint_timeout_gives_timeout_kind_quickly),
        NLT_TEST(test_redirects_are_followed_by_default),
        NLT_TEST(test_redirect_is_status_error_when_not_followed),
        NLT_TEST(test_max_redirects_limits_the_chain),
        NLT_TEST(test_full_path_to_the_same_server_works),
        NLT_TEST(test_path_may_not_change_the_host),
        NLT_TEST(test_sequential_requests_reuse_keep_alive_connections),
        NLT_TEST(test_repeated_documents_give_their_own_results),
        NLT_TEST(test_repeated_response_headers_are_joined),
        NLT_TEST(test_header_values_that_are_not_utf8_arrive_without_loss),
        NLT_TEST(test_config_user_agent_is_sent),
        NLT_TEST(test_named_endpoint_call_fills_path_params),
        NLT_TEST(test_failure_documents_carry_at_most_64_kib_of_the_body),
        NLT_TEST(test_numbers_keep_their_exact_text_both_ways),
        NLT_TEST(test_timing_breaks_the_total_down),
        NLT_TEST(test_base64_bodies_are_sent_as_their_bytes),
        NLT_TEST(test_the_default_decoder_follows_the_content_type),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
