/*
 * test_security.c — contract section 7 and reliability-notes rows 1, 2, 4, 5, 10:
 *  (a) Authorization, Cookie and Proxy-Authorization (from the config, the endpoint
 *      or an ADAPT hook) are not sent after a redirect to another port, host or
 *      scheme, and still are on a same-origin redirect;
 *  (b) 301/302/303 turn a POST into a GET without body and content headers;
 *      307/308 keep method and body;
 *  (c) property test: CR, LF or NUL anywhere in method, header name or value or path
 *      is invalid_request and nothing reaches the server; in a query key or value it is
 *      percent-encoded and the server decodes exactly the text given; a caller's
 *      Content-Length, Transfer-Encoding or Host is invalid_request wherever headers
 *      are set, and nothing reaches the server (no smuggled second request);
 *  (d) URL confusion in paths never changes the host;
 *  (f) a canary secret never appears in log events, error messages or stderr.
 * ((e), TLS verification on by default, is in test_tls.c.)
 *
 * Servers: A, B and T of origins.h; F = faulty.py (raw sockets, for the smuggling
 * case), started here. Loopback only.
 *
 * Under valgrind (NETLAYER_TEST_SLOW) the property test runs fewer cases.
 * Run with "--canary-child <portB>" this binary is the child of the stderr test.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 180
#include "harness.h"
#include "fault_helpers.h"
#include "origins.h"

#define CANARY "CANARY-7d41e"

static const char *g_argv0 = NULL;
static fh_server g_f = { -1, -1, 0, "" };

/* Requests seen by server A since the last reset (the /stats call itself excluded). */
static void stats_reset_a(nl_client *c)
{
    json_t *r = request_doc(c, "{\"path\": \"stats/reset\"}");
    CHECK_OK(r);
    json_decref(r);
}

static long stats_requests_a(nl_client *c)
{
    json_t *r = request_doc(c, "{\"path\": \"stats\"}");
    long n;
    CHECK_OK(r);
    n = (long)jpath_num(r, "value.requests", -1) - 1;
    json_decref(r);
    return n;
}

/* ---- (a) credentials across redirects ------------------------------------------------------ */

enum { SRC_CONFIG, SRC_ENDPOINT, SRC_ADAPT };
static const char *const src_names[] = { "config headers", "endpoint headers", "ADAPT hook" };

static json_t *secret_headers(void)
{
    return json_pack("{s:s, s:s, s:s}", "Authorization", "Bearer secret-auth",
                     "Cookie", "sid=secret-cookie", "Proxy-Authorization", "Basic secret-proxy");
}

typedef struct adapt_state {
    pthread_mutex_t m;
    int calls;
    json_t *urls;
} adapt_state;

static void adapt_add_secrets(const char *event_json, nl_reply *reply, void *user_data)
{
    adapt_state *s = (adapt_state *)user_data;
    json_t *e = json_loads(event_json, 0, NULL);
    pthread_mutex_lock(&s->m);
    s->calls++;
    json_array_append_new(s->urls, json_string(e ? (jpath_str(e, "url") ? jpath_str(e, "url") : "?") : "?"));
    pthread_mutex_unlock(&s->m);
    json_decref(e);
    nl_reply_set(reply, "{\"headers\": {\"Authorization\": \"Bearer secret-auth\", \"Cookie\": "
                        "\"sid=secret-cookie\", \"Proxy-Authorization\": \"Basic secret-proxy\"}}");
}

typedef struct redirect_case {
    const char *label;
    int same_origin;
} redirect_case;

/* One redirect from `start_url` (full URL of a /redirect-to) to `target`, with the
 * secrets from `src`; checks the echo the target returned. */
static void run_credential_redirect(int src, const char *start_url, const char *target, int status,
                                    int expect_sent, const char *label)
{
    json_t *config = json_pack("{s:s, s:f, s:{s:s+}}", "baseURL", base_url(), "timeout", 10.0, "tls",
                               "caFile", g_cert_dir, "/ca.pem");
    json_t *endpoint, *r, *h;
    adapt_state st;
    nl_client *c;
    char status_text[8];
    static const char *const names[] = { "authorization", "cookie", "proxy-authorization" };
    static const char *const values[] = { "Bearer secret-auth", "sid=secret-cookie", "Basic secret-proxy" };
    size_t i;

    pthread_mutex_init(&st.m, NULL);
    st.calls = 0;
    st.urls = json_array();
    if (src == SRC_CONFIG)
        json_object_set_new(config, "headers", secret_headers());
    c = make_client(config);
    if (src == SRC_ADAPT)
        REQUIRE(nl_client_set_hook(c, NL_HOOK_ADAPT, adapt_add_secrets, &st) == 0);
    snprintf(status_text, sizeof(status_text), "%d", status);
    endpoint = json_pack("{s:s, s:b, s:{s:s, s:s}}", "path", start_url, "isFullPath", 1, "query", "url", target,
                         "status", status_text);
    if (src == SRC_ENDPOINT)
        json_object_set_new(endpoint, "headers", secret_headers());
    r = req(c, endpoint);
    CHECK_OK(r);
    h = jpath(r, "value.headers");
    CHECK_MSG(jpath_str(r, "value.path") != NULL && strcmp(jpath_str(r, "value.path"), "/echo") == 0,
              "%s (%s, %d): the redirect did not end at /echo", label, src_names[src], status);
    for (i = 0; i < NLT_COUNT(names); i++) {
        const char *got = jpath_str(h, names[i]);
        if (expect_sent) {
            CHECK_MSG(got != NULL && strcmp(got, values[i]) == 0,
                      "%s, %s, %d: %s was not sent on a same-origin redirect (got \"%s\")", label,
                      src_names[src], status, names[i], got ? got : "(none)");
        } else {
            CHECK_MSG(got == NULL, "%s, %s, %d: %s LEAKED to the new origin: \"%s\"", label,
                      src_names[src], status, names[i], got);
        }
    }
    if (src == SRC_ADAPT && st.calls != 1) {
        char *u = json_dumps(st.urls, JSON_COMPACT);
        nlt_note("%s, %d: ADAPT ran %d times for one request with one redirect: %s", label, status, st.calls,
                 u ? u : "");
        free(u);
    }
    json_decref(r);
    nl_client_free(c);
    json_decref(st.urls);
    pthread_mutex_destroy(&st.m);
}

static void test_credentials_are_not_sent_to_another_port(void)
{
    char *start = nlt_format("%sredirect-to", base_url());
    char *target = nlt_format("http://127.0.0.1:%d/echo", port_b());
    int src, k;
    static const int statuses[] = { 302, 307 };
    (void)port_t();
    for (src = SRC_CONFIG; src <= SRC_ADAPT; src++)
        for (k = 0; k < 2; k++)
            run_credential_redirect(src, start, target, statuses[k], 0, "other port");
    free(start);
    free(target);
}

static void test_credentials_are_not_sent_to_another_host(void)
{
    char *start = nlt_format("%sredirect-to", base_url());
    char *target = nlt_format("http://localhost:%d/echo", port_a());
    int src;
    (void)port_t();
    for (src = SRC_CONFIG; src <= SRC_ADAPT; src++)
        run_credential_redirect(src, start, target, 302, 0, "127.0.0.1 -> localhost");
    free(start);
    free(target);
}

static void test_credentials_are_not_sent_to_another_scheme(void)
{
    int pt = port_t();
    char *https_start = nlt_format("https://127.0.0.1:%d/redirect-to", pt);
    char *http_start = nlt_format("http://127.0.0.1:%d/redirect-to", pt);
    char *http_target = nlt_format("http://127.0.0.1:%d/echo", pt);
    char *https_target = nlt_format("https://127.0.0.1:%d/echo", pt);
    int src;
    for (src = SRC_CONFIG; src <= SRC_ADAPT; src++) {
        run_credential_redirect(src, https_start, http_target, 302, 0, "https -> http, same host and port");
        run_credential_redirect(src, http_start, https_target, 302, 0, "http -> https, same host and port");
    }
    free(https_start);
    free(http_start);
    free(http_target);
    free(https_target);
}

/* Headers the config marks secret (log.redact) stay with their origin like
 * Authorization: dropped on a redirect to another port, kept on a same-origin one;
 * and every hop is logged as a request event of its own. */
typedef struct hop_log {
    pthread_mutex_t m;
    json_t *urls;
} hop_log;

static void collect_request_events(const char *event_json, nl_reply *reply, void *user_data)
{
    hop_log *l = (hop_log *)user_data;
    json_t *e = json_loads(event_json, 0, NULL);
    (void)reply;
    if (e && jpath_str(e, "event") && strcmp(jpath_str(e, "event"), "request") == 0) {
        pthread_mutex_lock(&l->m);
        json_array_append_new(l->urls, json_string(jpath_str(e, "url") ? jpath_str(e, "url") : "?"));
        pthread_mutex_unlock(&l->m);
    }
    json_decref(e);
}

static void test_headers_marked_secret_stay_with_their_origin_and_each_hop_is_logged(void)
{
    char *start = nlt_format("%sredirect-to", base_url());
    char *other = nlt_format("http://127.0.0.1:%d/echo", port_b());
    char *same = nlt_format("%secho", base_url());
    const char *targets[2];
    hop_log log;
    int k;
    nl_client *c = make_client(json_pack("{s:s, s:f, s:{s:s}, s:{s:s, s:[s]}}", "baseURL", base_url(),
                                         "timeout", 10.0, "headers", "X-Api-Key", "secret-key",
                                         "log", "level", "info", "redact", "X-Api-Key"));
    targets[0] = other;
    targets[1] = same;
    pthread_mutex_init(&log.m, NULL);
    log.urls = json_array();
    REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, collect_request_events, &log) == 0);
    for (k = 0; k < 2; k++) {
        json_t *r = req(c, json_pack("{s:s, s:b, s:{s:s}}", "path", start, "isFullPath", 1, "query", "url",
                                     targets[k]));
        const char *got;
        CHECK_OK(r);
        got = jpath_str(r, "value.headers.x-api-key");
        if (k == 0)
            CHECK_MSG(got == NULL, "X-Api-Key (log.redact) LEAKED to another origin: \"%s\"", got);
        else
            CHECK_MSG(got != NULL && strcmp(got, "secret-key") == 0, "X-Api-Key was dropped on a same-origin redirect");
        json_decref(r);
    }
    pthread_mutex_lock(&log.m);
    CHECK_MSG(json_array_size(log.urls) == 4, "two requests of two hops each: %d request events",
              (int)json_array_size(log.urls));
    if (json_array_size(log.urls) == 4) {
        CHECK(strstr(json_string_value(json_array_get(log.urls, 0)), "redirect-to") != NULL);
        CHECK(strstr(json_string_value(json_array_get(log.urls, 1)), "/echo") != NULL);
    }
    pthread_mutex_unlock(&log.m);
    nl_client_free(c);
    json_decref(log.urls);
    pthread_mutex_destroy(&log.m);
    free(start);
    free(other);
    free(same);
}

static void test_credentials_are_kept_on_a_same_origin_redirect(void)
{
    char *start = nlt_format("%sredirect-to", base_url());
    char *absolute = nlt_format("http://127.0.0.1:%d/echo", port_a());
    int src;
    (void)port_t();
    for (src = SRC_CONFIG; src <= SRC_ADAPT; src++) {
        run_credential_redirect(src, start, "/echo", 302, 1, "same origin (relative Location)");
        run_credential_redirect(src, start, absolute, 307, 1, "same origin (absolute Location)");
    }
    free(start);
    free(absolute);
}

/* ---- (b) POST after 301/302/303 and 307/308 ------------------------------------------------ */

static void run_method_redirect(const char *method, int status, const char *target, const char *expect_method,
                                int expect_body)
{
    nl_client *c = client_for("\"timeout\": 10");
    char status_text[8];
    json_t *r, *h;
    snprintf(status_text, sizeof(status_text), "%d", status);
    r = req(c, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:s}}", "path", "redirect-to", "method", method,
                         "query", "url", target, "status", status_text, "body", "x", 1, "y", "payload"));
    CHECK_OK(r);
    h = jpath(r, "value.headers");
    CHECK_MSG(jpath_str(r, "value.method") != NULL && strcmp(jpath_str(r, "value.method"), expect_method) == 0,
              "%s + %d -> method %s, expected %s", method, status,
              jpath_str(r, "value.method") ? jpath_str(r, "value.method") : "(none)", expect_method);
    if (expect_body) {
        CHECK_MSG(jpath_str(r, "value.body") != NULL && strstr(jpath_str(r, "value.body"), "payload") != NULL,
                  "%s + %d: the body was not repeated (got \"%s\")", method, status,
                  jpath_str(r, "value.body") ? jpath_str(r, "value.body") : "(none)");
        CHECK_MSG(jpath_str(h, "content-type") != NULL && strstr(jpath_str(h, "content-type"), "json") != NULL,
                  "%s + %d: Content-Type lost", method, status);
    } else {
        CHECK_MSG(jpath_num(r, "value.bodyLength", -1) == 0, "%s + %d -> GET still carries %.0f body bytes",
                  method, status, jpath_num(r, "value.bodyLength", -1));
        CHECK_MSG(jpath_str(h, "content-type") == NULL, "%s + %d -> GET still has Content-Type: %s", method,
                  status, jpath_str(h, "content-type"));
        CHECK_MSG(jpath_str(h, "content-length") == NULL, "%s + %d -> GET still has Content-Length: %s",
                  method, status, jpath_str(h, "content-length"));
    }
    json_decref(r);
    nl_client_free(c);
}

static void test_post_becomes_get_without_body_after_301_302_303(void)
{
    char *other = nlt_format("http://127.0.0.1:%d/echo", port_b());
    static const int statuses[] = { 301, 302, 303 };
    int i;
    for (i = 0; i < 3; i++) {
        run_method_redirect("POST", statuses[i], other, "GET", 0);
        run_method_redirect("POST", statuses[i], "/echo", "GET", 0);
    }
    /* 303 turns any method but HEAD into GET */
    run_method_redirect("PUT", 303, other, "GET", 0);
    free(other);
}

static void test_post_keeps_method_and_body_after_307_308(void)
{
    char *other = nlt_format("http://127.0.0.1:%d/echo", port_b());
    run_method_redirect("POST", 307, other, "POST", 1);
    run_method_redirect("POST", 308, other, "POST", 1);
    run_method_redirect("POST", 307, "/echo", "POST", 1);
    run_method_redirect("PUT", 308, other, "PUT", 1);
    free(other);
}

/* ---- (c) CR, LF, NUL: property test ------------------------------------------------------- */
/* Refused where HTTP forbids them (method, header, path); carried percent-encoded in a
 * query key or value (contract section 8), where the server's parse_qs must give back
 * exactly the key and value sent. */

static uint64_t g_lcg = 0x9E3779B97F4A7C15ULL;

static uint32_t lcg_next(void)
{
    g_lcg = g_lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g_lcg >> 33);
}

static uint32_t lcg_below(uint32_t n)
{
    return lcg_next() % n;
}

/* A random string over `alphabet` with 1 to 3 of CR, LF, NUL at random positions. */
static size_t poisoned_string(char *out, size_t cap, const char *alphabet)
{
    static const char bad[] = { '\r', '\n', '\0' };
    size_t n = 1 + lcg_below(16), i, alen = strlen(alphabet);
    int k, nbad = 1 + (int)lcg_below(3);
    if (n + (size_t)nbad + 1 > cap)
        n = cap - (size_t)nbad - 1;
    for (i = 0; i < n; i++)
        out[i] = alphabet[lcg_below((uint32_t)alen)];
    for (k = 0; k < nbad; k++) {
        size_t pos = lcg_below((uint32_t)(n + 1));
        memmove(out + pos + 1, out + pos, n - pos);
        out[pos] = bad[lcg_below(3)];
        n++;
    }
    out[n] = '\0';
    return n;
}

static const char *const place_names[] = { "method", "header name", "header value", "path", "query value",
                                           "query key" };

/* `s` percent-encoded as a query component: all but RFC 3986 unreserved bytes. */
static void percent_encode(char *out, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (isalnum(b) || b == '-' || b == '.' || b == '_' || b == '~')
            *out++ = (char)b;
        else
            out += sprintf(out, "%%%02X", b);
    }
    *out = '\0';
}

/* Sends `endpoint` (stolen), whose query is the one item `key` = `value`, to /echo;
 * whether the item went out percent-encoded and the server's parse_qs decoded exactly
 * it. (A key holding NUL cannot be a jansson object key: only its encoding is checked.) */
static int query_item_arrives(nl_client *c, json_t *endpoint, const char *key, size_t klen, const char *value,
                              size_t vlen)
{
    char *doc = json_dumps(endpoint, JSON_COMPACT), *text, wire[512], *expect;
    json_t *r, *values, *v;
    int ok;
    json_decref(endpoint);
    REQUIRE(doc != NULL);
    text = nl_request(c, doc);
    free(doc);
    REQUIRE(text != NULL);
    percent_encode(wire, key, klen);
    strcat(wire, "=");
    percent_encode(wire + strlen(wire), value, vlen);
    expect = nlt_format("\"query\":\"%s\"", wire);
    ok = strncmp(text, "{\"ok\":true", 10) == 0 && strstr(text, expect) != NULL;
    free(expect);
    if (ok && memchr(key, '\0', klen) == NULL) {
        r = json_loads(text, JSON_ALLOW_NUL, NULL);
        values = json_object_getn(jpath(r, "value.args"), key, klen);
        v = json_array_get(values, 0);
        ok = json_object_size(jpath(r, "value.args")) == 1 && json_array_size(values) == 1
             && json_string_length(v) == vlen && memcmp(json_string_value(v), value, vlen) == 0;
        json_decref(r);
    }
    if (!ok)
        nlt_note("query item not carried: %.600s", text);
    nl_free(text);
    return ok;
}

static void test_cr_lf_nul_are_refused_in_method_header_path_and_encoded_in_query(void)
{
    int cases = fh_slow_mode() ? 400 : 2400;
    nl_client *c = client_for("\"timeout\": 5");
    int i, wrong = 0, per_place[6] = { 0 }, sent = 0;
    double t0;
    long seen;
    if (fh_slow_mode())
        nlt_note("valgrind: %d generated cases instead of 2400", cases);
    stats_reset_a(c);
    t0 = now_ms();
    for (i = 0; i < cases; i++) {
        char s[64];
        size_t n;
        int place = (int)lcg_below(6);
        json_t *ep = json_object(), *r;
        switch (place) {
        case 0:
            n = poisoned_string(s, sizeof(s), "GETPOSTPUTDELETEHEADOPTIONS");
            json_object_set_new(ep, "path", json_string("echo"));
            json_object_set_new(ep, "method", json_stringn(s, n));
            break;
        case 1:
            n = poisoned_string(s, sizeof(s), "abcdefghijklmnopqrstuvwxyz0123456789-");
            json_object_set_new(ep, "path", json_string("echo"));
            json_object_set_new(ep, "headers", json_object());
            json_object_set_new(json_object_get(ep, "headers"), "X-Pre", json_string("ok"));
            {
                char name[80];
                memcpy(name, "X-", 2);
                memcpy(name + 2, s, n);
                json_object_setn_new(json_object_get(ep, "headers"), name, n + 2, json_string("v"));
            }
            break;
        case 2:
            n = poisoned_string(s, sizeof(s), "abc XYZ 0123456789:;=,/\"'()<>@[]{}?!#$%&*+-_.~^`|");
            json_object_set_new(ep, "path", json_string("echo"));
            json_object_set_new(ep, "headers", json_pack("{s:s#}", "X-Prop", s, (int)n));
            break;
        case 3:
            n = poisoned_string(s, sizeof(s), "abcdefghijklmnopqrstuvwxyz0123456789-._~/");
            {
                char path[80];
                memcpy(path, "echo/", 5);
                memcpy(path + 5, s, n);
                json_object_set_new(ep, "path", json_stringn(path, n + 5));
            }
            break;
        case 4:
            n = poisoned_string(s, sizeof(s), "abc XYZ 0123456789&=?#/+%;,");
            json_object_set_new(ep, "path", json_string("echo"));
            json_object_set_new(ep, "query", json_pack("{s:s#}", "q", s, (int)n));
            break;
        default:
            n = poisoned_string(s, sizeof(s), "abcdefghijklmnopqrstuvwxyz&=");
            json_object_set_new(ep, "path", json_string("echo"));
            json_object_set_new(ep, "query", json_object());
            json_object_setn_new(json_object_get(ep, "query"), s, n, json_string("v"));
            break;
        }
        if (place >= 4) {
            int arrived = place == 4 ? query_item_arrives(c, ep, "q", 1, s, n)
                                     : query_item_arrives(c, ep, s, n, "v", 1);
            sent++;
            if (!arrived) {
                if (wrong < 10)
                    nlt_fail(__FILE__, __LINE__, "the server decoded the query item sent", "case %d (%s)", i,
                             place_names[place]);
                wrong++;
            }
            per_place[place]++;
            continue;
        }
        r = req(c, ep);
        if (result_ok(r) || strcmp(error_kind(r), "invalid_request") != 0) {
            char *d = json_dumps(r, JSON_COMPACT);
            if (wrong < 10)
                nlt_fail(__FILE__, __LINE__, "error.kind == invalid_request", "case %d (%s): %.600s", i,
                         place_names[place], d ? d : "(null)");
            free(d);
            wrong++;
        }
        per_place[place]++;
        json_decref(r);
    }
    CHECK_INT_EQ(wrong, 0);
    seen = stats_requests_a(c);
    CHECK_MSG(seen == sent, "the server saw %ld requests; %d query cases were sent and %d refused", seen, sent,
              cases - sent);
    nlt_note("%d cases (method %d, header name %d, header value %d, path %d, query value %d, query key %d)"
             " in %.0f ms; server saw %ld requests",
             cases, per_place[0], per_place[1], per_place[2], per_place[3], per_place[4], per_place[5],
             now_ms() - t0, seen);
    nl_client_free(c);
}

/* Headers from an ADAPT hook or from the config get the same treatment. */
typedef struct poison_reply {
    char doc[256];
} poison_reply;

static void adapt_poison(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json;
    nl_reply_set(reply, ((poison_reply *)user_data)->doc);
}

static void test_cr_lf_nul_in_adapt_hook_and_config_headers_is_refused(void)
{
    nl_client *c = client_for("\"timeout\": 5");
    nl_client *probe = client_for(NULL);
    poison_reply pr;
    int i;
    long seen;
    static const char *const replies[] = {
        "{\"headers\": {\"X-A\": \"v\\r\\nInjected: 1\"}}",
        "{\"headers\": {\"X-A\": \"v\\nInjected: 1\"}}",
        "{\"headers\": {\"X-A\": \"v\\u0000tail\"}}",
        "{\"headers\": {\"X-A\\r\\nInjected\": \"v\"}}",
        "{\"headers\": {\"Authorization\": \"Bearer t\\r\\n\\r\\nGET /smuggled HTTP/1.1\"}}",
    };
    static const char *const configs[] = {
        "\"headers\": {\"X-A\": \"v\\r\\nInjected: 1\"}",
        "\"headers\": {\"X-A\\n\": \"v\"}",
        "\"headers\": {\"X-A\": \"v\\u0000\"}",
        "\"headers\": {\"X-A\": \"v\\u0001\"}",
        "\"userAgent\": \"ua\\r\\nInjected: 1\"",
    };
    REQUIRE(nl_client_set_hook(c, NL_HOOK_ADAPT, adapt_poison, &pr) == 0);
    stats_reset_a(probe);
    for (i = 0; i < (int)NLT_COUNT(replies); i++) {
        json_t *r;
        snprintf(pr.doc, sizeof(pr.doc), "%s", replies[i]);
        r = request_doc(c, "{\"path\": \"echo\"}");
        if (!result_ok(r) && strcmp(error_kind(r), "invalid_request") == 0) {
            /* expected */
        } else {
            char *d = json_dumps(r, JSON_COMPACT);
            nlt_fail(__FILE__, __LINE__, "ADAPT reply with CR/LF/NUL -> invalid_request", "reply %s -> %.600s",
                     replies[i], d ? d : "(null)");
            free(d);
        }
        json_decref(r);
    }
    seen = stats_requests_a(probe);
    CHECK_MSG(seen == 0, "the server saw %ld requests from poisoned ADAPT replies", seen);
    nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL);
    for (i = 0; i < (int)NLT_COUNT(configs); i++) {
        char *cfg = nlt_format("{\"baseURL\": \"%s\", %s}", base_url(), configs[i]);
        char *err = NULL;
        nl_client *bad = nl_client_new(cfg, &err);
        json_t *e = err ? json_loads(err, 0, NULL) : NULL;
        CHECK_MSG(bad == NULL, "config %s was accepted", cfg);
        CHECK_MSG(e != NULL && strcmp(error_kind(e), "invalid_request") == 0, "config %s -> %s", cfg,
                  err ? err : "(no error document)");
        json_decref(e);
        nl_free(err);
        nl_client_free(bad);
        free(cfg);
    }
    nl_client_free(probe);
    nl_client_free(c);
}

/* ---- (c) framing headers and Host belong to the library ---------------------------------- */

/* faulty.py (raw sockets: it reads exactly the framing a request declares). */
static int port_f(void)
{
    if (g_f.port <= 0)
        REQUIRE_MSG(fh_server_start(&g_f, "faulty.py", NULL), "cannot start faulty.py");
    return g_f.port;
}

/* How many requests faulty.py has read for `path` since its last /stats/reset. */
static long faulty_requests(nl_client *c, const char *path)
{
    json_t *r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/stats\", \"isFullPath\": true}", port_f());
    json_t *n = json_object_get(jpath(r, "value.requests"), path);
    long v = json_is_integer(n) ? (long)json_integer_value(n) : 0;
    CHECK_OK(r);
    json_decref(r);
    return v;
}

/* An operation per name, each with a header parameter of that name. */
static char *openapi_with_header_parameters(const char *const *names, int count)
{
    char *paths = nlt_format("%s", ""), *doc;
    int i;
    for (i = 0; i < count; i++) {
        char *more = nlt_format("%s%s\"/echo/%d\": {\"post\": {\"operationId\": \"op%d\", \"parameters\": [{\"name\": \"%s\","
                                " \"in\": \"header\", \"schema\": {\"type\": \"string\"}}], \"responses\": {\"200\": {\"description\": \"ok\"}}}}",
                                paths, i ? ", " : "", i, i, names[i]);
        free(paths);
        paths = more;
    }
    doc = nlt_format("{\"openapi\": \"3.0.3\", \"info\": {\"title\": \"t\", \"version\": \"1\"}, \"paths\": {%s}}", paths);
    free(paths);
    return doc;
}

/* Content-Length and Transfer-Encoding say where the body ends, and libcurl sends a
 * caller's as given: a Content-Length of 0 before a body that holds a second request
 * put that request on the wire. Host picks the cookies libcurl sends. So a caller's
 * (any case) is refused naming the document key and the header, from config headers,
 * endpoint headers, an ADAPT reply and an OpenAPI header parameter, and nothing is sent. */
static void test_framing_and_host_headers_are_refused_wherever_a_caller_sets_headers(void)
{
    static const char *const names[] = { "Content-Length", "content-length", "Transfer-Encoding",
                                         "TRANSFER-ENCODING", "Host", "hOsT" };
    static const char *const values[] = { "0", "0", "chunked", "chunked", "evil.example", "evil.example" };
    nl_client *c = client_for("\"timeout\": 5");
    nl_client *probe = client_for(NULL);
    char *openapi = openapi_with_header_parameters(names, (int)NLT_COUNT(names));
    nl_client *api = client_with_config(nlt_format("{\"baseURL\": \"%s\", \"openapi\": {\"document\": %s}}", base_url(),
                                                   openapi));
    poison_reply pr;
    json_t *r;
    int i;
    long seen;

    /* The smuggling itself, to a server that reads exactly the framing it is given. */
    r = request_json(probe, "{\"path\": \"http://127.0.0.1:%d/stats/reset\", \"isFullPath\": true}", port_f());
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/plain\", \"isFullPath\": true, \"method\": \"POST\","
                        " \"headers\": {\"Content-Length\": \"0\"}, \"bodyEncoding\": \"text\","
                        " \"body\": \"GET /smuggled HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n\"}", port_f());
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "key 'headers'") && strstr(error_message(r), "'Content-Length'"), "%s",
              error_message(r));
    json_decref(r);
    sleep_ms(200);  /* a smuggled request would be read right after the first */
    CHECK_MSG(faulty_requests(probe, "/smuggled") == 0, "a second request reached the wire");
    CHECK_MSG(faulty_requests(probe, "/plain") == 0, "the request with a caller's Content-Length was sent");

    stats_reset_a(probe);
    REQUIRE(nl_client_set_hook(c, NL_HOOK_ADAPT, adapt_poison, &pr) == 0);
    for (i = 0; i < (int)NLT_COUNT(names); i++) {
        char *needle = nlt_format("'%s'", names[i]);
        char *cfg = nlt_format("{\"baseURL\": \"%s\", \"headers\": {\"%s\": \"%s\"}}", base_url(), names[i], values[i]);
        char *err = NULL, *overlay;
        nl_client *bad = nl_client_new(cfg, &err);
        json_t *e = err ? json_loads(err, 0, NULL) : NULL;
        int is_host = strlen(names[i]) == 4;
        CHECK_MSG(bad == NULL && e != NULL && strcmp(error_kind(e), "invalid_request") == 0
                  && strstr(error_message(e), "config key 'headers'") && strstr(error_message(e), needle),
                  "config %s -> %s", cfg, err ? err : "(accepted)");
        CHECK_MSG(!is_host || (e && strstr(error_message(e), "'resolve'") && strstr(error_message(e), "'unixSocket'")),
                  "the Host message points at neither resolve nor unixSocket: %s", err ? err : "");
        json_decref(e);
        nl_free(err);
        nl_client_free(bad);
        free(cfg);

        /* Endpoint headers: the ADAPT hook answers nothing for now. */
        snprintf(pr.doc, sizeof(pr.doc), "{}");
        r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"%s\": \"%s\"}}", names[i], values[i]);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r), "endpoint key 'headers'") && strstr(error_message(r), needle), "endpoint: %s",
                  error_message(r));
        json_decref(r);

        snprintf(pr.doc, sizeof(pr.doc), "{\"headers\": {\"%s\": \"%s\"}}", names[i], values[i]);
        r = request_doc(c, "{\"path\": \"echo\"}");
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r), "NL_HOOK_ADAPT reply key 'headers'") && strstr(error_message(r), needle),
                  "ADAPT reply: %s", error_message(r));
        json_decref(r);

        overlay = nlt_format("{\"params\": {\"%s\": \"%s\"}}", names[i], values[i]);
        {
            char *op = nlt_format("op%d", i);
            char *text = nl_call(api, op, overlay);
            r = nlt_parse(text, "nl_call");
            nl_free(text);
            free(op);
        }
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r), "header parameter") && strstr(error_message(r), needle),
                  "OpenAPI header parameter: %s", error_message(r));
        json_decref(r);
        free(overlay);
        free(needle);
    }
    nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL);
    seen = stats_requests_a(probe);
    CHECK_MSG(seen == 0, "the server saw %ld requests with a caller's framing or Host header", seen);
    r = request_doc(c, "{\"path\": \"echo\", \"headers\": {\"X-Content-Length\": \"0\", \"Hostname\": \"h\"}}");
    CHECK_OK(r);  /* names that only resemble them pass */
    json_decref(r);
    nl_client_free(api);
    free(openapi);
    nl_client_free(probe);
    nl_client_free(c);
}

/* ---- (d) URL confusion -------------------------------------------------------------------- */

static void test_url_confusion_in_paths_never_changes_the_host(void)
{
    static const struct {
        const char *path;
        int must_reach; /* a legal path: must reach the base server */
    } cases[] = {
        { "//evil.example/x", 0 },
        { "http://other/", 0 },
        { "https://evil.example/x", 0 },
        { "@other/x", 1 },
        { "\\\\evil/x", 0 },
        { "/\\\\evil", 0 },
        { "%2F%2Fevil/x", 1 },
        { "#@evil.example/x", 0 },
        { "?@evil.example/x", 0 },
        { ":@evil.example/x", 0 },
        { "../..//evil.example/x", 0 },
        { "/%2e%2e//evil.example/x", 0 },
        { "x@evil.example:80/", 0 },
        { "\\/evil.example/x", 0 },
        { "/\t/evil.example", 0 },
    };
    char *base = nlt_format("%secho/", base_url());
    char *host = nlt_format("127.0.0.1:%d", port_a());
    nl_client *c = make_client(json_pack("{s:s, s:f}", "baseURL", base, "timeout", 5.0));
    nl_client *probe = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        json_t *r;
        long seen;
        const char *kind;
        stats_reset_a(probe);
        r = req(c, json_pack("{s:s}", "path", cases[i].path));
        seen = stats_requests_a(probe);
        kind = error_kind(r);
        if (!result_ok(r) && (strcmp(kind, "url_generation") == 0 || strcmp(kind, "invalid_request") == 0)) {
            CHECK_MSG(!cases[i].must_reach, "path \"%s\" is legal but was refused: %s (%s)", cases[i].path, kind,
                      error_message(r));
            CHECK_MSG(seen == 0, "path \"%s\" refused (%s) but the server saw %ld requests", cases[i].path, kind,
                      seen);
            nlt_note("path %-26s -> %s", cases[i].path, kind);
        } else {
            /* it went out: it must have reached the base server, and nowhere else */
            CHECK_MSG(seen == 1, "path \"%s\" -> %s (%s), but the base server saw %ld requests", cases[i].path,
                      result_ok(r) ? "ok" : kind, error_message(r), seen);
            CHECK_MSG(strcmp(kind, "not_connected") != 0 && strcmp(kind, "timeout") != 0,
                      "path \"%s\" went to another host: %s (%s)", cases[i].path, kind, error_message(r));
            if (result_ok(r)) {
                const char *p = jpath_str(r, "value.path");
                const char *h = jpath_str(r, "value.headers.host");
                CHECK_MSG(h != NULL && strcmp(h, host) == 0, "path \"%s\": Host %s", cases[i].path, h ? h : "?");
                CHECK_MSG(p != NULL && strncmp(p, "/echo/", 6) == 0, "path \"%s\" arrived as %s", cases[i].path,
                          p ? p : "?");
                nlt_note("path %-26s -> reached the base server as %s", cases[i].path, p ? p : "?");
            } else {
                nlt_note("path %-26s -> %s from the base server (status %lld)", cases[i].path, kind,
                         result_status(r));
            }
        }
        json_decref(r);
    }
    nl_client_free(probe);
    nl_client_free(c);
    free(base);
    free(host);
}

/* Dot segments and path parameters never leave the base URL's path: ".." climbing
   above it (also written %2e%2e) is refused before anything is sent, and so are
   parameters that would change the route (empty, "." or ".."); ".." that stays
   inside the base path resolves as usual. */
static void test_dot_segments_and_params_never_leave_the_base_path(void)
{
    static const struct {
        const char *path;
        const char *arrives; /* the path the server sees, or NULL: refused */
    } paths[] = {
        { "users/../../../admin", NULL },
        { "../admin", NULL },
        { "a/%2e%2e/%2E%2E/admin", NULL },
        { "a/.%2e/.%2E/admin", NULL },
        { "./../x", NULL },
        { "a/b/../../c", "/echo/c" },
        { "a/./b/..", "/echo/a/" },
        { "a/..b/c", "/echo/a/..b/c" },
    };
    static const char *bad_params[] = { "..", ".", "" };
    char *base = nlt_format("%secho/", base_url());
    nl_client *c = make_client(json_pack("{s:s, s:f, s:{s:{s:s, s:s}}}", "baseURL", base, "timeout", 5.0,
                                         "endpoints", "posts", "path", "users/{id}/posts", "method", "GET"));
    nl_client *probe = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(paths); i++) {
        json_t *r;
        long seen;
        stats_reset_a(probe);
        r = req(c, json_pack("{s:s}", "path", paths[i].path));
        seen = stats_requests_a(probe);
        if (paths[i].arrives == NULL) {
            CHECK_MSG(!result_ok(r) && strcmp(error_kind(r), "url_generation") == 0,
                      "path \"%s\" must be refused, got %s", paths[i].path, result_ok(r) ? "ok" : error_kind(r));
            CHECK_MSG(seen == 0, "path \"%s\" refused but the server saw %ld requests", paths[i].path, seen);
        } else {
            CHECK_OK(r);
            CHECK_MSG(jpath_str(r, "value.path") && strcmp(jpath_str(r, "value.path"), paths[i].arrives) == 0,
                      "path \"%s\" arrived as %s, not %s", paths[i].path,
                      jpath_str(r, "value.path") ? jpath_str(r, "value.path") : "?", paths[i].arrives);
        }
        json_decref(r);
    }
    for (i = 0; i < NLT_COUNT(bad_params); i++) {
        char *overlay = nlt_format("{\"params\": {\"id\": \"%s\"}}", bad_params[i]);
        char *text;
        json_t *r;
        stats_reset_a(probe);
        text = nl_call(c, "posts", overlay);
        r = nlt_parse(text, "call");
        nl_free(text);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(nlt_stristr(error_message(r), "'id'") != NULL, "the message names the parameter: %s",
                  error_message(r));
        CHECK_INT_EQ(stats_requests_a(probe), 0);
        json_decref(r);
        free(overlay);
    }
    {
        char *text = nl_call(c, "posts", "{\"params\": {\"id\": \"a b/..\"}}");  /* one segment, encoded */
        json_t *r = nlt_parse(text, "call");
        nl_free(text);
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/users/a%20b%2F../posts");
        json_decref(r);
    }
    nl_client_free(probe);
    nl_client_free(c);
    free(base);
}

/* ---- (f) secrets never in logs, error messages or stderr ------------------------------------- */

/* base64 of "user:" CANARY, the form user-info takes in a Basic Authorization header. */
static char *basic_of_canary(void)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *in = "user:" CANARY;
    size_t n = strlen(in), i, o = 0;
    char *out = (char *)malloc(n * 2 + 4);
    if (out == NULL)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = ((unsigned char)in[i] << 16) | ((unsigned char)in[i + 1] << 8) | (unsigned char)in[i + 2];
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = tbl[(v >> 6) & 63];
        out[o++] = tbl[v & 63];
    }
    out[o] = '\0';
    /* the leading full groups are enough to recognise it */
    return out;
}

typedef struct leak_log {
    pthread_mutex_t m;
    int events;
    int leaks;
    int with_sent;  /* events showing the lines libcurl sent, Authorization among them */
    char *basic;
} leak_log;

static void leak_log_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    leak_log *s = (leak_log *)user_data;
    (void)reply;
    pthread_mutex_lock(&s->m);
    s->events++;
    if (strstr(event_json, "\"sent\":[\"") != NULL && strstr(event_json, "\"Authorization: <redacted>\"") != NULL)
        s->with_sent++;
    if (strstr(event_json, CANARY) != NULL || (s->basic && strstr(event_json, s->basic) != NULL)) {
        if (s->leaks++ < 5)
            nlt_fail(__FILE__, __LINE__, "log event without the secret", "%.1500s", event_json);
    }
    pthread_mutex_unlock(&s->m);
}

/* Checks a result: no secret outside "value" and "error.body" (server data). */
static void check_result_clean(json_t *r, const char *what, const char *basic)
{
    json_t *copy = json_deep_copy(r);
    json_t *err;
    char *text;
    if (copy == NULL)
        return;
    json_object_del(copy, "value");
    err = json_object_get(copy, "error");
    if (json_is_object(err))
        json_object_del(err, "body");
    text = json_dumps(copy, JSON_COMPACT);
    CHECK_MSG(text != NULL && strstr(text, CANARY) == NULL && (basic == NULL || strstr(text, basic) == NULL),
              "%s: the result leaks the secret: %.1200s", what, text ? text : "(null)");
    free(text);
    json_decref(copy);
}

/* The scenario: redirects (same origin and cross origin), failures, retries.
 * With `log` NULL it logs to stderr (the child of the stderr test). Returns the
 * number of requests made. */
static int canary_scenario(const char *base, int pb, leak_log *log, const char *basic)
{
    char *userinfo_base = nlt_format("http://user:%s@%s", CANARY, base + 7);
    char *cfg = nlt_format("{\"baseURL\": \"%s\", \"timeout\": 5, \"headers\": {\"Authorization\": \"Bearer %s\"},"
                           " \"query\": {\"api_key\": \"%s\"},"
                           " \"log\": {\"level\": \"debug\", \"redactQuery\": [\"custom\"]},"
                           " \"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}}", userinfo_base, CANARY, CANARY);
    static const char *const endpoints[] = {
        "{\"path\": \"json\", \"headers\": {\"Cookie\": \"sid=" CANARY "\"}}",
        "{\"path\": \"echo\", \"headers\": {\"Cookie\": \"sid=" CANARY "\"}}",
        "{\"path\": \"echo\", \"query\": {\"custom\": \"" CANARY "\", \"Access-Token\": \"" CANARY "\"}}",
        "{\"path\": \"redirect-to\", \"query\": {\"url\": \"/echo\"}, \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"redirect/2\", \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"redirect-to\", \"query\": {\"url\": \"http://127.0.0.1:%d/echo\", \"status\": 307},"
        " \"method\": \"POST\", \"body\": {\"a\": 1}, \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"status/404\", \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"status/401\", \"headers\": {\"Proxy-Authorization\": \"Basic " CANARY "\"}}",
        "{\"path\": \"flaky/canary-%ld-%d\", \"query\": {\"fails\": 2}, \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"flaky/canary-%ld-%d\", \"query\": {\"fails\": 5}, \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"delay/2000\", \"timeout\": 0.2, \"retry\": {\"maxAttempts\": 2}}",
        "{\"path\": \"notjson\", \"headers\": {\"Cookie\": \"a=" CANARY "\"}}",
        "{\"path\": \"http://user:" CANARY "@127.0.0.1:%d/json\", \"isFullPath\": true}",
        "{\"path\": \"http://user:" CANARY "@nothing.invalid/json\", \"isFullPath\": true,"
        " \"retry\": {\"maxAttempts\": 1}}",
    };
    nl_client *c = nl_client_new(cfg, NULL);
    size_t i;
    int n = 0;
    if (c == NULL) {
        free(userinfo_base);
        free(cfg);
        return -1;
    }
    if (log != NULL)
        nl_client_set_hook(c, NL_HOOK_LOG, leak_log_hook, log);
    for (i = 0; i < NLT_COUNT(endpoints); i++) {
        char *doc;
        char *text;
        if (strstr(endpoints[i], "%d/echo") != NULL)
            doc = nlt_format(endpoints[i], pb);
        else if (strstr(endpoints[i], "%ld") != NULL)
            doc = nlt_format(endpoints[i], (long)getpid(), (int)i);
        else if (strstr(endpoints[i], "%d/json") != NULL)
            doc = nlt_format(endpoints[i], fh_closed_port());
        else
            doc = nlt_format("%s", endpoints[i]);
        text = nl_request(c, doc);
        n++;
        if (log != NULL) {
            json_t *r = nlt_parse(text, "nl_request");
            check_result_clean(r, doc, basic);
            json_decref(r);
        }
        nl_free(text);
        free(doc);
    }
    nl_client_free(c);
    free(userinfo_base);
    free(cfg);
    return n;
}

static void test_canary_secret_never_in_log_events_or_error_messages(void)
{
    leak_log s;
    int n;
    pthread_mutex_init(&s.m, NULL);
    s.events = 0;
    s.leaks = 0;
    s.with_sent = 0;
    s.basic = basic_of_canary();
    n = canary_scenario(base_url(), port_b(), &s, s.basic);
    CHECK(n > 0);
    CHECK_INT_EQ(s.leaks, 0);
    CHECK_MSG(s.with_sent >= n / 2, "only %d events with the lines sent for %d requests", s.with_sent, n);
    CHECK_MSG(s.events >= 2 * n, "only %d log events for %d requests at level debug", s.events, n);
    nlt_note("%d requests, %d log events, %d leaks", n, s.events, s.leaks);
    free(s.basic);
    pthread_mutex_destroy(&s.m);
}

static void test_canary_secret_never_on_stderr_at_debug(void)
{
    int fds[2];
    pid_t pid;
    char *out = NULL, *basic = basic_of_canary(), portb[16];
    size_t len = 0, cap = 0;
    int status = 0;
    REQUIRE(g_argv0 != NULL);
    (void)base_url();
    snprintf(portb, sizeof(portb), "%d", port_b());
    REQUIRE(pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(fds[1], STDERR_FILENO);
        if (devnull >= 0)
            dup2(devnull, STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(g_argv0, g_argv0, "--canary-child", portb, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        ssize_t got;
        if (len + 4097 > cap) {
            cap = cap ? cap * 2 : 65536;
            out = (char *)realloc(out, cap);
            REQUIRE(out != NULL);
        }
        got = read(fds[0], out + len, 4096);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fds[0]);
    out[len] = '\0';
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    CHECK_MSG(len > 1000, "only %zu bytes on stderr at level debug", len);
    {
        const char *hit = strstr(out, CANARY);
        if (hit == NULL && basic != NULL)
            hit = strstr(out, basic);
        CHECK_MSG(hit == NULL, "stderr leaks the secret near: %.600s", hit ? (hit - out > 300 ? hit - 300 : out) : "");
    }
    nlt_note("%zu bytes of debug log on stderr", len);
    free(out);
    free(basic);
}

static int canary_child_main(const char *portb)
{
    const char *b = getenv("NETLAYER_TEST_URL");
    if (b == NULL || strncmp(b, "http://", 7) != 0)
        return 2;
    return canary_scenario(b, atoi(portb), NULL, NULL) > 0 ? 0 : 3;
}

/* The auth key (config and endpoint): basic, bearer, digest and .netrc reach the
 * server; an endpoint's {} turns the config's off; the secrets are never in a log
 * event at debug, and none crosses to another origin on a redirect. */
static void test_auth_helpers_authenticate_and_keep_their_secrets(void)
{
    /* The server is given hashes of the password (its URL is logged): sha256 of it, and
     * for digest MD5("dan:netlayer:" password), both computed with python3 -c. */
    static const char *const password = "Pa55-" CANARY;
    static const char *const password_sha256 = "8e77baec58dd3e6044a817bb07c12be19fbf0d131a302ac4f2f59df5ba18be51";
    static const char *const dan_ha1 = "bc978aecdb85d809a3b0a79c887b0260";
    leak_log log = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, NULL };
    char dir[] = "/tmp/netlayer-netrc-XXXXXX";
    char *cfg, *netrc, *doc, *target;  /* client_with_config takes cfg */
    nl_client *c;
    json_t *r;
    FILE *f;

    cfg = nlt_format("{\"baseURL\": \"%s\", \"timeout\": 5, \"log\": {\"level\": \"debug\"},"
                     " \"auth\": {\"basic\": {\"user\": \"ann\", \"password\": \"%s\"}}}", base_url(), password);
    c = client_with_config(cfg);
    REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, leak_log_hook, &log) == 0);
    doc = nlt_format("{\"path\": \"basic-auth/ann/sha256:%s\"}", password_sha256);
    r = request_doc(c, doc);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.user"), "ann");
    json_decref(r);
    free(doc);
    r = request_json(c, "{\"path\": \"echo\", \"auth\": {}}");  /* turned off for this endpoint */
    CHECK_OK(r);
    CHECK(jpath_str(r, "value.headers.authorization") == NULL);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"auth\": {\"bearer\": \"tok-%s\"}}", CANARY);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.authorization"), "Bearer tok-" CANARY);
    json_decref(r);
    doc = nlt_format("{\"path\": \"digest-auth/dan/ha1:%s\", \"auth\": {\"digest\": {\"user\": \"dan\", \"password\": \"%s\"}}}",
                     dan_ha1, password);
    r = request_doc(c, doc);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.user"), "dan");
    json_decref(r);
    free(doc);
    doc = nlt_format("{\"path\": \"digest-auth/dan/ha1:%s\", \"auth\": {\"digest\": {\"user\": \"dan\", \"password\": \"no\"}}}",
                     dan_ha1);
    r = request_doc(c, doc);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(jpath_num(r, "status", 0), 401);
    json_decref(r);
    free(doc);

    /* Across origins: neither the config's basic nor an endpoint's digest follows. */
    target = nlt_format("http://127.0.0.1:%d/echo", port_b());
    r = request_json(c, "{\"path\": \"redirect-to\", \"query\": {\"url\": \"%s\", \"status\": 307}}", target);
    CHECK_OK(r);
    CHECK(jpath_str(r, "value.headers.authorization") == NULL);
    json_decref(r);
    r = request_json(c, "{\"path\": \"redirect-to\", \"query\": {\"url\": \"%s\"},"
                        " \"auth\": {\"digest\": {\"user\": \"dan\", \"password\": \"x\"}}}", target);
    CHECK_OK(r);
    CHECK(jpath_str(r, "value.headers.authorization") == NULL);
    json_decref(r);
    free(target);
    nl_client_free(c);
    CHECK_MSG(log.events > 0 && log.leaks == 0, "%d log events, %d with a secret", log.events, log.leaks);

    /* .netrc: credentials for this host from the file. */
    REQUIRE(mkdtemp(dir) != NULL);
    netrc = nlt_format("%s/netrc", dir);
    f = fopen(netrc, "w");
    REQUIRE(f != NULL);
    fprintf(f, "machine 127.0.0.1\nlogin nel\npassword %s\n", password);
    fclose(f);
    cfg = nlt_format("{\"baseURL\": \"%s\", \"auth\": {\"netrc\": \"%s\"}}", base_url(), netrc);
    c = client_with_config(cfg);
    doc = nlt_format("{\"path\": \"basic-auth/nel/sha256:%s\"}", password_sha256);
    r = request_doc(c, doc);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.user"), "nel");
    json_decref(r);
    free(doc);
    nl_client_free(c);
    free(netrc);
    fh_rm_dir(dir);
}

static void test_malformed_auth_is_refused_naming_the_key(void)
{
    static const char *const cases[] = {
        "{\"basic\": {\"user\": \"a:b\", \"password\": \"p\"}}", "{\"bearer\": \"two words\"}",
        "{\"bearer\": \"\"}", "{\"basic\": {\"password\": \"p\"}}", "{\"digest\": {\"user\": \"u\", \"pw\": \"p\"}}",
        "{\"netrc\": 1}", "{\"basic\": {\"user\": \"u\"}, \"bearer\": \"t\"}", "{\"token\": \"t\"}", "\"Bearer t\"",
    };
    nl_client *c = client_for(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        json_t *r = request_json(c, "{\"path\": \"echo\", \"auth\": %s}", cases[i]);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(strstr(error_message(r) ? error_message(r) : "", "auth") != NULL, "%s: %s", cases[i], error_message(r));
        json_decref(r);
    }
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_credentials_are_not_sent_to_another_port),
        NLT_TEST(test_credentials_are_not_sent_to_another_host),
        NLT_TEST(test_credentials_are_not_sent_to_another_scheme),
        NLT_TEST(test_credentials_are_kept_on_a_same_origin_redirect),
        NLT_TEST(test_headers_marked_secret_stay_with_their_origin_and_each_hop_is_logged),
        NLT_TEST(test_post_becomes_get_without_body_after_301_302_303),
        NLT_TEST(test_post_keeps_method_and_body_after_307_308),
        NLT_TEST(test_cr_lf_nul_are_refused_in_method_header_path_and_encoded_in_query),
        NLT_TEST(test_cr_lf_nul_in_adapt_hook_and_config_headers_is_refused),
        NLT_TEST(test_framing_and_host_headers_are_refused_wherever_a_caller_sets_headers),
        NLT_TEST(test_url_confusion_in_paths_never_changes_the_host),
        NLT_TEST(test_dot_segments_and_params_never_leave_the_base_path),
        NLT_TEST(test_canary_secret_never_in_log_events_or_error_messages),
        NLT_TEST(test_canary_secret_never_on_stderr_at_debug),
        NLT_TEST(test_auth_helpers_authenticate_and_keep_their_secrets),
        NLT_TEST(test_malformed_auth_is_refused_naming_the_key),
    };
    int rc;
    g_argv0 = argv[0];
    if (argc > 2 && strcmp(argv[1], "--canary-child") == 0)
        return canary_child_main(argv[2]);
    rc = nlt_main(argc, argv, tests, NLT_COUNT(tests));
    origins_teardown();
    fh_server_stop(&g_f);
    return rc;
}
