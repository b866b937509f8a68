/*
 * test_model.c — request bodies (form, xml, text, JSON arrays, multipart), the
 * response cache, compression and streamed bodies (sse, lines, chunks), against
 * the loopback test server (run through Tests/server/with_server.py).
 *
 * Server endpoints used: /echo, /cache/<key>, /hits/<key>, /compressed/<enc>,
 * /sse, /lines, /bytes/<n>, /stream-bytes/<n>, /long-line, /sse-slow, /json.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 90
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- helpers ------------------------------------------------------------------------ */

static int slow_mode(void)
{
    const char *s = getenv("NETLAYER_TEST_SLOW");
    return s != NULL && *s != '\0';
}

/* How many requests the server's /cache/<key> saw (read without the cache). */
static long cache_hits(const char *key)
{
    char *counter = nlt_format("cache:%s", key);
    long n = server_hits(counter);
    free(counter);
    return n;
}

static int from_cache(json_t *r)
{
    return json_is_true(json_object_get(r, "fromCache"));
}

/* A fresh temporary directory (caller removes it with rm_tree). */
static char *make_temp_dir(void)
{
    const char *t = getenv("TMPDIR");
    char *tmpl = nlt_format("%s/netlayer-model-XXXXXX", (t && *t) ? t : "/tmp");
    REQUIRE(tmpl != NULL);
    REQUIRE_MSG(mkdtemp(tmpl) != NULL, "mkdtemp: %s", strerror(errno));
    return tmpl;
}

static char *write_file(const char *dir, const char *name, const char *data, size_t n)
{
    char *path = nlt_format("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    REQUIRE_MSG(f != NULL, "cannot create %s", path);
    REQUIRE(fwrite(data, 1, n, f) == n);
    REQUIRE(fclose(f) == 0);
    return path;
}

/* Base64 decoding (standard alphabet, padding optional); returns a malloc'ed buffer
 * and its length in *out_len, or NULL when the text is not base64. */
static unsigned char *b64_decode(const char *s, size_t *out_len)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), i, o = 0;
    unsigned int acc = 0;
    int bits = 0;
    unsigned char *out = (unsigned char *)malloc(n / 4 * 3 + 4);
    if (out == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *p;
        if (s[i] == '=')
            break;
        p = strchr(alphabet, s[i]);
        if (p == NULL || s[i] == '\0') {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned int)(p - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)((acc >> bits) & 0xff);
        }
    }
    *out_len = o;
    return out;
}

/* ---- body encodings ------------------------------------------------------------------ */

static void test_form_body_repeats_array_keys_booleans_and_rfc3986_escapes(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"form\","
        " \"body\": {\"a\": \"1 2\", \"ids\": [1, 2, 3], \"yes\": true, \"no\": false,"
        " \"sym\": \"&=+/?#\", \"safe\": \"A-z_0.9~\", \"u\": \"\\u00e9\", \"x y\": \"v\"}}");
    const char *ct = jpath_str(r, "value.headers.content-type");
    CHECK_OK(r);
    CHECK_MSG(ct && strncmp(ct, "application/x-www-form-urlencoded", 33) == 0, "content-type: %s",
              ct ? ct : "(null)");
    CHECK_STR_EQ(jpath_str(r, "value.body"),
                 "a=1%202&ids=1&ids=2&ids=3&yes=true&no=false&sym=%26%3D%2B%2F%3F%23"
                 "&safe=A-z_0.9~&u=%C3%A9&x%20y=v");
    json_decref(r);
    nl_client_free(c);
}

static void test_xml_body_renders_elements_repeats_arrays_and_escapes(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"xml\", \"xmlRoot\": \"movie\","
        " \"body\": {\"title\": \"Tom & Jerry <\\\"1\\\"> 'x'\", \"tag\": [\"a\", \"b\"],"
        " \"meta\": {\"year\": 1999, \"ok\": true}}}");
    const char *ct = jpath_str(r, "value.headers.content-type");
    const char *body = jpath_str(r, "value.body");
    CHECK_OK(r);
    CHECK_MSG(ct && strcasecmp(ct, "application/xml; charset=utf-8") == 0, "content-type: %s",
              ct ? ct : "(null)");
    CHECK(body != NULL);
    if (body != NULL) {
        const char *root = strstr(body, "<movie>");
        CHECK_MSG(root != NULL, "body: %s", body);
        CHECK_MSG(strstr(body, "<title>Tom &amp; Jerry &lt;&quot;1&quot;&gt; &apos;x&apos;</title>") != NULL,
                  "body: %s", body);
        CHECK_MSG(strstr(body, "<tag>a</tag><tag>b</tag>") != NULL, "body: %s", body);
        CHECK_MSG(strstr(body, "<meta><year>1999</year><ok>true</ok></meta>") != NULL, "body: %s", body);
        CHECK_MSG(strlen(body) >= 8 && strcmp(body + strlen(body) - 8, "</movie>") == 0, "body: %s", body);
        /* nothing unescaped from the title */
        CHECK_MSG(strstr(body, "Tom & ") == NULL, "body: %s", body);
    }
    json_decref(r);
    nl_client_free(c);
}

static void test_xml_invalid_element_names_are_invalid_request(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"xml\", \"xmlRoot\": \"1root\","
        " \"body\": {\"a\": 1}}");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "1root") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"xml\", \"xmlRoot\": \"root\","
        " \"body\": {\"bad name\": 1}}");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "bad name") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"bodyEncoding\": \"xml\", \"xmlRoot\": \"root\","
        " \"body\": {\"ok\": {\"<x>\": 1}}}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    nl_client_free(c);
}

static void test_text_body_is_sent_as_is(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"PUT\", \"bodyEncoding\": \"text\","
        " \"body\": \"line 1\\nline 2 & {not json} \\u00e9\"}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.body"), "line 1\nline 2 & {not json} \xc3\xa9");
    CHECK_INT_EQ(jpath_num(r, "value.bodyLength", -1), 29);
    json_decref(r);
    nl_client_free(c);
}

static void test_top_level_json_array_is_a_json_body(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"body\": [1, \"two\", {\"three\": 3}]}");
    const char *sent = jpath_str(r, "value.body");
    const char *ct = jpath_str(r, "value.headers.content-type");
    json_t *got = sent ? json_loads(sent, 0, NULL) : NULL;
    json_t *expected = json_loads("[1, \"two\", {\"three\": 3}]", 0, NULL);
    CHECK_OK(r);
    CHECK_MSG(ct && strncmp(ct, "application/json", 16) == 0, "content-type: %s", ct ? ct : "(null)");
    CHECK_MSG(got != NULL && json_equal(got, expected), "server got body: %s", sent ? sent : "(null)");
    json_decref(got);
    json_decref(expected);
    json_decref(r);
    nl_client_free(c);
}

static void test_get_or_head_with_a_body_is_invalid_request(void)
{
    static const char *docs[] = {
        "{\"path\": \"echo\", \"body\": {\"a\": 1}}",
        "{\"path\": \"echo\", \"method\": \"GET\", \"bodyEncoding\": \"text\", \"body\": \"x\"}",
        "{\"path\": \"echo\", \"method\": \"HEAD\", \"body\": [1]}",
        "{\"path\": \"echo\", \"method\": \"GET\", \"multipart\": [{\"name\": \"a\", \"text\": \"b\"}]}",
        "{\"path\": \"echo\", \"method\": \"HEAD\", \"uploadFrom\": \"/etc/hostname\"}",
    };
    nl_client *c = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(docs); i++) {
        json_t *r = request_doc(c, docs[i]);
        CHECK_KIND(r, "invalid_request");
        json_decref(r);
    }
    nl_client_free(c);
}

/* ---- multipart ----------------------------------------------------------------------- */

static void test_multipart_text_file_and_base64_parts_reach_the_server(void)
{
    static const char file_data[] = "file contents\nsecond line\n";
    char *dir = make_temp_dir();
    char *path = write_file(dir, "doc.txt", file_data, sizeof(file_data) - 1);
    nl_client *c = client_for(NULL);
    /* "aGVsbG8gYmFzZTY0" is "hello base64" */
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"multipart\": ["
        "{\"name\": \"caption\", \"text\": \"hello\"},"
        "{\"name\": \"doc\", \"file\": \"%s\", \"filename\": \"doc.txt\", \"contentType\": \"text/plain\"},"
        "{\"name\": \"blob\", \"base64\": \"aGVsbG8gYmFzZTY0\", \"filename\": \"b.bin\"}]}",
        path);
    const char *ct = jpath_str(r, "value.headers.content-type");
    const char *body = jpath_str(r, "value.body");
    const char *boundary = ct ? strstr(ct, "boundary=") : NULL;
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.method"), "POST");
    CHECK_MSG(ct && strncmp(ct, "multipart/form-data; boundary=", 30) == 0, "content-type: %s",
              ct ? ct : "(null)");
    CHECK(body != NULL);
    if (body != NULL && boundary != NULL) {
        char *delim = nlt_format("--%s\r\n", boundary + 9);
        char *closing = nlt_format("--%s--", boundary + 9);
        const char *p1, *p2, *p3;
        CHECK_MSG(strncmp(body, delim, strlen(delim)) == 0, "body starts: %.200s", body);
        CHECK_MSG(strstr(body, closing) != NULL, "no closing boundary in: %.2000s", body);
        p1 = strstr(body, "Content-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n");
        p2 = strstr(body, "Content-Disposition: form-data; name=\"doc\"; filename=\"doc.txt\"\r\n"
                          "Content-Type: text/plain\r\n\r\nfile contents\nsecond line\n\r\n");
        p3 = strstr(body, "Content-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\n");
        CHECK_MSG(p1 != NULL, "text part missing: %.2000s", body);
        CHECK_MSG(p2 != NULL, "file part missing: %.2000s", body);
        CHECK_MSG(p3 != NULL, "base64 part missing: %.2000s", body);
        CHECK_MSG(strstr(body, "\r\n\r\nhello base64\r\n") != NULL, "base64 part not decoded: %.2000s", body);
        CHECK_MSG(p1 && p2 && p3 && p1 < p2 && p2 < p3, "parts out of order: %.2000s", body);
        free(delim);
        free(closing);
    }
    CHECK(jpath_num(r, "value.bodyLength", -1) == (double)strtol(jpath_str(r, "value.headers.content-length")
                                                                    ? jpath_str(r, "value.headers.content-length")
                                                                    : "-2", NULL, 10));
    json_decref(r);
    nl_client_free(c);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

static void test_multipart_works_with_put_and_patch(void)
{
    static const char *methods[] = {"PUT", "PATCH"};
    nl_client *c = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(methods); i++) {
        json_t *r = request_json(c, "{\"path\": \"echo\", \"method\": \"%s\","
                                    " \"multipart\": [{\"name\": \"k\", \"text\": \"v\"}]}", methods[i]);
        const char *ct = jpath_str(r, "value.headers.content-type");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.method"), methods[i]);
        CHECK_MSG(ct && strncmp(ct, "multipart/form-data; boundary=", 30) == 0, "content-type: %s",
                  ct ? ct : "(null)");
        CHECK(jpath_str(r, "value.body") && strstr(jpath_str(r, "value.body"), "name=\"k\"\r\n\r\nv\r\n"));
        json_decref(r);
    }
    nl_client_free(c);
}

static void test_multipart_part_needs_exactly_one_of_text_file_base64(void)
{
    static const char *parts[] = {
        "{\"name\": \"a\"}",
        "{\"name\": \"a\", \"text\": \"x\", \"base64\": \"AA==\"}",
        "{\"name\": \"a\", \"text\": \"x\", \"file\": \"/etc/hostname\"}",
        "{\"name\": \"a\", \"file\": \"/etc/hostname\", \"base64\": \"AA==\"}",
        "{\"text\": \"no name\"}",
        "{\"name\": \"a\", \"base64\": \"not base64!\"}",
        "{\"name\": \"a\", \"text\": \"x\", \"bogus\": 1}",
    };
    nl_client *c = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(parts); i++) {
        json_t *r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"multipart\": [%s]}", parts[i]);
        CHECK_KIND(r, "invalid_request");
        if (strcmp(error_kind(r), "invalid_request") != 0)
            nlt_note("part %s was accepted", parts[i]);
        json_decref(r);
    }
    nl_client_free(c);
}

static void test_multipart_unreadable_file_is_io(void)
{
    char *dir = make_temp_dir();
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"multipart\": ["
        "{\"name\": \"f\", \"file\": \"%s/missing.bin\", \"filename\": \"m.bin\"}]}", dir);
    CHECK_KIND(r, "io");
    json_decref(r);
    /* a directory is not a readable file either */
    r = request_json(c,
        "{\"path\": \"echo\", \"method\": \"POST\", \"multipart\": ["
        "{\"name\": \"f\", \"file\": \"%s\", \"filename\": \"m.bin\"}]}", dir);
    CHECK_KIND(r, "io");
    json_decref(r);
    nl_client_free(c);
    rmdir(dir);
    free(dir);
}

/* ---- response cache ------------------------------------------------------------------ */

static void test_use_cache_without_cache_enabled_is_invalid_request(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"cache/x\", \"useCache\": true}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    nl_client_free(c);
    c = client_for("\"cache\": {\"enabled\": false}");
    r = request_json(c, "{\"path\": \"cache/x\", \"useCache\": true}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    nl_client_free(c);
}

static void test_cache_max_age_answers_second_request_without_the_server(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true, \"maxEntries\": 16}");
    char *key = unique_key("maxage");
    json_t *r1 = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true}", key);
    json_t *r2 = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true}", key);
    CHECK_OK(r1);
    CHECK_OK(r2);
    CHECK(!from_cache(r1));
    CHECK_INT_EQ(jpath_num(r1, "attempts", -1), 1);
    CHECK_MSG(from_cache(r2), "second request must come from the cache");
    CHECK_INT_EQ(jpath_num(r2, "attempts", -1), 0);
    CHECK_INT_EQ(result_status(r2), 200);
    CHECK_INT_EQ(jpath_num(r2, "value.hits", -1), 1);
    CHECK(json_equal(json_object_get(r1, "value"), json_object_get(r2, "value")));
    CHECK_INT_EQ(cache_hits(key), 1);
    json_decref(r1);
    json_decref(r2);
    nl_client_free(c);
    free(key);
}

/* A stored response answers only requests with the same credentials: not another
 * bearer token, not a request with only a cookie or a header the config marks secret,
 * not one without credentials, and not one whose token a hook added. */
static void adapt_adds_carol(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json; (void)user_data;
    nl_reply_set(reply, "{\"headers\": {\"Authorization\": \"Bearer CAROL\"}}");
}

static void test_cache_never_serves_one_users_response_to_another(void)
{
    static const char *others[] = {
        "{\"Authorization\": \"Bearer BOB\"}",
        "{\"Cookie\": \"session=alice\"}",
        "{\"X-Api-Key\": \"alice-key\"}",
        "{}",
    };
    nl_client *c = client_for("\"cache\": {\"enabled\": true, \"maxEntries\": 16},"
                              " \"log\": {\"redact\": [\"X-Api-Key\"]}");
    char *key = unique_key("creds");
    json_t *r;
    size_t i;
    r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true,"
                        " \"headers\": {\"Authorization\": \"Bearer ALICE\"}}", key);
    CHECK_OK(r);
    CHECK(!from_cache(r));
    json_decref(r);
    for (i = 0; i < NLT_COUNT(others); i++) {
        r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true,"
                            " \"headers\": %s}", key, others[i]);
        CHECK_OK(r);
        CHECK_MSG(!from_cache(r), "Bearer ALICE's response was served to a request with %s", others[i]);
        json_decref(r);
    }
    r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true,"
                        " \"headers\": {\"Authorization\": \"Bearer ALICE\"}}", key);
    CHECK_MSG(from_cache(r), "the same credentials are answered from the cache");
    json_decref(r);
    r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true,"
                        " \"headers\": {\"X-Api-Key\": \"alice-key\"}}", key);
    CHECK_MSG(from_cache(r), "a marked header's own value is answered from the cache");
    json_decref(r);

    /* a token added by the ADAPT hook is the credential the response was fetched with */
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, adapt_adds_carol, NULL), 0);
    r = request_json(c, "{\"path\": \"cache/%s-hook\", \"query\": {\"max_age\": 60}, \"useCache\": true}", key);
    CHECK_OK(r);
    json_decref(r);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL), 0);
    r = request_json(c, "{\"path\": \"cache/%s-hook\", \"query\": {\"max_age\": 60}, \"useCache\": true}", key);
    CHECK_MSG(!from_cache(r), "a response fetched with the hook's token was served to a request without it");
    json_decref(r);
    nl_client_free(c);
    free(key);
}

/* The callback of an async request answered from the cache still runs on a library
 * thread, after nl_request_async returned (never inside it, where a caller holding
 * a lock its callback takes would deadlock). */
typedef struct cached_async {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t caller;
    int calls, on_caller, from_cache;
} cached_async;

static void cached_async_callback(uint64_t id, const char *result_json, void *user_data)
{
    cached_async *ca = (cached_async *)user_data;
    json_t *r = json_loads(result_json, 0, NULL);
    (void)id;
    pthread_mutex_lock(&ca->lock);
    ca->calls++;
    ca->on_caller += pthread_equal(pthread_self(), ca->caller) != 0;
    ca->from_cache += r != NULL && result_ok(r) && from_cache(r);
    pthread_cond_broadcast(&ca->cond);
    pthread_mutex_unlock(&ca->lock);
    json_decref(r);
}

static void test_cache_hit_of_an_async_request_calls_back_on_a_library_thread(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    char *key = unique_key("async");
    char *endpoint = nlt_format("{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true}", key);
    json_t *r1 = request_json(c, "%s", endpoint);
    cached_async ca;
    double t0;
    int calls, on_caller, cached;

    CHECK_OK(r1);
    memset(&ca, 0, sizeof(ca));
    pthread_mutex_init(&ca.lock, NULL);
    pthread_cond_init(&ca.cond, NULL);
    ca.caller = pthread_self();
    CHECK(nl_request_async(c, endpoint, cached_async_callback, &ca) != 0);
    t0 = now_ms();
    pthread_mutex_lock(&ca.lock);
    while (ca.calls == 0 && now_ms() - t0 < 5000) {
        pthread_mutex_unlock(&ca.lock);
        sleep_ms(5);
        pthread_mutex_lock(&ca.lock);
    }
    calls = ca.calls;
    on_caller = ca.on_caller;
    cached = ca.from_cache;
    pthread_mutex_unlock(&ca.lock);
    CHECK_INT_EQ(calls, 1);
    CHECK_MSG(on_caller == 0, "the cached answer's callback ran inside nl_request_async, on the caller's thread");
    CHECK_MSG(cached == 1, "the async request must be answered from the cache");
    CHECK_INT_EQ(cache_hits(key), 1);
    json_decref(r1);
    nl_client_free(c);
    pthread_cond_destroy(&ca.cond);
    pthread_mutex_destroy(&ca.lock);
    free(endpoint);
    free(key);
}

static void test_cache_no_store_is_never_cached(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    char *key = unique_key("nostore");
    int i;
    for (i = 0; i < 3; i++) {
        json_t *r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60, \"no_store\": 1},"
                                    " \"useCache\": true}", key);
        CHECK_OK(r);
        CHECK(!from_cache(r));
        CHECK_INT_EQ(jpath_num(r, "value.hits", -1), i + 1);
        json_decref(r);
    }
    CHECK_INT_EQ(cache_hits(key), 3);
    nl_client_free(c);
    free(key);
}

static void test_cache_etag_revalidates_with_if_none_match_and_304(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    char *key = unique_key("etag");
    json_t *r1 = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 0, \"etag\": \"v1\"},"
                                 " \"useCache\": true}", key);
    json_t *r2 = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 0, \"etag\": \"v1\"},"
                                 " \"useCache\": true}", key);
    CHECK_OK(r1);
    CHECK_OK(r2);
    CHECK(!from_cache(r1));
    CHECK_MSG(from_cache(r2), "a 304 revalidation answers from the cache");
    CHECK_INT_EQ(result_status(r2), 200);
    /* the cached value (hits 1), although the server saw the revalidation */
    CHECK_INT_EQ(jpath_num(r2, "value.hits", -1), 1);
    CHECK_INT_EQ(cache_hits(key), 2);
    json_decref(r1);
    json_decref(r2);
    nl_client_free(c);
    free(key);
}

static void test_cache_last_modified_revalidates_with_if_modified_since(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    char *key = unique_key("lastmod");
    json_t *r1 = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 0, \"last_modified\": 1},"
                                 " \"useCache\": true}", key);
    json_t *r2 = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 0, \"last_modified\": 1},"
                                 " \"useCache\": true}", key);
    CHECK_OK(r1);
    CHECK_OK(r2);
    CHECK(!from_cache(r1));
    CHECK(from_cache(r2));
    CHECK_INT_EQ(result_status(r2), 200);
    CHECK_INT_EQ(jpath_num(r2, "value.hits", -1), 1);
    CHECK_INT_EQ(cache_hits(key), 2);
    json_decref(r1);
    json_decref(r2);
    nl_client_free(c);
    free(key);
}

static void test_cache_vary_keeps_header_variants_apart(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    char *key = unique_key("vary");
    static const char *langs[] = {"en", "fr", "en", "fr"};
    static const int cached[] = {0, 0, 1, 1};
    size_t i;
    for (i = 0; i < NLT_COUNT(langs); i++) {
        json_t *r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60, \"vary\": \"X-Lang\"},"
                                    " \"headers\": {\"X-Lang\": \"%s\"}, \"useCache\": true}", key, langs[i]);
        CHECK_OK(r);
        CHECK_MSG(from_cache(r) == cached[i], "request %d (X-Lang %s): fromCache %d", (int)i, langs[i], from_cache(r));
        CHECK_STR_EQ(jpath_str(r, "value.vary"), langs[i]);
        json_decref(r);
    }
    CHECK_INT_EQ(cache_hits(key), 2);
    nl_client_free(c);
    free(key);
}

static json_t *cached_get(nl_client *c, const char *key)
{
    return request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": true}", key);
}

static void test_cache_lru_evicts_least_recently_used_entry(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true, \"maxEntries\": 2}");
    char *a = unique_key("lru-a");
    char *b = unique_key("lru-b");
    char *k = unique_key("lru-c");
    json_t *r;

    r = cached_get(c, a); CHECK_OK(r); CHECK(!from_cache(r)); json_decref(r);
    r = cached_get(c, b); CHECK_OK(r); CHECK(!from_cache(r)); json_decref(r);
    r = cached_get(c, a); CHECK_OK(r); CHECK_MSG(from_cache(r), "a cached"); json_decref(r); /* a now more recent than b */
    r = cached_get(c, k); CHECK_OK(r); CHECK(!from_cache(r)); json_decref(r);               /* evicts b */
    r = cached_get(c, a); CHECK_OK(r); CHECK_MSG(from_cache(r), "a was used recently and must stay"); json_decref(r);
    r = cached_get(c, b); CHECK_OK(r); CHECK_MSG(!from_cache(r), "b was least recently used and evicted");
    CHECK_INT_EQ(jpath_num(r, "value.hits", -1), 2);
    json_decref(r);
    CHECK_INT_EQ(cache_hits(a), 1);
    CHECK_INT_EQ(cache_hits(b), 2);
    CHECK_INT_EQ(cache_hits(k), 1);
    nl_client_free(c);
    free(a);
    free(b);
    free(k);
}

static void test_cache_lru_plain_order_evicts_oldest(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true, \"maxEntries\": 2}");
    char *a = unique_key("fifo-a");
    char *b = unique_key("fifo-b");
    char *k = unique_key("fifo-c");
    json_t *r;
    r = cached_get(c, a); CHECK_OK(r); json_decref(r);
    r = cached_get(c, b); CHECK_OK(r); json_decref(r);
    r = cached_get(c, k); CHECK_OK(r); json_decref(r);          /* evicts a */
    r = cached_get(c, b); CHECK_OK(r); CHECK_MSG(from_cache(r), "b still cached"); json_decref(r);
    r = cached_get(c, a); CHECK_OK(r); CHECK_MSG(!from_cache(r), "a evicted"); json_decref(r);
    CHECK_INT_EQ(cache_hits(a), 2);
    CHECK_INT_EQ(cache_hits(b), 1);
    nl_client_free(c);
    free(a);
    free(b);
    free(k);
}

static void test_cache_is_bypassed_without_use_cache_and_for_post(void)
{
    nl_client *c = client_for("\"cache\": {\"enabled\": true}");
    char *key = unique_key("bypass");
    json_t *r;
    r = cached_get(c, key); CHECK_OK(r); CHECK(!from_cache(r)); json_decref(r);
    r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}}", key);
    CHECK_OK(r);
    CHECK_MSG(!from_cache(r), "no useCache: the cache is bypassed");
    CHECK_INT_EQ(jpath_num(r, "value.hits", -1), 2);
    json_decref(r);
    r = request_json(c, "{\"path\": \"cache/%s\", \"query\": {\"max_age\": 60}, \"useCache\": false}", key);
    CHECK_OK(r);
    CHECK(!from_cache(r));
    json_decref(r);
    /* requests that bypass the cache leave the cached GET entry alone */
    r = cached_get(c, key); CHECK_OK(r); CHECK(from_cache(r)); CHECK_INT_EQ(jpath_num(r, "value.hits", -1), 1); json_decref(r);
    /* POST is never answered from the cache */
    r = request_json(c, "{\"path\": \"cache/%s\", \"method\": \"POST\", \"query\": {\"max_age\": 60},"
                        " \"useCache\": true, \"body\": {}}", key);
    CHECK_OK(r);
    CHECK_MSG(!from_cache(r), "a POST must not be answered from the cache");
    json_decref(r);
    /* and its success invalidates what is stored for its URL (RFC 9111 section 4.4) */
    r = cached_get(c, key); CHECK_OK(r); CHECK(!from_cache(r)); CHECK_INT_EQ(jpath_num(r, "value.hits", -1), 5); json_decref(r);
    nl_client_free(c);
    free(key);
}

/* ---- compression ---------------------------------------------------------------------- */

static void test_gzip_deflate_br_zstd_bodies_decode_to_the_same_json(void)
{
    static const char *encodings[] = {"gzip", "deflate", "br", "zstd"};
    nl_client *c = client_for(NULL);
    json_t *first = NULL;
    size_t i;
    for (i = 0; i < NLT_COUNT(encodings); i++) {
        json_t *r = request_json(c, "{\"path\": \"compressed/%s\"}", encodings[i]);
        const char *data = jpath_str(r, "value.data");
        CHECK_OK(r);
        CHECK_MSG(json_is_true(jpath(r, "value.compressed")), "encoding %s", encodings[i]);
        CHECK_STR_EQ(jpath_str(r, "headers.content-encoding"), encodings[i]);
        CHECK_MSG(data && strlen(data) == 1800 && strncmp(data, "netlayer netlayer ", 18) == 0,
                  "encoding %s: data of %d chars", encodings[i], data ? (int)strlen(data) : -1);
        if (first == NULL)
            first = json_incref(json_object_get(r, "value"));
        else
            CHECK_MSG(json_equal(first, json_object_get(r, "value")), "encoding %s decodes differently", encodings[i]);
        json_decref(r);
    }
    json_decref(first);
    nl_client_free(c);
}

static void test_accept_encoding_offers_all_four_by_default(void)
{
    static const char *encodings[] = {"gzip", "deflate", "br", "zstd"};
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"echo\"}");
    const char *ae = jpath_str(r, "value.headers.accept-encoding");
    size_t i;
    CHECK_OK(r);
    CHECK_MSG(ae != NULL, "no Accept-Encoding sent");
    for (i = 0; i < NLT_COUNT(encodings); i++) {
        const char *at = ae ? strstr(ae, encodings[i]) : NULL;
        CHECK_MSG(at != NULL, "Accept-Encoding \"%s\" lacks %s", ae ? ae : "", encodings[i]);
        /* one header line: a second one would be joined into the value with ", " */
        CHECK_MSG(at == NULL || strstr(at + 1, encodings[i]) == NULL, "Accept-Encoding \"%s\" names %s twice",
                  ae ? ae : "", encodings[i]);
    }
    json_decref(r);
    /* the caller's own header wins, and comes alone */
    r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"accept-encoding\": \"gzip\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.accept-encoding"), "gzip");
    json_decref(r);
    nl_client_free(c);
}

static void test_compression_false_sends_no_accept_encoding(void)
{
    nl_client *c = client_for("\"compression\": false");
    json_t *r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    CHECK_MSG(jpath(r, "value.headers.accept-encoding") == NULL, "Accept-Encoding: %s",
              jpath_str(r, "value.headers.accept-encoding") ? jpath_str(r, "value.headers.accept-encoding") : "?");
    json_decref(r);
    nl_client_free(c);
}

static void test_max_response_bytes_counts_decoded_bytes(void)
{
    /* 73 bytes of gzip on the wire, 1832 decoded */
    nl_client *c = client_for("\"maxResponseBytes\": 1000");
    json_t *r = request_json(c, "{\"path\": \"compressed/gzip\"}");
    CHECK_KIND(r, "too_large");
    /* the response never completed: status is null (documents.md, Result) */
    CHECK_MSG(result_status(r) == -1, "too_large: status %lld, expected null", result_status(r));
    json_decref(r);
    nl_client_free(c);
    c = client_for("\"maxResponseBytes\": 2000");
    r = request_json(c, "{\"path\": \"compressed/gzip\"}");
    CHECK_OK(r);
    CHECK(json_is_true(jpath(r, "value.compressed")));
    json_decref(r);
    nl_client_free(c);
}

/* ---- streams ---------------------------------------------------------------------------- */

typedef struct stream_hook {
    pthread_mutex_t m;
    json_t *events;
    int cancel_after; /* reply {"cancel": true} on this event (1-based); 0 never */
} stream_hook;

static void stream_hook_init(stream_hook *h, int cancel_after)
{
    pthread_mutex_init(&h->m, NULL);
    h->events = json_array();
    h->cancel_after = cancel_after;
}

static void stream_hook_destroy(stream_hook *h)
{
    json_decref(h->events);
    pthread_mutex_destroy(&h->m);
}

static void stream_hook_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    stream_hook *h = (stream_hook *)user_data;
    json_error_t err;
    /* binary data read as lines may carry \u0000 */
    json_t *ev = json_loads(event_json, JSON_ALLOW_NUL, &err);
    size_t n;
    CHECK_MSG(ev != NULL, "stream event is not JSON (%s): %.300s", err.text, event_json);
    pthread_mutex_lock(&h->m);
    if (ev != NULL)
        json_array_append_new(h->events, ev);
    n = json_array_size(h->events);
    pthread_mutex_unlock(&h->m);
    if (h->cancel_after > 0 && (int)n >= h->cancel_after)
        nl_reply_set(reply, "{\"cancel\": true}");
}

static void check_same_id(json_t *events)
{
    size_t i;
    json_t *id0 = jpath(events, "0.id");
    CHECK(json_is_integer(id0) && json_integer_value(id0) > 0);
    for (i = 1; i < json_array_size(events); i++)
        CHECK(json_equal(id0, jpath(json_array_get(events, i), "id")));
}

static void test_sse_stream_delivers_each_event_and_discards_the_unterminated_last(void)
{
    /* /sse: ": a comment\nretry: 1500\n\n" "id: 1\nevent: tick\ndata: first\n\n"
     * "data: two\ndata: lines\n\n" "id: 3\r\ndata: crlf\r\n\r\n" "data: unterminated at the end"
     * — the last is not ended by a blank line, so the HTML standard discards it. */
    static const struct { const char *event, *data, *id; } want[] = {
        {"tick", "first", "1"},
        {"message", "two\nlines", "1"},
        {"message", "crlf", "3"},
    };
    nl_client *c = client_for(NULL);
    stream_hook h;
    json_t *r;
    size_t i;
    stream_hook_init(&h, 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, stream_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"sse\", \"stream\": \"sse\"}");
    CHECK_OK(r);
    CHECK(json_is_null(json_object_get(r, "value")));
    CHECK_INT_EQ(jpath_num(r, "events", -1), NLT_COUNT(want));
    CHECK_INT_EQ(json_array_size(h.events), NLT_COUNT(want));
    for (i = 0; i < NLT_COUNT(want) && i < json_array_size(h.events); i++) {
        json_t *ev = json_array_get(h.events, i);
        json_t *retry = json_object_get(ev, "retry");
        CHECK_STR_EQ(jpath_str(ev, "event"), want[i].event);
        CHECK_STR_EQ(jpath_str(ev, "data"), want[i].data);
        CHECK_STR_EQ(jpath_str(ev, "lastEventId"), want[i].id);
        if (i == 0)
            CHECK_MSG(json_is_integer(retry) && json_integer_value(retry) == 1500,
                      "\"retry: 1500\" (sent before the first event) must be reported with it");
        else
            CHECK_MSG(json_is_null(retry) || (json_is_integer(retry) && json_integer_value(retry) == 1500),
                      "event %d: unexpected retry", (int)i);
    }
    check_same_id(h.events);
    if (json_array_size(h.events) != NLT_COUNT(want) || !json_is_integer(jpath(h.events, "0.retry")))
        nlt_dump("events", h.events);
    json_decref(r);
    nl_client_free(c);
    stream_hook_destroy(&h);
}

static void test_lines_stream_delivers_each_line_lf_crlf_and_last_without_newline(void)
{
    static const char *want[] = {"first line", "second line", "third", "", "last without newline"};
    nl_client *c = client_for(NULL);
    stream_hook h;
    json_t *r;
    size_t i;
    stream_hook_init(&h, 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, stream_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"lines\", \"stream\": \"lines\"}");
    CHECK_OK(r);
    CHECK(json_is_null(json_object_get(r, "value")));
    CHECK_INT_EQ(jpath_num(r, "events", -1), NLT_COUNT(want));
    CHECK_INT_EQ(json_array_size(h.events), NLT_COUNT(want));
    for (i = 0; i < NLT_COUNT(want) && i < json_array_size(h.events); i++)
        CHECK_STR_EQ(jpath_str(json_array_get(h.events, i), "line"), want[i]);
    check_same_id(h.events);
    json_decref(r);
    nl_client_free(c);
    stream_hook_destroy(&h);
}

static void test_chunks_stream_concatenates_to_the_body(void)
{
    int n = slow_mode() ? 50000 : 300000;
    nl_client *c = client_for(NULL);
    stream_hook h;
    json_t *r;
    size_t i, total = 0;
    unsigned char *all = (unsigned char *)malloc((size_t)n + 1);
    int bad_chunks = 0, mismatch = -1;
    REQUIRE(all != NULL);
    stream_hook_init(&h, 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, stream_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"bytes/%d\", \"stream\": \"chunks\"}", n);
    CHECK_OK(r);
    CHECK(json_is_null(json_object_get(r, "value")));
    CHECK_INT_EQ(jpath_num(r, "events", -1), json_array_size(h.events));
    CHECK(json_array_size(h.events) >= 1);
    for (i = 0; i < json_array_size(h.events); i++) {
        const char *b64 = jpath_str(json_array_get(h.events, i), "chunk");
        size_t len = 0;
        unsigned char *bytes = b64 ? b64_decode(b64, &len) : NULL;
        if (bytes == NULL) {
            bad_chunks++;
            continue;
        }
        if (total + len <= (size_t)n)
            memcpy(all + total, bytes, len);
        total += len;
        free(bytes);
    }
    CHECK_INT_EQ(bad_chunks, 0);
    CHECK_INT_EQ(total, n);
    if (total == (size_t)n) {
        for (i = 0; i < (size_t)n; i++) {
            if (all[i] != (unsigned char)(i % 256)) {
                mismatch = (int)i;
                break;
            }
        }
    }
    CHECK_MSG(mismatch < 0, "byte %d differs from the body", mismatch);
    check_same_id(h.events);
    nlt_note("%d bytes in %d chunks", n, (int)json_array_size(h.events));
    json_decref(r);
    nl_client_free(c);
    stream_hook_destroy(&h);
    free(all);
}

static void test_stream_hook_cancel_stops_with_cancelled(void)
{
    static const char *modes[] = {"chunks", "lines"};
    nl_client *c = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(modes); i++) {
        stream_hook h;
        json_t *r;
        double t0 = now_ms();
        stream_hook_init(&h, 1);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, stream_hook_fn, &h), 0);
        /* 4 MB at 16 KiB per 20 ms would take over 5 s */
        r = request_json(c, "{\"path\": \"stream-bytes/4194304\", \"query\": {\"chunk\": 16384, \"delay_ms\": 20},"
                            " \"stream\": \"%s\"}", modes[i]);
        CHECK_KIND(r, "cancelled");
        CHECK_MSG(now_ms() - t0 < 4000, "mode %s: cancel took %.0f ms", modes[i], now_ms() - t0);
        CHECK_MSG(json_array_size(h.events) >= 1 && json_array_size(h.events) <= 2,
                  "mode %s: %d events after cancel", modes[i], (int)json_array_size(h.events));
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, NULL, NULL), 0);
        json_decref(r);
        stream_hook_destroy(&h);
    }
    /* the client still works */
    {
        json_t *r = request_json(c, "{\"path\": \"json\"}");
        CHECK_OK(r);
        json_decref(r);
    }
    nl_client_free(c);
}

static void test_stream_without_hook_still_counts_events(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"lines\", \"stream\": \"lines\"}");
    CHECK_OK(r);
    CHECK(json_is_null(json_object_get(r, "value")));
    CHECK_INT_EQ(jpath_num(r, "events", -1), 5);
    json_decref(r);
    nl_client_free(c);
}

/* ---- stream limits and timeouts ------------------------------------------------------- */

/* One asynchronous request's result, and when it came. */
typedef struct async_result {
    pthread_mutex_t m;
    pthread_cond_t cv;
    json_t *result;
    double done_ms;
} async_result;

static void async_done(uint64_t id, const char *result_json, void *user_data)
{
    async_result *a = (async_result *)user_data;
    json_t *r = nlt_parse(result_json, "async result");
    (void)id;
    pthread_mutex_lock(&a->m);
    a->result = r;
    a->done_ms = now_ms();
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->m);
}

static void async_start(async_result *a, nl_client *c, const char *endpoint)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->m, NULL);
    pthread_cond_init(&a->cv, NULL);
    CHECK(nl_request_async(c, endpoint, async_done, a) != 0);
}

static int async_finished(async_result *a)
{
    int done;
    pthread_mutex_lock(&a->m);
    done = a->result != NULL;
    pthread_mutex_unlock(&a->m);
    return done;
}

/* Waits for the result (the test's watchdog bounds the wait), returns it (caller
 * json_decref()s) and frees the rest. */
static json_t *async_wait(async_result *a)
{
    json_t *r;
    pthread_mutex_lock(&a->m);
    while (a->result == NULL)
        pthread_cond_wait(&a->cv, &a->m);
    r = a->result;
    pthread_mutex_unlock(&a->m);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->m);
    return r;
}

/* Resident bytes now, after resetting the peak (VmHWM) to them; -1 when it cannot. */
static long long reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int ok = f != NULL && fputs("5", f) >= 0;
    long long now = -1;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (ok) {
        char line[128];
        f = fopen("/proc/self/status", "r");
        while (f != NULL && fgets(line, sizeof line, f) != NULL)
            if (strncmp(line, "VmRSS:", 6) == 0)
                now = atoll(line + 6) * 1024;
        if (f != NULL)
            fclose(f);
    }
    return now;
}

static long long peak_rss_since_reset(void)
{
    char line[128];
    long long peak = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            peak = atoll(line + 6) * 1024;
    if (f != NULL)
        fclose(f);
    return peak;
}

static void test_a_huge_line_is_too_large_quickly_while_the_clients_other_requests_stay_fast(void)
{
    /* 32 MiB in one line against the default limit of 8 MiB (1 MiB under valgrind) */
    int slow = slow_mode();
    nl_client *c = client_for(slow ? "\"maxStreamItemBytes\": 1048576" : NULL);
    async_result stream;
    json_t *r;
    double t0, worst = 0, took;
    int fast = 0;
    long long rss0 = slow ? -1 : reset_peak_rss(), grew;
    t0 = now_ms();
    async_start(&stream, c, "{\"path\": \"long-line\", \"query\": {\"bytes\": 33554432}, \"stream\": \"lines\"}");
    /* the same client's loop answers other requests while the stream is read */
    do {
        async_result quick;
        double t = now_ms();
        async_start(&quick, c, "{\"path\": \"json\"}");
        r = async_wait(&quick);
        CHECK_OK(r);
        json_decref(r);
        if (now_ms() - t > worst)
            worst = now_ms() - t;
        fast++;
    } while (!async_finished(&stream));
    r = async_wait(&stream);
    took = stream.done_ms - t0;
    CHECK_KIND(r, "too_large");
    CHECK_MSG(error_message(r) != NULL && strstr(error_message(r), "maxStreamItemBytes") != NULL,
              "the message names the key: %s", error_message(r) ? error_message(r) : "(none)");
    CHECK_MSG(took < (slow ? 60000 : 5000), "the stream ended after %.0f ms", took);
    CHECK_MSG(worst < (slow ? 3000 : 250), "a request to /json took %.0f ms while the stream ran", worst);
    if (rss0 >= 0) {
        grew = peak_rss_since_reset() - rss0;
        CHECK_MSG(grew < 48LL * 1024 * 1024, "the peak resident size grew by %lld MB", grew >> 20);
        nlt_note("the stream ended after %.0f ms; %d requests to /json meanwhile, the slowest %.1f ms; peak +%lld MB",
                 took, fast, worst, grew >> 20);
    }
    json_decref(r);
    nl_client_free(c);
}

static void test_max_stream_item_bytes_bounds_a_line_or_an_event_and_is_validated(void)
{
    static const char *bad[] = {"0", "-1", "1.5", "\"8\"", "true"};
    nl_client *c = client_for(NULL);
    json_t *r;
    size_t i;
    /* /lines: "first line" (10 bytes), then "second line" (11) */
    r = request_json(c, "{\"path\": \"lines\", \"stream\": \"lines\", \"maxStreamItemBytes\": 10}");
    CHECK_KIND(r, "too_large");
    CHECK_MSG(error_message(r) && strstr(error_message(r), "maxStreamItemBytes (10 bytes)"), "message: %s",
              error_message(r) ? error_message(r) : "(none)");
    json_decref(r);
    r = request_json(c, "{\"path\": \"lines\", \"stream\": \"lines\", \"maxStreamItemBytes\": 20}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "events", -1), 5);
    json_decref(r);
    /* /sse: its longest line, "data: unterminated at the end", holds 29 bytes */
    r = request_json(c, "{\"path\": \"sse\", \"stream\": \"sse\", \"maxStreamItemBytes\": 29}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "events", -1), 3);
    json_decref(r);
    r = request_json(c, "{\"path\": \"sse\", \"stream\": \"sse\", \"maxStreamItemBytes\": 28}");
    CHECK_KIND(r, "too_large");
    json_decref(r);
    for (i = 0; i < NLT_COUNT(bad); i++) {
        char *err = NULL;
        char *config = nlt_format("{\"baseURL\": \"%s\", \"maxStreamItemBytes\": %s}", base_url(), bad[i]);
        nl_client *other = nl_client_new(config, &err);
        CHECK_MSG(other == NULL && err && strstr(err, "invalid_request") && strstr(err, "maxStreamItemBytes"),
                  "config maxStreamItemBytes %s: %s", bad[i], err ? err : "(accepted)");
        if (other)
            nl_client_free(other);
        nl_free(err);
        free(config);
        r = request_json(c, "{\"path\": \"lines\", \"stream\": \"lines\", \"maxStreamItemBytes\": %s}", bad[i]);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(error_message(r) && strstr(error_message(r), "maxStreamItemBytes"), "endpoint %s: %s", bad[i],
                  error_message(r) ? error_message(r) : "(none)");
        json_decref(r);
    }
    nl_client_free(c);
}

/* Each streamed request runs blocking (nl_request) and on the loop (nl_request_async). */
static json_t *stream_both_ways(nl_client *c, const char *endpoint, int async, double *ms)
{
    double t0 = now_ms();
    json_t *r;
    if (async) {
        async_result a;
        async_start(&a, c, endpoint);
        r = async_wait(&a);
        *ms = a.done_ms - t0;
    } else {
        r = request_doc(c, endpoint);
        *ms = now_ms() - t0;
    }
    return r;
}

static void test_a_stream_outlives_its_timeout_while_bytes_keep_coming(void)
{
    /* 16 events 200 ms apart: 3 s, against a timeout of 1 s */
    nl_client *c = client_for("\"timeout\": 1");
    int async;
    for (async = 0; async < 2; async++) {
        double ms;
        json_t *r = stream_both_ways(c, "{\"path\": \"sse-slow\", \"query\": {\"count\": 16, \"interval_ms\": 200},"
                                        " \"stream\": \"sse\"}", async, &ms);
        CHECK_OK(r);
        CHECK_INT_EQ(jpath_num(r, "events", -1), 16);
        CHECK_MSG(ms > 2900, "%s: over after %.0f ms", async ? "async" : "blocking", ms);
        nlt_note("%s: %s after %.0f ms", async ? "async" : "blocking", result_ok(r) ? "ok" : error_kind(r), ms);
        json_decref(r);
    }
    nl_client_free(c);
}

static void test_a_silent_stream_times_out_after_its_timeout(void)
{
    /* one event, then 3 s of silence, against a timeout of 1 s */
    nl_client *c = client_for("\"timeout\": 1");
    int async;
    for (async = 0; async < 2; async++) {
        double ms;
        json_t *r = stream_both_ways(c, "{\"path\": \"sse-slow\", \"query\": {\"count\": 2, \"interval_ms\": 3000},"
                                        " \"stream\": \"sse\"}", async, &ms);
        CHECK_KIND(r, "timeout");
        CHECK_MSG(error_message(r) && strstr(error_message(r), "1.0 s") && strstr(error_message(r), "silence"),
                  "message: %s", error_message(r) ? error_message(r) : "(none)");
        /* a blocking transfer's silence is checked at least once a second, the loop's to the millisecond */
        CHECK_MSG(ms > 950 && ms < (async ? 1600 : 2600), "%s: timeout after %.0f ms", async ? "async" : "blocking", ms);
        nlt_note("%s: %s after %.0f ms", async ? "async" : "blocking", result_ok(r) ? "ok" : error_kind(r), ms);
        json_decref(r);
    }
    nl_client_free(c);
}

static void test_a_deadline_ends_a_stream_that_keeps_talking(void)
{
    nl_client *c = client_for("\"timeout\": 1");
    int async;
    for (async = 0; async < 2; async++) {
        double ms;
        json_t *r = stream_both_ways(c, "{\"path\": \"sse-slow\", \"query\": {\"count\": 16, \"interval_ms\": 200},"
                                        " \"stream\": \"sse\", \"deadline\": 1.6}", async, &ms);
        CHECK_KIND(r, "timeout");
        CHECK_MSG(ms > 1500 && ms < 2500, "%s: deadline of 1.6 s hit after %.0f ms", async ? "async" : "blocking", ms);
        nlt_note("%s: %s after %.0f ms", async ? "async" : "blocking", result_ok(r) ? "ok" : error_kind(r), ms);
        json_decref(r);
    }
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_form_body_repeats_array_keys_booleans_and_rfc3986_escapes),
        NLT_TEST(test_xml_body_renders_elements_repeats_arrays_and_escapes),
        NLT_TEST(test_xml_invalid_element_names_are_invalid_request),
        NLT_TEST(test_text_body_is_sent_as_is),
        NLT_TEST(test_top_level_json_array_is_a_json_body),
        NLT_TEST(test_get_or_head_with_a_body_is_invalid_request),
        NLT_TEST(test_multipart_text_file_and_base64_parts_reach_the_server),
        NLT_TEST(test_multipart_works_with_put_and_patch),
        NLT_TEST(test_multipart_part_needs_exactly_one_of_text_file_base64),
        NLT_TEST(test_multipart_unreadable_file_is_io),
        NLT_TEST(test_use_cache_without_cache_enabled_is_invalid_request),
        NLT_TEST(test_cache_max_age_answers_second_request_without_the_server),
        NLT_TEST(test_cache_never_serves_one_users_response_to_another),
        NLT_TEST(test_cache_hit_of_an_async_request_calls_back_on_a_library_thread),
        NLT_TEST(test_cache_no_store_is_never_cached),
        NLT_TEST(test_cache_etag_revalidates_with_if_none_match_and_304),
        NLT_TEST(test_cache_last_modified_revalidates_with_if_modified_since),
        NLT_TEST(test_cache_vary_keeps_header_variants_apart),
        NLT_TEST(test_cache_lru_evicts_least_recently_used_entry),
        NLT_TEST(test_cache_lru_plain_order_evicts_oldest),
        NLT_TEST(test_cache_is_bypassed_without_use_cache_and_for_post),
        NLT_TEST(test_gzip_deflate_br_zstd_bodies_decode_to_the_same_json),
        NLT_TEST(test_accept_encoding_offers_all_four_by_default),
        NLT_TEST(test_compression_false_sends_no_accept_encoding),
        NLT_TEST(test_max_response_bytes_counts_decoded_bytes),
        NLT_TEST(test_sse_stream_delivers_each_event_and_discards_the_unterminated_last),
        NLT_TEST(test_lines_stream_delivers_each_line_lf_crlf_and_last_without_newline),
        NLT_TEST(test_chunks_stream_concatenates_to_the_body),
        NLT_TEST(test_stream_hook_cancel_stops_with_cancelled),
        NLT_TEST(test_stream_without_hook_still_counts_events),
        NLT_TEST(test_a_huge_line_is_too_large_quickly_while_the_clients_other_requests_stay_fast),
        NLT_TEST(test_max_stream_item_bytes_bounds_a_line_or_an_event_and_is_validated),
        NLT_TEST(test_a_stream_outlives_its_timeout_while_bytes_keep_coming),
        NLT_TEST(test_a_silent_stream_times_out_after_its_timeout),
        NLT_TEST(test_a_deadline_ends_a_stream_that_keeps_talking),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
