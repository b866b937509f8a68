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

/* The request's one Cookie line, split into sorted "name=value" pairs joined by " | ". */
static char *sorted_cookies(json_t *echo)
{
    const char *line;
    char *copy, *pairs[32], *save = NULL, *p, *out;
    size_t n = 0, i, j, length = 1;
    if (header_lines(echo, "Cookie", &line) != 1 || line == NULL)
        return strdup("(no single Cookie line)");
    copy = strdup(line);
    for (p = strtok_r(copy, ";", &save); p && n < 32; p = strtok_r(NULL, ";", &save)) {
        while (*p == ' ')
            p++;
        pairs[n++] = p;
    }
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && strcmp(pairs[j - 1], pairs[j]) > 0; j--) {
            char *t = pairs[j];
            pairs[j] = pairs[j - 1];
            pairs[j - 1] = t;
        }
    for (i = 0; i < n; i++)
        length += strlen(pairs[i]) + 3;
    out = calloc(1, length);
    for (i = 0; i < n; i++) {
        if (i)
            strcat(out, " | ");
        strcat(out, pairs[i]);
    }
    free(copy);
    return out;
}

static void check_cookies(nl_client *c, const char *endpoint, const char *expected)
{
    json_t *r = request_json(c, "%s", endpoint);
    char *got;
    CHECK_OK(r);
    got = sorted_cookies(r);
    CHECK_MSG(strcmp(got, expected) == 0, "%s sent %s, expected %s", endpoint, got, expected);
    free(got);
    json_decref(r);
}

static void test_a_requests_own_cookies_replace_the_jars_of_the_same_name(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": [\"jar=1; Path=/\", \"keep=k; Path=/\","
                                " \"gone=g; Path=/\", \"deep=d; Path=/echo/sub\"]}}");
    CHECK_OK(r);
    json_decref(r);
    check_cookies(c, "{\"path\": \"echo\", \"headers\": {\"Cookie\": \"jar=override; extra=x\"}}",
                  "extra=x | gone=g | jar=override | keep=k");
    check_cookies(c, "{\"path\": \"echo\"}", "gone=g | jar=1 | keep=k");  /* the jar is as it was */
    /* the jar's path rule still holds for the cookies it adds */
    check_cookies(c, "{\"path\": \"echo/sub/x\", \"headers\": {\"Cookie\": \"keep=mine\"}}",
                  "deep=d | gone=g | jar=1 | keep=mine");
    /* a response to such a request sets and deletes cookies of the jar */
    check_cookies(c, "{\"path\": \"echo\", \"headers\": {\"Cookie\": \"jar=o\"}, \"query\": {\"_set_cookie\":"
                     " [\"new=n; Path=/\", \"gone=; Path=/; Max-Age=0\", \"keep=k2; Path=/\"]}}",
                  "gone=g | jar=o | keep=k");
    check_cookies(c, "{\"path\": \"echo\"}", "jar=1 | keep=k2 | new=n");
    /* a batch runs on the event loop, with the same rule */
    {
        char *results = nl_request_batch(c, "[{\"path\": \"echo\", \"headers\": {\"Cookie\": \"new=mine\"}}]");
        json_t *all = nlt_parse(results, "nl_request_batch");
        char *got = sorted_cookies(json_array_get(all, 0));
        CHECK_MSG(strcmp(got, "jar=1 | keep=k2 | new=mine") == 0, "batch sent %s", got);
        free(got);
        json_decref(all);
        nl_free(results);
    }
    nl_client_free(c);

    c = client_for("\"timeout\": 10, \"cookies\": false");  /* no jar: the caller's line as it is */
    check_cookies(c, "{\"path\": \"echo\", \"headers\": {\"Cookie\": \"a=1; b=2\"}}", "a=1 | b=2");
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

static void test_the_auto_decoder_reads_text_in_its_declared_charset(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    /* "caf\xe9 \x80" in windows-1252 (what the label latin1 means to the Encoding Standard) */
    json_t *r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": \"text/plain; charset=ISO-8859-1\","
                                " \"body64\": \"Y2Fm6SCA\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "decoder"), "text");
    CHECK_STR_EQ(jpath_str(r, "value"), "caf\xc3\xa9 \xe2\x82\xac");
    CHECK_STR_EQ(jpath_str(r, "charset"), "windows-1252");
    json_decref(r);
    /* \u4f60\u597d in GBK */
    r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": \"text/html;charset=\\\"gbk\\\"\", \"body64\": \"xOO6ww==\"}}");
    CHECK_STR_EQ(jpath_str(r, "value"), "\xe4\xbd\xa0\xe5\xa5\xbd");
    CHECK_STR_EQ(jpath_str(r, "charset"), "GBK");
    json_decref(r);
    /* KOI8-R */
    r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": \"text/plain; charset=koi8-r\", \"body64\": \"8NLJ18XU\"}}");
    CHECK_STR_EQ(jpath_str(r, "value"), "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82");
    CHECK_STR_EQ(jpath_str(r, "charset"), "KOI8-R");
    json_decref(r);
    /* bytes that are not in the declared charset stay bytes, the charset named */
    r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": \"text/plain; charset=utf-8\", \"body64\": \"YWL/\"}}");
    CHECK_STR_EQ(jpath_str(r, "decoder"), "base64");
    CHECK_STR_EQ(jpath_str(r, "value"), "YWL/");
    CHECK_STR_EQ(jpath_str(r, "charset"), "UTF-8");
    json_decref(r);
    /* no charset: UTF-8 text as before, no key */
    r = request_json(c, "{\"path\": \"text\"}");
    CHECK_STR_EQ(jpath_str(r, "value"), "hello, world");
    CHECK(json_object_get(r, "charset") == NULL);
    json_decref(r);
    /* an explicit decoder wins, and names nothing */
    r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": \"text/plain; charset=gbk\", \"body64\": \"xOO6ww==\"},"
                        " \"response\": {\"decoder\": \"text\"}}");
    CHECK_KIND(r, "parsing");  /* not UTF-8 */
    json_decref(r);
    nl_client_free(c);
}

/* One response with these Content-Type lines (a JSON array of strings) and the body
 * C4 E3 ("\u4f60" in GBK, not UTF-8): what the auto decoder made of it. */
static json_t *typed_lines(nl_client *c, const char *lines)
{
    return request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": %s, \"body64\": \"xOM=\"}}", lines);
}

static void test_content_type_lines_are_read_as_fetch_extracts_a_mime_type(void)
{
    /* web-platform-tests fetch/content-type/resources/content-types.json, some cases:
     * the last valid type wins; its charset, or one an earlier line of the same type gave. */
    static const struct { const char *lines; const char *charset; } cases[] = {
        {"[\"\", \"text/plain;charset=gbk\"]", "GBK"},
        {"[\"text/plain;charset=gbk\", \"text/html\"]", NULL},
        {"[\"text/plain;charset=gbk\", \"text/html;charset=windows-1254\"]", "windows-1254"},
        {"[\"text/plain;charset=gbk\", \"text/plain\"]", "GBK"},
        {"[\"text/html;charset=gbk\", \"text/html;x=\\\",text/plain\"]", "GBK"},
        {"[\"text/html;charset=gbk\", \"text/plain\", \"text/html\"]", NULL},
        {"[\"text/plain;charset=gbk\", \"*/*\"]", "GBK"},
        {"[\"text/plain\", \"*/*;charset=gbk\"]", NULL},
        {"[\"text/html;x=\\\"\", \"text/plain;charset=gbk\"]", NULL},
    };
    nl_client *c = client_for("\"timeout\": 10");
    size_t i;
    json_t *r;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *charset;
        r = typed_lines(c, cases[i].lines);
        CHECK_OK(r);
        charset = jpath_str(r, "charset");
        if (cases[i].charset == NULL) {
            CHECK_MSG(charset == NULL && strcmp(jpath_str(r, "decoder"), "base64") == 0,
                      "%s: charset %s, decoder %s", cases[i].lines, charset ? charset : "none", jpath_str(r, "decoder"));
        } else {
            CHECK_MSG(charset && strcmp(charset, cases[i].charset) == 0 && strcmp(jpath_str(r, "decoder"), "text") == 0,
                      "%s: charset %s, decoder %s", cases[i].lines, charset ? charset : "none", jpath_str(r, "decoder"));
        }
        json_decref(r);
    }
    /* the type chooses the decoder: the last valid one */
    r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": [\"*/*\", \"application/json\", \"bogus\"], \"body\": \"[1]\"}}");
    CHECK_STR_EQ(jpath_str(r, "decoder"), "json");
    CHECK_INT_EQ((long long)jpath_num(r, "value.0", 0), 1);
    json_decref(r);
    r = request_json(c, "{\"path\": \"typed\", \"query\": {\"type\": [\"application/json\", \"text/plain\"], \"body\": \"[1]\"}}");
    CHECK_STR_EQ(jpath_str(r, "decoder"), "text");
    CHECK_STR_EQ(jpath_str(r, "value"), "[1]");
    json_decref(r);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_a_post_without_a_body_sends_no_content_type),
        NLT_TEST(test_a_requests_own_cookies_replace_the_jars_of_the_same_name),
        NLT_TEST(test_a_result_names_its_final_url_and_the_redirects_before_it),
        NLT_TEST(test_the_auto_decoder_reads_text_in_its_declared_charset),
        NLT_TEST(test_content_type_lines_are_read_as_fetch_extracts_a_mime_type),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
