/*
 * test_invalid.c — malformed endpoint and config documents must yield
 * "invalid_request" errors that name the offending key, and never crash.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

/* One malformed endpoint document. `keys` lists substrings separated by '|';
 * the error message must contain at least one of them (NULL: no key check). */
typedef struct bad_case {
    const char *label;
    const char *doc;
    const char *keys;
} bad_case;

static int message_names_key(const char *message, const char *keys)
{
    char buf[256];
    const char *p = keys;
    if (keys == NULL)
        return 1;
    while (*p) {
        size_t n = strcspn(p, "|");
        if (n < sizeof(buf)) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            if (strstr(message, buf) != NULL)
                return 1;
        }
        p += n;
        if (*p == '|')
            p++;
    }
    return 0;
}

/* Checks one result text: ok false, kind invalid_request, message names a key. */
static void check_invalid_text(const char *label, char *text, const char *keys)
{
    json_t *r = nlt_parse(text, label);
    const char *kind, *message;
    if (r == NULL) {
        nl_free(text);
        return;
    }
    kind = error_kind(r);
    message = error_message(r);
    CHECK_MSG(!result_ok(r) && json_is_false(json_object_get(r, "ok")), "[%s] ok must be false: %s",
              label, text);
    CHECK_MSG(strcmp(kind, "invalid_request") == 0, "[%s] kind \"%s\", expected invalid_request: %s",
              label, kind, text);
    CHECK_MSG(strlen(message) > 0, "[%s] empty error message", label);
    CHECK_MSG(message_names_key(message, keys), "[%s] message should name \"%s\": \"%s\"", label,
              keys ? keys : "", message);
    json_decref(r);
    nl_free(text);
}

static nl_client *shared_client(void)
{
    return client_for(NULL);
}

/* ---- endpoint documents ------------------------------------------------------- */

static const bad_case bad_endpoints[] = {
    {"not json", "not json", NULL},
    {"empty string", "", NULL},
    {"array instead of object", "[]", NULL},
    {"number instead of object", "42", NULL},
    {"string instead of object", "\"json\"", NULL},
    {"path is a number", "{\"path\": 5}", "path"},
    {"method that is not a token", "{\"path\": \"json\", \"method\": \"FE TCH\"}", "method"},
    {"method is a number", "{\"path\": \"json\", \"method\": 1}", "method"},
    {"unknown key", "{\"pathh\": \"x\"}", "pathh"},
    {"unknown key next to valid ones", "{\"path\": \"json\", \"quer\": {}}", "quer"},
    {"headers is an array", "{\"path\": \"json\", \"headers\": []}", "headers"},
    {"header value is a number", "{\"path\": \"json\", \"headers\": {\"X-Num\": 1}}", "X-Num|headers"},
    {"header value with CRLF", "{\"path\": \"json\", \"headers\": {\"X-Evil\": \"a\\r\\nInjected: 1\"}}",
     "X-Evil|headers"},
    {"header value with LF", "{\"path\": \"json\", \"headers\": {\"X-Lf\": \"a\\nb\"}}", "X-Lf|headers"},
    {"header name with a space", "{\"path\": \"json\", \"headers\": {\"Bad Name\": \"v\"}}",
     "Bad Name|headers"},
    {"header name with a colon", "{\"path\": \"json\", \"headers\": {\"Bad:Name\": \"v\"}}",
     "Bad:Name|headers"},
    {"header name empty", "{\"path\": \"json\", \"headers\": {\"\": \"v\"}}", "header"},
    {"header names differing only in case", "{\"path\": \"json\", \"headers\": {\"X-A\": \"1\", \"x-a\": \"2\"}}",
     "x-a|headers|twice"},
    {"NUL in header value", "{\"path\": \"json\", \"headers\": {\"X-Nul\": \"a\\u0000b\"}}",
     "X-Nul|headers"},
    {"negative timeout", "{\"path\": \"json\", \"timeout\": -1}", "timeout"},
    {"timeout is a string", "{\"path\": \"json\", \"timeout\": \"5\"}", "timeout"},
    {"negative deadline", "{\"path\": \"json\", \"deadline\": -5}", "deadline"},
    {"query is a string", "{\"path\": \"json\", \"query\": \"a=b\"}", "query"},
    {"query value is an object", "{\"path\": \"json\", \"query\": {\"deep\": {\"nested\": 1}}}",
     "deep|query"},
    {"query array holds an array", "{\"path\": \"json\", \"query\": {\"arrkey\": [1, [2]]}}",
     "arrkey|query"},
    {"unknown bodyEncoding", "{\"path\": \"echo\", \"bodyEncoding\": \"yaml\", \"body\": {}}",
     "bodyEncoding"},
    {"text body that is an object",
     "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"text\", \"body\": {\"a\": 1}}", "body"},
    {"unknown decoder", "{\"path\": \"json\", \"response\": {\"decoder\": \"xml\"}}", "decoder"},
    {"keyPath is a number", "{\"path\": \"json\", \"response\": {\"keyPath\": 3}}", "keyPath"},
    {"unknown key in response", "{\"path\": \"json\", \"response\": {\"unknown\": 1}}", "unknown"},
    {"misspelt key in response", "{\"path\": \"json\", \"response\": {\"decodr\": \"json\"}}", "decodr"},
    {"response is a string", "{\"path\": \"json\", \"response\": \"json\"}", "response"},
    {"reversed status range", "{\"path\": \"json\", \"acceptableStatus\": [[300, 200]]}",
     "acceptableStatus"},
    {"acceptableStatus is a string", "{\"path\": \"json\", \"acceptableStatus\": \"2xx\"}",
     "acceptableStatus"},
    {"isFullPath is a string", "{\"path\": \"json\", \"isFullPath\": \"yes\"}", "isFullPath"},
    {"useCache is a string", "{\"path\": \"json\", \"useCache\": \"yes\"}", "useCache"},
    {"retry.maxAttempts is a string", "{\"path\": \"json\", \"retry\": {\"maxAttempts\": \"3\"}}",
     "maxAttempts"},
    {"retry has an unknown key", "{\"path\": \"json\", \"retry\": {\"maxAttempt\": 3}}", "maxAttempt"},
    {"deadline is negative", "{\"path\": \"json\", \"deadline\": -1}", "deadline"},
    {"truncated JSON", "{\"path\": \"a\"", NULL},
    {"invalid UTF-8 in a string", "{\"path\":\"\xff\"}", NULL},
    {"invalid UTF-8 in a key", "{\"pa\xc3\x28th\": \"json\"}", NULL},
    {"trailing garbage", "{} x", NULL},
    {"two documents", "{}{}", NULL},
    {"path with CRLF", "{\"path\": \"json\\r\\nX-Injected: 1\"}", "path"},
    {"lone surrogate escape", "{\"path\": \"\\ud800\"}", NULL},
};

static void test_malformed_endpoint_documents_are_invalid_request(void)
{
    nl_client *c = shared_client();
    size_t i;
    json_t *r;
    for (i = 0; i < NLT_COUNT(bad_endpoints); i++) {
        char *text = nl_request(c, bad_endpoints[i].doc);
        check_invalid_text(bad_endpoints[i].label, text, bad_endpoints[i].keys);
    }
    /* the client still works after all that */
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
    json_decref(r);
    nl_client_free(c);
}

/* Header fields are bounded in number: building and merging them looks names up, so
 * 20,000 fields took seconds; 1,000 are sent, one more is refused at once. */
static void test_header_fields_are_bounded_in_number(void)
{
    nl_client *c = shared_client();
    size_t size = 64 + 1001 * 24, used, i;
    char *doc = malloc(size), *text;
    json_t *r;
    int count;
    REQUIRE(doc != NULL);
    for (count = 1000; count <= 1001; count++) {
        used = (size_t)snprintf(doc, size, "{\"path\": \"json\", \"headers\": {");
        for (i = 0; i < (size_t)count; i++) {
            used += (size_t)snprintf(doc + used, size - used, "%s\"X-H%zu\": \"1\"", i ? ", " : "", i);
        }
        snprintf(doc + used, size - used, "}}");
        text = nl_request(c, doc);
        if (count == 1000) {
            /* Sent: the test server answers more than 100 fields with 431, as Python's does. */
            r = nlt_parse(text, "1000 headers");
            CHECK_MSG(r && json_integer_value(json_object_get(r, "status")) == 431, "%s", text);
            json_decref(r);
            nl_free(text);
        } else {
            check_invalid_text("1001 headers", text, "headers|1001|at most 1000");
        }
    }
    free(doc);
    nl_client_free(c);
}

static void test_null_arguments_are_invalid_request(void)
{
    nl_client *c = shared_client();
    check_invalid_text("nl_request(NULL, doc)", nl_request(NULL, "{\"path\": \"json\"}"), NULL);
    check_invalid_text("nl_request(NULL, NULL)", nl_request(NULL, NULL), NULL);
    check_invalid_text("nl_request(c, NULL)", nl_request(c, NULL), NULL);
    check_invalid_text("nl_call(NULL, ...)", nl_call(NULL, "x", NULL), NULL);
    check_invalid_text("nl_call(c, NULL, NULL)", nl_call(c, NULL, NULL), NULL);
    check_invalid_text("nl_call(c, unknown)", nl_call(c, "nosuchname", NULL), "nosuchname");
    /* not U+FFFD's endpoint: a name that is not UTF-8 names none */
    check_invalid_text("nl_call(c, not UTF-8)", nl_call(c, "e\xff", NULL), "not UTF-8");
    check_invalid_text("nl_request_batch(NULL, ...)", nl_request_batch(NULL, "[]"), NULL);
    check_invalid_text("nl_request_batch(c, NULL)", nl_request_batch(c, NULL), NULL);
    check_invalid_text("nl_request_batch(c, object)", nl_request_batch(c, "{\"path\": \"json\"}"), NULL);
    check_invalid_text("nl_request_batch(c, not json)", nl_request_batch(c, "[{"), NULL);
    CHECK(nl_cancel(NULL, 1) == 0);
    nl_free(NULL);
    nl_client_free(NULL);
    nl_client_free(c);
}

static void test_deeply_nested_document_does_not_crash(void)
{
    nl_client *c = shared_client();
    size_t depth = 100000, i;
    char *doc = (char *)malloc(2 * depth + 1);
    json_t *r;
    REQUIRE(doc != NULL);
    for (i = 0; i < depth; i++) {
        doc[i] = '[';
        doc[depth + i] = ']';
    }
    doc[2 * depth] = '\0';
    check_invalid_text("100000 nested arrays", nl_request(c, doc), NULL);
    /* the same depth inside an otherwise valid body */
    free(doc);
    doc = (char *)malloc(2 * depth + 64);
    REQUIRE(doc != NULL);
    strcpy(doc, "{\"path\": \"echo\", \"method\": \"POST\", \"body\": ");
    {
        size_t off = strlen(doc);
        for (i = 0; i < depth; i++)
            doc[off + i] = '[';
        for (i = 0; i < depth; i++)
            doc[off + depth + i] = ']';
        strcpy(doc + off + 2 * depth, "}");
    }
    {
        char *text = nl_request(c, doc);
        r = nlt_parse(text, "nl_request(deep body)");
        CHECK(r != NULL);
        nlt_note("deeply nested body -> ok=%d kind=\"%s\" message=\"%.200s\"", result_ok(r),
                 error_kind(r), error_message(r));
        json_decref(r);
        nl_free(text);
    }
    free(doc);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

static void test_batch_reports_bad_elements_in_place(void)
{
    nl_client *c = shared_client();
    char *text = nl_request_batch(c, "[{\"path\": \"json\"}, 42, {\"pathh\": 1}]");
    json_t *arr = nlt_parse(text, "nl_request_batch");
    CHECK_MSG(json_is_array(arr) && json_array_size(arr) == 3, "batch result: %.500s",
              text ? text : "(null)");
    if (json_is_array(arr) && json_array_size(arr) == 3) {
        json_t *r0 = json_array_get(arr, 0), *r1 = json_array_get(arr, 1), *r2 = json_array_get(arr, 2);
        CHECK_OK(r0);
        CHECK_KIND(r1, "invalid_request");
        CHECK_KIND(r2, "invalid_request");
        CHECK_MSG(strstr(error_message(r2), "pathh") != NULL, "message: %s", error_message(r2));
    }
    json_decref(arr);
    nl_free(text);
    nl_client_free(c);
}

/* ---- config documents ----------------------------------------------------------- */

static const bad_case bad_configs[] = {
    {"config: unknown key", "{\"baseUrl\": \"x\"}", "baseUrl"},
    {"config: negative timeout", "{\"timeout\": -3}", "timeout"},
    {"config: negative connectTimeout", "{\"connectTimeout\": -1}", "connectTimeout"},
    {"config: negative maxRedirects", "{\"maxRedirects\": -1}", "maxRedirects"},
    {"config: header name with LF", "{\"headers\": {\"A\\nB\": \"x\"}}", "header"},
    {"config: header value with CR", "{\"headers\": {\"X-Cr\": \"a\\rb\"}}", "X-Cr|header"},
    {"config: baseURL is a number", "{\"baseURL\": 7}", "baseURL"},
    {"config: followRedirects is a string", "{\"followRedirects\": \"no\"}", "followRedirects"},
    {"config: one-element status range", "{\"acceptableStatus\": [[200]]}", "acceptableStatus"},
    {"config: query is an array", "{\"query\": [1]}", "query"},
    {"config: tls.verify is a string", "{\"tls\": {\"verify\": \"no\"}}", "verify"},
    {"config: unknown log level", "{\"log\": {\"level\": \"loud\"}}", "level"},
    {"config: retry.onStatus is a string", "{\"retry\": {\"onStatus\": \"500\"}}", "onStatus"},
    {"config: errorResolver rule without status", "{\"errorResolver\": [{\"code\": \"x\"}]}", "status"},
    {"config: tls has an unknown key", "{\"tls\": {\"verfy\": false}}", "verfy"},
    {"config: endpoint with numeric path", "{\"endpoints\": {\"movieX\": {\"path\": 5}}}", "movieX|path"},
    {"config: invalid JSON", "{", NULL},
    {"config: not an object", "[]", NULL},
    {"config: trailing garbage", "{} {", NULL},
    {"config: invalid UTF-8", "{\"userAgent\": \"\xfe\"}", NULL},
};

static void test_malformed_configs_are_rejected_with_error_document(void)
{
    size_t i;
    for (i = 0; i < NLT_COUNT(bad_configs); i++) {
        char *err = NULL;
        nl_client *c = nl_client_new(bad_configs[i].doc, &err);
        CHECK_MSG(c == NULL, "[%s] nl_client_new accepted %s", bad_configs[i].label, bad_configs[i].doc);
        if (c != NULL) {
            nl_client_free(c);
            nl_free(err);
            continue;
        }
        CHECK_MSG(err != NULL, "[%s] no error document", bad_configs[i].label);
        if (err != NULL)
            check_invalid_text(bad_configs[i].label, err, bad_configs[i].keys);
    }
}

/* The message of the invalid_request error `doc` gets (as a config when `config`). */
static char *invalid_message(const char *doc, int config)
{
    char *text = NULL, *copy;
    json_t *r;
    if (config) {
        nl_client *c = nl_client_new(doc, &text);
        nl_client_free(c);
    } else {
        nl_client *c = client_for(NULL);
        text = nl_request(c, doc);
        nl_client_free(c);
    }
    r = text ? nlt_parse(text, doc) : NULL;
    copy = strdup(r ? error_message(r) : "");
    json_decref(r);
    nl_free(text);
    return copy;
}

static void test_unknown_keys_suggest_the_closest_known_one(void)
{
    static const struct { const char *doc; int config; const char *message; } cases[] = {
        {"{\"baseUrl\": \"http://x/\"}", 1, "unknown config key 'baseUrl' (did you mean 'baseURL'?)"},
        {"{\"timout\": 3}", 1, "unknown config key 'timout' (did you mean 'timeout'?)"},
        {"{\"tls\": {\"verfy\": false}}", 1, "(did you mean 'verify'?)"},
        {"{\"retry\": {\"maxAttemps\": 2}}", 1, "(did you mean 'maxAttempts'?)"},
        {"{\"zzzzzzzz\": 1}", 1, "unknown config key 'zzzzzzzz'"},
        {"{\"pathh\": \"json\"}", 0, "unknown endpoint key 'pathh' (did you mean 'path'?)"},
        {"{\"path\": \"json\", \"qeury\": {}}", 0, "(did you mean 'query'?)"},
        {"{\"path\": \"json\", \"downloadto\": \"x\"}", 0, "(did you mean 'downloadTo'?)"},
        {"{\"path\": \"json\", \"response\": {\"keypath\": \"a\"}}", 0, "(did you mean 'keyPath'?)"},
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        char *message = invalid_message(cases[i].doc, cases[i].config);
        CHECK_MSG(strstr(message, cases[i].message) != NULL, "%s: message \"%s\", expected \"%s\"", cases[i].doc,
                  message, cases[i].message);
        if (strstr(cases[i].doc, "zzzz") != NULL)
            CHECK_MSG(strstr(message, "did you mean") == NULL, "no key is close to zzzzzzzz: %s", message);
        free(message);
    }
}

static void test_config_with_unsupported_scheme_is_reported(void)
{
    char *err = NULL;
    nl_client *c = nl_client_new("{\"baseURL\": \"ftp://x/\"}", &err);
    if (c == NULL) {
        json_t *e = nlt_parse(err, "nl_client_new error_json");
        CHECK(err != NULL);
        CHECK(!result_ok(e));
        nlt_note("ftp baseURL rejected at nl_client_new: kind \"%s\", message \"%s\"", error_kind(e),
                 error_message(e));
        json_decref(e);
        nl_free(err);
    } else {
        json_t *r = request_json(c, "{\"path\": \"json\"}");
        CHECK(!result_ok(r));
        nlt_note("ftp baseURL accepted at nl_client_new; request -> kind \"%s\", message \"%s\"",
                 error_kind(r), error_message(r));
        json_decref(r);
        nl_client_free(c);
    }
}

static void test_client_new_edge_cases(void)
{
    char *err = NULL;
    nl_client *c = nl_client_new(NULL, NULL);
    CHECK_MSG(c != NULL, "nl_client_new(NULL, NULL) must succeed with defaults");
    nl_client_free(c);

    c = nl_client_new(NULL, &err);
    CHECK(c != NULL);
    CHECK_MSG(err == NULL, "error_json must be left untouched on success");
    nl_client_free(c);

    c = nl_client_new("{}", &err);
    CHECK(c != NULL);
    CHECK(err == NULL);
    nl_client_free(c);

    c = nl_client_new("{\"baseURL\": null, \"timeout\": null}", &err);
    CHECK_MSG(c != NULL, "null means default: %s", err ? err : "");
    nl_free(err);
    err = NULL;
    nl_client_free(c);

    c = nl_client_new("bad", NULL);
    CHECK(c == NULL);
    nl_client_free(c);

    nl_client_free(NULL);
    nl_free(NULL);
}

static void test_client_still_works_after_malformed_inputs(void)
{
    nl_client *c = shared_client();
    size_t i;
    json_t *r;
    for (i = 0; i < NLT_COUNT(bad_endpoints); i++)
        nl_free(nl_request(c, bad_endpoints[i].doc));
    for (i = 0; i < 3; i++) {
        r = request_json(c, "{\"path\": \"json\"}");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
        json_decref(r);
    }
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_malformed_endpoint_documents_are_invalid_request),
        NLT_TEST(test_header_fields_are_bounded_in_number),
        NLT_TEST(test_null_arguments_are_invalid_request),
        NLT_TEST(test_deeply_nested_document_does_not_crash),
        NLT_TEST(test_batch_reports_bad_elements_in_place),
        NLT_TEST(test_malformed_configs_are_rejected_with_error_document),
        NLT_TEST(test_unknown_keys_suggest_the_closest_known_one),
        NLT_TEST(test_config_with_unsupported_scheme_is_reported),
        NLT_TEST(test_client_new_edge_cases),
        NLT_TEST(test_client_still_works_after_malformed_inputs),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
