/*
 * test_cookies.c — the client's cookie jar (libcurl's cookie engine): on by default,
 * domain, path and secure rules, Set-Cookie values kept apart, off by config, and a
 * Netscape cookie file read at start and written at nl_client_free.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <unistd.h>

static const char *cookie_header(json_t *echo)
{
    return jpath_str(echo, "value.headers.cookie");
}

/* Whether the request's Cookie header holds the pair `pair` ("name=value"). */
static int has_cookie(json_t *echo, const char *pair)
{
    const char *h = cookie_header(echo), *p;
    size_t n = strlen(pair);
    for (p = h; p && (p = strstr(p, pair)) != NULL; p += n)
        if ((p == h || p[-1] == ' ') && (p[n] == ';' || p[n] == '\0'))
            return 1;
    return 0;
}

/* (A Secure cookie goes to 127.0.0.1 over http too: loopback is a secure context to
 * libcurl, as in RFC 6265bis.) */
static void test_cookies_are_kept_per_client_with_their_rules(void)
{
    nl_client *c = client_for(NULL), *other;
    json_t *r, *set;
    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": [\"a=1; Path=/\","
                        " \"b=2; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT\", \"p=3; Path=/echo/sub\","
                        " \"s=4; Path=/; Secure\", \"d=5; Domain=example.com; Path=/\"]}}");
    CHECK_OK(r);
    set = json_object_get(r, "setCookies");
    REQUIRE(json_is_array(set));
    CHECK_INT_EQ(json_array_size(set), 5);  /* each on its own, the comma of Expires kept */
    CHECK_STR_EQ(json_string_value(json_array_get(set, 1)), "b=2; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT");
    json_decref(r);

    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(has_cookie(r, "a=1") && has_cookie(r, "b=2") && !has_cookie(r, "p=3") && !has_cookie(r, "d=5"),
              "not /echo/sub's, not example.com's: %s", cookie_header(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo/sub/x\"}");
    CHECK_MSG(cookie_header(r) && strstr(cookie_header(r), "p=3") != NULL, "cookie: %s", cookie_header(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK(json_object_get(r, "setCookies") == NULL);
    json_decref(r);

    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"a=; Path=/; Max-Age=0\"}}");  /* deleted */
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(!has_cookie(r, "a=1") && has_cookie(r, "b=2"), "a deleted: %s", cookie_header(r));
    json_decref(r);

    other = client_for(NULL);  /* another client has its own jar */
    r = request_json(other, "{\"path\": \"echo\"}");
    CHECK(cookie_header(r) == NULL);
    json_decref(r);
    nl_client_free(other);

    /* A batch runs on the event loop: it shares the jar with the blocking calls. */
    {
        char *results = nl_request_batch(c, "[{\"path\": \"set-cookie\", \"query\": {\"c\": \"z=9; Path=/\"}},"
                                            " {\"path\": \"json\"}]");
        CHECK(results != NULL && strstr(results, "\"ok\":false") == NULL);
        nl_free(results);
    }
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(cookie_header(r) && strstr(cookie_header(r), "z=9") != NULL, "cookie: %s", cookie_header(r));
    json_decref(r);
    nl_client_free(c);
}

static void test_cookies_off_sends_and_keeps_none(void)
{
    nl_client *c = client_for("\"cookies\": false");
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"a=1; Path=/\"}}");
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK(cookie_header(r) == NULL);
    json_decref(r);
    nl_client_free(c);
}

static void test_a_cookie_file_is_read_at_start_and_written_at_free(void)
{
    char dir[] = "/tmp/netlayer-cookies-XXXXXX";
    char *path, *config, line[512];
    int found_new = 0, found_old = 0;
    nl_client *c;
    json_t *r;
    FILE *f;
    REQUIRE(mkdtemp(dir) != NULL);
    path = nlt_format("%s/jar.txt", dir);
    f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\told\tfromfile\n", f);
    fclose(f);

    config = nlt_format("\"cookies\": {\"file\": \"%s\"}", path);
    c = client_for(config);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_STR_EQ(cookie_header(r), "old=fromfile");
    json_decref(r);
    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"new=1; Path=/; Max-Age=3600\"}}");
    json_decref(r);
    nl_client_free(c);
    free(config);

    f = fopen(path, "r");
    REQUIRE(f != NULL);
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "\tnew\t1")) found_new = 1;
        if (strstr(line, "\told\tfromfile")) found_old = 1;
    }
    fclose(f);
    CHECK_MSG(found_new && found_old, "the saved jar lacks a cookie (new %d, old %d)", found_new, found_old);

    config = nlt_format("\"cookies\": {\"file\": \"%s/missing.txt\", \"save\": false}", dir);
    c = client_for(config);  /* a file that does not exist yet is an empty jar */
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    CHECK(cookie_header(r) == NULL);
    json_decref(r);
    nl_client_free(c);
    free(config);
    config = nlt_format("%s/missing.txt", dir);
    CHECK_MSG(access(config, F_OK) != 0, "save: false wrote %s", config);
    free(config);
    free(path);
    {
        char *cmd = nlt_format("rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
        free(cmd);
    }
}

static void test_malformed_cookies_config_is_refused(void)
{
    static const char *const configs[] = {
        "\"cookies\": 1", "\"cookies\": {\"file\": 3}", "\"cookies\": {\"path\": \"x\"}", "\"cookies\": {\"file\": \"\"}",
        "\"cookies\": {\"file\": \"/tmp\"}",
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(configs); i++) {
        char *config = nlt_format("{\"baseURL\": \"%s\", %s}", base_url(), configs[i]);
        char *error = NULL;
        nl_client *c = nl_client_new(config, &error);
        CHECK_MSG(c == NULL && error && strstr(error, "cookies"), "%s: %s", configs[i], error ? error : "(accepted)");
        if (c) nl_client_free(c);
        nl_free(error);
        free(config);
    }
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_cookies_are_kept_per_client_with_their_rules),
        NLT_TEST(test_cookies_off_sends_and_keeps_none),
        NLT_TEST(test_a_cookie_file_is_read_at_start_and_written_at_free),
        NLT_TEST(test_malformed_cookies_config_is_refused),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
