/*
 * test_values.c — values arrive as given (contract section 8, "Values arrive as given"):
 *  - a multipart text part is sent whole, NUL included;
 *  - CR, LF and NUL in form and query keys and values are percent-encoded, not refused;
 *    an `encodedQuery` goes as written (its `&`, `=`, `,` and `%XX`), with CR, LF, NUL,
 *    space and `#` escaped, and a value that is not a string is refused naming the key;
 *  - an XML body refuses what XML 1.0 cannot carry, naming the key, and keeps a CR;
 *  - multipart names and filenames are RFC 9110 quoted strings ("\\" and "\"");
 *    control characters in them are refused naming `multipart`, and nothing is sent;
 *  - a header value of only spaces or tabs is sent empty (not libcurl's "remove this
 *    header"); control characters other than HTAB in a header value are refused naming
 *    the header, and nothing is sent.
 * The server is Tests/server/server.py: /echo returns what it received (the body as
 * UTF-8 text, which may hold NUL, so results are parsed with JSON_ALLOW_NUL).
 * bindings/python/tests/test_roundtrip_httpbin.py holds these properties against a
 * server parser nobody on this project wrote (werkzeug under gunicorn).
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

/* nl_request with an endpoint object (stolen); the result parsed with NUL allowed. */
static json_t *send_doc(nl_client *c, json_t *endpoint)
{
    char *doc = json_dumps(endpoint, JSON_COMPACT);
    char *text;
    json_t *r;
    json_error_t err;
    json_decref(endpoint);
    REQUIRE(doc != NULL);
    text = nl_request(c, doc);
    free(doc);
    REQUIRE(text != NULL);
    r = json_loads(text, JSON_ALLOW_NUL, &err);
    CHECK_MSG(r != NULL, "result is not JSON (%s): %.400s", err.text, text);
    nl_free(text);
    return r;
}

/* Whether the string at `path` holds the string literal `lit`, NULs included. */
#define HOLDS(r, path, lit) holds((r), (path), (lit), sizeof(lit) - 1)

/* Whether the string at `path` holds the `n` bytes of `needle`. */
static int holds(json_t *r, const char *path, const char *needle, size_t n)
{
    json_t *s = jpath(r, path);
    const char *v;
    size_t len, i;
    if (!json_is_string(s))
        return 0;
    v = json_string_value(s);
    len = json_string_length(s);
    for (i = 0; i + n <= len; i++)
        if (memcmp(v + i, needle, n) == 0)
            return 1;
    return 0;
}

static long requests_seen(nl_client *c)
{
    json_t *r = request_doc(c, "{\"path\": \"stats\"}");
    long n;
    CHECK_OK(r);
    n = (long)jpath_num(r, "value.requests", -1) - 1; /* the /stats call itself */
    json_decref(r);
    return n;
}

static void reset_stats(nl_client *c)
{
    json_t *r = request_doc(c, "{\"path\": \"stats/reset\"}");
    CHECK_OK(r);
    json_decref(r);
}

/* ---- bodies ------------------------------------------------------------------------------ */

static void test_multipart_text_part_is_sent_whole_with_its_nul(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = send_doc(c, json_pack("{s:s, s:s, s:[{s:s, s:s%}]}", "path", "echo", "method", "POST",
                                      "multipart", "name", "t", "text", "before\0after", (size_t)12));
    CHECK_OK(r);
    CHECK_MSG(HOLDS(r, "value.body", "\r\n\r\nbefore\0after\r\n--"), "part cut at its NUL");
    json_decref(r);
    nl_client_free(c);
}

static void test_form_values_with_cr_lf_nul_are_percent_encoded(void)
{
    nl_client *c = client_for(NULL);
    json_t *body = json_object();
    json_t *r;
    json_object_set_new(body, "comment", json_string("first line\nsecond line"));
    json_object_setn_new(body, "k\r\n", 3, json_stringn("a\r\nb\0", 5));
    r = send_doc(c, json_pack("{s:s, s:s, s:s, s:o}", "path", "echo", "method", "POST", "bodyEncoding", "form",
                              "body", body));
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.body"), "comment=first%20line%0Asecond%20line&k%0D%0A=a%0D%0Ab%00");
    json_decref(r);
    nl_client_free(c);
}

static void test_query_keys_and_values_with_cr_lf_nul_are_percent_encoded(void)
{
    nl_client *c = client_for("\"query\": {\"fromConfig\": \"x\\ny\"}");
    json_t *query = json_object();
    json_t *r, *args, *values;
    json_object_setn_new(query, "k\n", 2, json_pack("[s, s%]", "v\r\n", "\0", (size_t)1));
    r = send_doc(c, json_pack("{s:s, s:o}", "path", "echo", "query", query));
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.query"), "fromConfig=x%0Ay&k%0A=v%0D%0A&k%0A=%00");
    args = jpath(r, "value.args");
    values = json_is_object(args) ? json_object_getn(args, "k\n", 2) : NULL;
    CHECK_MSG(json_array_size(values) == 2, "the server's parse_qs did not find key \"k\\n\" twice");
    if (json_array_size(values) == 2) {
        CHECK_STR_EQ(json_string_value(json_array_get(values, 0)), "v\r\n");
        CHECK_MSG(json_string_length(json_array_get(values, 1)) == 1
                      && json_string_value(json_array_get(values, 1))[0] == '\0',
                  "the second value is not a NUL");
    }
    json_decref(r);
    nl_client_free(c);
}

static void test_an_encoded_query_goes_as_written_with_what_cannot_stand_in_a_query_escaped(void)
{
    nl_client *c = client_for("\"query\": {\"fromConfig\": \"1,2\"}");
    json_t *r = send_doc(c, json_pack("{s:s, s:s%, s:{s:s}}", "path", "echo", "encodedQuery",
                                      "color=blue,black%2Cgrey&t=a b#c\r\n\0", (size_t)34, "query", "q", "x,y"));
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.query"), "color=blue,black%2Cgrey&t=a%20b%23c%0D%0A%00&fromConfig=1%2C2&q=x%2Cy");
    json_decref(r);
    reset_stats(c);
    r = request_json(c, "{\"path\": \"echo\", \"encodedQuery\": [\"a=1\"]}");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "'encodedQuery'") != NULL, "%s", error_message(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"encodedQuery\": \"?a=1\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "encodedQuery") != NULL, "%s", error_message(r));
    json_decref(r);
    CHECK_INT_EQ(requests_seen(c), 0);
    nl_client_free(c);
}

static void test_xml_refuses_what_xml_cannot_carry_naming_the_key_and_keeps_cr(void)
{
    static const struct {
        const char *text;
        size_t len;
    } bad[] = { { "a\0b", 3 }, { "a\x01", 2 }, { "\x1f", 1 }, { "\xef\xbf\xbf", 3 }, { "\xef\xbf\xbe", 3 } };
    nl_client *c = client_for(NULL);
    json_t *r;
    size_t i;
    reset_stats(c);
    for (i = 0; i < NLT_COUNT(bad); i++) {
        r = send_doc(c, json_pack("{s:s, s:s, s:s, s:{s:{s:[s, s%]}}}", "path", "echo", "method", "POST",
                                  "bodyEncoding", "xml", "body", "order", "note", "ok", bad[i].text, bad[i].len));
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r), "body key 'order.note.1'") != NULL, "case %zu: %s", i, error_message(r));
        json_decref(r);
    }
    CHECK_INT_EQ(requests_seen(c), 0);
    r = send_doc(c, json_pack("{s:s, s:s, s:s, s:{s:s}}", "path", "echo", "method", "POST", "bodyEncoding", "xml",
                              "body", "a", "cr\r crlf\r\n tab\t"));
    CHECK_OK(r);
    CHECK_MSG(HOLDS(r, "value.body", "<a>cr&#13; crlf&#13;\n tab\t</a>"), "body: %s", jpath_str(r, "value.body"));
    json_decref(r);
    nl_client_free(c);
}

/* ---- multipart names and filenames --------------------------------------------------------- */

static void test_multipart_names_and_filenames_are_quoted_strings(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = send_doc(c, json_pack("{s:s, s:s, s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s}]}", "path", "echo",
                                      "method", "POST", "multipart", "name", "a\\", "text", "1", "name", "b\"c",
                                      "filename", "C:\\dir\\\"q\".txt", "text", "2", "name", "tab\there é", "text",
                                      "3"));
    const char *body;
    CHECK_OK(r);
    body = jpath_str(r, "value.body");
    REQUIRE(body != NULL);
    CHECK_MSG(strstr(body, "Content-Disposition: form-data; name=\"a\\\\\"\r\n") != NULL, "%s", body);
    CHECK_MSG(strstr(body, "Content-Disposition: form-data; name=\"b\\\"c\";"
                           " filename=\"C:\\\\dir\\\\\\\"q\\\".txt\"\r\n") != NULL,
              "%s", body);
    CHECK_MSG(strstr(body, "Content-Disposition: form-data; name=\"tab\there é\"\r\n") != NULL, "%s", body);
    json_decref(r);
    nl_client_free(c);
}

static void test_multipart_control_characters_are_refused_naming_multipart(void)
{
    static const char *const parts[] = {
        "{\"name\": \"a\\nb\", \"text\": \"x\"}",
        "{\"name\": \"a\\r\", \"text\": \"x\"}",
        "{\"name\": \"a\\u0000b\", \"text\": \"x\"}",
        "{\"name\": \"a\", \"filename\": \"f\\u0001.txt\", \"text\": \"x\"}",
        "{\"name\": \"a\", \"filename\": \"f.txt\\r\\nX-Injected: 1\", \"text\": \"x\"}",
        "{\"name\": \"a\", \"contentType\": \"text/plain\\r\\nX-Injected: 1\", \"text\": \"x\"}",
        "{\"name\": \"a\\u007f\", \"text\": \"x\"}",
    };
    static const char *const keys[] = { "'name'", "'name'", "'name'", "'filename'", "'filename'", "'contentType'",
                                        "'name'" };
    nl_client *c = client_for(NULL);
    size_t i;
    reset_stats(c);
    for (i = 0; i < NLT_COUNT(parts); i++) {
        json_t *r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"multipart\": [{\"name\": \"ok\","
                                    " \"text\": \"fine\"}, %s]}", parts[i]);
        const char *m = error_message(r);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(m, "multipart part 1") != NULL && strstr(m, keys[i]) != NULL, "part %s: %s", parts[i], m);
        CHECK_MSG(strstr(m, "Content-Disposition") == NULL && strstr(m, "header 'Content-Type'") == NULL,
                  "the message names a wire header: %s", m);
        json_decref(r);
    }
    CHECK_INT_EQ(requests_seen(c), 0);
    nl_client_free(c);
}

/* ---- header values ------------------------------------------------------------------------- */

static void test_header_value_of_spaces_or_tabs_is_sent_empty_and_values_are_trimmed(void)
{
    nl_client *c = client_for("\"headers\": {\"X-Config-Blank\": \" \"}");
    json_t *r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"X-Spaces\": \"   \", \"X-Tabs\": \"\\t \\t\","
                                " \"X-Empty\": \"\", \"X-Padded\": \" \\t v  w\\t \", \"X-Inner-Tab\": \"a\\tb\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-spaces"), "");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-tabs"), "");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-empty"), "");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-config-blank"), "");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-padded"), "v  w");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-inner-tab"), "a\tb");
    json_decref(r);
    nl_client_free(c);
}

static void test_header_control_characters_other_than_htab_are_refused_naming_the_header(void)
{
    nl_client *c = client_for(NULL);
    int b, refused = 0;
    reset_stats(c);
    for (b = 0; b <= 0x7f; b++) {
        json_t *r;
        char value[8];
        if (b == 0x09 || (b >= 0x20 && b < 0x7f))
            continue;
        snprintf(value, sizeof(value), "a\\u%04x", b);
        r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"X-Ctl\": \"%sb\"}}", value);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r), "'headers'") != NULL && strstr(error_message(r), "X-Ctl") != NULL,
                  "byte 0x%02x: %s", b, error_message(r));
        refused++;
        json_decref(r);
    }
    CHECK_INT_EQ(refused, 32);
    CHECK_INT_EQ(requests_seen(c), 0);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_multipart_text_part_is_sent_whole_with_its_nul),
        NLT_TEST(test_form_values_with_cr_lf_nul_are_percent_encoded),
        NLT_TEST(test_query_keys_and_values_with_cr_lf_nul_are_percent_encoded),
        NLT_TEST(test_an_encoded_query_goes_as_written_with_what_cannot_stand_in_a_query_escaped),
        NLT_TEST(test_xml_refuses_what_xml_cannot_carry_naming_the_key_and_keeps_cr),
        NLT_TEST(test_multipart_names_and_filenames_are_quoted_strings),
        NLT_TEST(test_multipart_control_characters_are_refused_naming_multipart),
        NLT_TEST(test_header_value_of_spaces_or_tabs_is_sent_empty_and_values_are_trimmed),
        NLT_TEST(test_header_control_characters_other_than_htab_are_refused_naming_the_header),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
