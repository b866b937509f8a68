/*
 * WebSockets through the C ABI (nl_websocket_*): against the `websockets` package's
 * server, nginx as a wss reverse proxy in front of it, tinyproxy's CONNECT tunnel, and
 * a raw-socket server that breaks the protocol on purpose (Tests/server/ws_servers.py).
 */
#include "harness.h"
#include "fault_helpers.h"

#include <strings.h>
#include <sys/resource.h>

/* ---- what one connection reported -------------------------------------------------------- */

typedef struct message {
    int kind;
    char *data;
    size_t length;
} message;

typedef struct probe {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int opens;
    char *open_json;
    message messages[64];
    int count;
    int errors;
    char *error_json;
    int closes;
    int code;
    char reason[256];
    int events_after_close;
    nl_websocket *free_on_message; /* freed from inside on_message when set */
    int send_on_open;              /* on_open sends "first" when set ... */
    int sent_on_open;              /* ... and keeps what nl_websocket_send returned (1: not yet) */
} probe;

static void probe_init(probe *p)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
}

static void probe_done(probe *p)
{
    int i;
    for (i = 0; i < p->count; i++)
        free(p->messages[i].data);
    free(p->open_json);
    free(p->error_json);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
}

static void on_open(nl_websocket *ws, const char *open_json, void *user_data)
{
    probe *p = user_data;
    int sent = 1;
    if (p->send_on_open)
        sent = nl_websocket_send(ws, NL_WS_TEXT, "first", 5, NULL);
    pthread_mutex_lock(&p->lock);
    p->sent_on_open = sent;
    p->opens++;
    p->events_after_close += p->closes;
    free(p->open_json);
    p->open_json = strdup(open_json);
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

static void on_message(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data)
{
    probe *p = user_data;
    pthread_mutex_lock(&p->lock);
    p->events_after_close += p->closes;
    if (p->count < 64) {
        message *m = &p->messages[p->count++];
        m->kind = kind;
        m->length = length;
        m->data = malloc(length + 1);
        if (length > 0)
            memcpy(m->data, data, length);
        m->data[length] = '\0';
    }
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    if (p->free_on_message == ws)
        nl_websocket_free(ws);
}

static void on_error(nl_websocket *ws, const char *error_json, void *user_data)
{
    probe *p = user_data;
    (void)ws;
    pthread_mutex_lock(&p->lock);
    p->errors++;
    p->events_after_close += p->closes;
    free(p->error_json);
    p->error_json = strdup(error_json);
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

static void on_close(nl_websocket *ws, int code, const char *reason, void *user_data)
{
    probe *p = user_data;
    (void)ws;
    pthread_mutex_lock(&p->lock);
    p->events_after_close += p->closes;
    p->closes++;
    p->code = code;
    snprintf(p->reason, sizeof(p->reason), "%s", reason);
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

/* Waits until `holds` (called under the lock) or `seconds` pass; whether it held. */
static int wait_until(probe *p, double seconds, int (*holds)(probe *))
{
    double deadline = now_ms() + seconds * 1000.0 * (fh_slow_mode() ? 4 : 1);
    int ok;
    pthread_mutex_lock(&p->lock);
    while (!(ok = holds(p)) && now_ms() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->changed, &p->lock, &ts);
    }
    pthread_mutex_unlock(&p->lock);
    return ok;
}

static int is_open(probe *p) { return p->opens > 0 || p->closes > 0; }
static int is_closed(probe *p) { return p->closes > 0; }
static int has_one(probe *p) { return p->count >= 1 || p->closes > 0; }
static int has_two(probe *p) { return p->count >= 2 || p->closes > 0; }

/* ---- servers ------------------------------------------------------------------------------- */

static fh_server g_echo, g_hostile, g_nginx, g_nginx_mutual, g_proxy;
static char g_cert_dir[64];
static int g_client_certs;

static int start_ws_server(fh_server *s, const char *kind, const char *const *more)
{
    const char *extra[12];
    int n = 0, i;
    if (s->port > 0)
        return 1;
    /* ws_servers.py takes its kind first: the helper puts its own options before it. */
    extra[n++] = kind;
    for (i = 0; more != NULL && more[i] != NULL && n < 11; i++)
        extra[n++] = more[i];
    extra[n] = NULL;
    return fh_server_start(s, "ws_servers.py", extra);
}

static int echo_port(void)
{
    REQUIRE_MSG(start_ws_server(&g_echo, "echo", NULL), "cannot start the websockets echo server");
    return g_echo.port;
}

static int hostile_port(void)
{
    REQUIRE_MSG(start_ws_server(&g_hostile, "hostile", NULL), "cannot start the hostile server");
    return g_hostile.port;
}

static const char *cert_dir(void)
{
    if (g_cert_dir[0] == '\0') {
        snprintf(g_cert_dir, sizeof(g_cert_dir), "/tmp/netlayer-wscerts-XXXXXX");
        REQUIRE(mkdtemp(g_cert_dir) != NULL);
        REQUIRE_MSG(fh_make_certs(g_cert_dir), "openssl could not make certificates");
    }
    return g_cert_dir;
}

static int nginx_port(void)
{
    if (g_nginx.port <= 0) {
        char *upstream = nlt_format("%d", echo_port());
        char *cert = nlt_format("%s/server.pem", cert_dir());
        char *key = nlt_format("%s/server.key", cert_dir());
        const char *more[] = { "--upstream", upstream, "--cert", cert, "--key", key, NULL };
        int ok = start_ws_server(&g_nginx, "nginx", more);
        free(upstream);
        free(cert);
        free(key);
        REQUIRE_MSG(ok, "cannot start nginx");
    }
    return g_nginx.port;
}

/* Client certificates in cert_dir(): client.pem/.key (CN netlayer-client, signed by the
 * test CA) and stranger.pem/.key (self-signed, CN stranger). */
static const char *client_certs(void)
{
    if (!g_client_certs) {
        REQUIRE_MSG(fh_sh("cd '%s' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
                          " -keyout client.key -out client.csr -subj '/CN=netlayer-client'"
                          " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                          " -out client.pem"
                          " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
                          " -keyout stranger.key -out stranger.pem -days 2 -subj '/CN=stranger'",
                          cert_dir()),
                    "openssl could not make the client certificates in %s", cert_dir());
        g_client_certs = 1;
    }
    return cert_dir();
}

/* nginx as the wss proxy in front of the echo server, asking for a client certificate
 * signed by the test CA (and passing its subject on as X-Client-DN). */
static int nginx_mutual_port(void)
{
    if (g_nginx_mutual.port <= 0) {
        char *upstream = nlt_format("%d", echo_port());
        char *cert = nlt_format("%s/server.pem", cert_dir());
        char *key = nlt_format("%s/server.key", cert_dir());
        char *ca = nlt_format("%s/ca.pem", cert_dir());
        const char *more[] = { "--upstream", upstream, "--cert", cert, "--key", key, "--client-ca", ca, NULL };
        int ok = start_ws_server(&g_nginx_mutual, "nginx", more);
        free(upstream);
        free(cert);
        free(key);
        free(ca);
        REQUIRE_MSG(ok, "cannot start nginx with --client-ca");
    }
    return g_nginx_mutual.port;
}

static int proxy_port(void)
{
    REQUIRE_MSG(start_ws_server(&g_proxy, "tinyproxy", NULL), "cannot start tinyproxy");
    return g_proxy.port;
}

/* ---- helpers ------------------------------------------------------------------------------- */

static nl_websocket *open_ws(nl_client *c, const char *doc, probe *p)
{
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    char *err = NULL;
    nl_websocket *ws;
    cb.on_open = on_open;
    cb.on_message = on_message;
    cb.on_error = on_error;
    cb.on_close = on_close;
    cb.user_data = p;
    ws = nl_websocket_open(c, doc, &cb, &err);
    CHECK_MSG(ws != NULL, "nl_websocket_open(%s) -> %s", doc, err ? err : "(no error)");
    nl_free(err);
    return ws;
}

static nl_client *echo_client(const char *extra)
{
    return client_with_config(nlt_format("{\"baseURL\": \"http://127.0.0.1:%d/\"%s%s}", echo_port(),
                                         extra ? ", " : "", extra ? extra : ""));
}

static nl_client *hostile_client(const char *extra)
{
    return client_with_config(nlt_format("{\"baseURL\": \"http://127.0.0.1:%d/\"%s%s}", hostile_port(),
                                         extra ? ", " : "", extra ? extra : ""));
}

/* The error kind of the probe's error document ("" when none). */
static const char *probe_error_kind(probe *p, json_t **owned)
{
    *owned = p->error_json ? json_loads(p->error_json, 0, NULL) : NULL;
    return *owned ? (jpath_str(*owned, "error.kind") ? jpath_str(*owned, "error.kind") : "") : "";
}

/* Opens `doc`, expects a failure of `kind` whose message holds `words`, on_close 1006,
 * no on_open unless `opens`, and exactly one on_error and on_close. */
static void expect_failure(nl_client *c, const char *doc, int opens, const char *kind, const char *words)
{
    probe p;
    json_t *error;
    nl_websocket *ws;
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    CHECK_MSG(wait_until(&p, 15, is_closed), "%s: no on_close", doc);
    CHECK_INT_EQ(p.errors, 1);
    CHECK_INT_EQ(p.closes, 1);
    CHECK_INT_EQ(p.code, 1006);
    CHECK_INT_EQ(p.opens, opens);
    CHECK_STR_EQ(probe_error_kind(&p, &error), kind);
    CHECK_MSG(error && jpath_str(error, "error.message") && nlt_stristr(jpath_str(error, "error.message"), words),
              "%s: message %s lacks '%s'", doc, p.error_json ? p.error_json : "(none)", words);
    CHECK_INT_EQ(p.events_after_close, 0);
    json_decref(error);
    nl_websocket_free(ws);
    probe_done(&p);
}

static void close_and_wait(nl_websocket *ws, probe *p)
{
    char *err = NULL;
    CHECK_INT_EQ(nl_websocket_close(ws, 1000, "done", &err), 0);
    nl_free(err);
    CHECK(wait_until(p, 10, is_closed));
}

/* ---- the websockets package's server ------------------------------------------------------- */

/* on_open may run on the loop's thread before nl_websocket_open has returned on this
 * one; a send it makes then waits for the connection and is queued, never refused as
 * "not open". 30 connections in turn, so that some open that fast (under valgrind,
 * whose scheduler runs one thread at a time, often). */
static void test_a_send_from_on_open_is_queued_however_soon_it_runs(void)
{
    nl_client *c = echo_client(NULL);
    int i;
    for (i = 0; i < 30; i++) {
        probe p;
        nl_websocket *ws;
        probe_init(&p);
        p.send_on_open = 1;
        ws = open_ws(c, "{\"path\": \"echo\"}", &p);
        REQUIRE(ws != NULL);
        REQUIRE(wait_until(&p, 10, has_one));
        CHECK_INT_EQ(p.sent_on_open, 0);
        REQUIRE_MSG(p.count == 1, "connection %d: error %s", i, p.error_json ? p.error_json : "(none)");
        CHECK_STR_EQ(p.messages[0].data, "first");
        close_and_wait(ws, &p);
        nl_websocket_free(ws);
        probe_done(&p);
    }
    nl_client_free(c);
}

static void test_echo_text_and_binary(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    const unsigned char bytes[] = { 0, 1, 2, 255, 0 };
    json_t *opened;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\"}", &p);
    /* Queued before the handshake completes: sent after it, in order. */
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "héllo", strlen("héllo"), NULL), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_BINARY, bytes, sizeof bytes, NULL), 0);
    {   /* a length no buffer has (a negative count cast to size_t): refused as such */
        char *err = NULL;
        CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_BINARY, "a", (size_t)-1, &err), -1);
        CHECK_MSG(err != NULL && strstr(err, "larger than any buffer") != NULL, "%s", err ? err : "(null)");
        nl_free(err);
    }
    REQUIRE(wait_until(&p, 10, has_two));
    REQUIRE_MSG(p.count == 2, "error: %s", p.error_json ? p.error_json : "(none)");
    CHECK_INT_EQ(p.opens, 1);
    CHECK_INT_EQ(nlt_tcp_sockets_kept_across_exec(NULL), 0);  /* a program this process runs does not get it */
    opened = nlt_parse(p.open_json, "open_json");
    CHECK_INT_EQ((long long)jpath_num(opened, "status", 0), 101);
    CHECK(json_is_null(jpath(opened, "protocol")));
    CHECK_STR_EQ(jpath_str(opened, "headers.upgrade"), "websocket");
    json_decref(opened);
    CHECK_INT_EQ(p.messages[0].kind, NL_WS_TEXT);
    CHECK_STR_EQ(p.messages[0].data, "héllo");
    CHECK_INT_EQ(p.messages[1].kind, NL_WS_BINARY);
    CHECK(p.messages[1].length == sizeof bytes && memcmp(p.messages[1].data, bytes, sizeof bytes) == 0);
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    CHECK_STR_EQ(p.reason, "done");
    CHECK_INT_EQ(p.errors, 0);
    CHECK_INT_EQ(p.events_after_close, 0);
    /* Closed: a send fails, and says so. */
    {
        char *err = NULL;
        json_t *doc;
        CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "late", 4, &err), -1);
        doc = nlt_parse(err, "send error");
        CHECK_STR_EQ(error_kind(doc), "not_connected");
        json_decref(doc);
        nl_free(err);
    }
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_subprotocol_offered_and_chosen_one_reported(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    json_t *opened;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"protocol\", \"protocols\": [\"nope\", \"superchat\"]}", &p);
    REQUIRE(wait_until(&p, 10, has_one));
    opened = nlt_parse(p.open_json, "open_json");
    CHECK_STR_EQ(jpath_str(opened, "protocol"), "superchat");
    json_decref(opened);
    CHECK_STR_EQ(p.messages[0].data, "superchat");  /* what the server says it chose */
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

/* Opens `path` with the server's close code and reason in its query, and checks that
 * the close is reported as the server sent it, after one open and without an error. */
static void check_server_close(nl_client *c, const char *path, int code, const char *reason)
{
    probe p;
    nl_websocket *ws;
    char *doc = nlt_format("{\"path\": \"%s\", \"query\": {\"code\": %d, \"reason\": \"%s\"}}", path, code, reason);
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    REQUIRE(wait_until(&p, 10, is_closed));
    CHECK_INT_EQ(p.code, code);
    CHECK_STR_EQ(p.reason, reason);
    CHECK_INT_EQ(p.errors, 0);
    CHECK_INT_EQ(p.opens, 1);
    nl_websocket_free(ws);
    probe_done(&p);
    free(doc);
}

static void test_server_close_code_and_reason_reported(void)
{
    nl_client *c = echo_client(NULL);
    check_server_close(c, "close", 4001, "see you");
    nl_client_free(c);
}

/* 1012 to 1014 (Service Restart, Try Again Later, Bad Gateway), registered after RFC
 * 6455, are closes like any other: reported as sent, no error. 1015 and 999 are not
 * codes a server may send. */
static void test_registered_close_codes_after_rfc_6455_are_reported(void)
{
    nl_client *c = echo_client(NULL);
    static const int codes[] = { 1012, 1013, 1014 };
    size_t i;
    for (i = 0; i < NLT_COUNT(codes); i++)
        check_server_close(c, "close", codes[i], "restart");
    nl_client_free(c);
}

static void test_large_and_fragmented_messages_from_the_server(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    size_t i, bad = 0, n = 3000000;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"large\", \"query\": {\"bytes\": 3000000}}", &p);
    REQUIRE(wait_until(&p, 20, has_one));
    REQUIRE(p.count == 1);
    CHECK_INT_EQ(p.messages[0].kind, NL_WS_BINARY);
    CHECK(p.messages[0].length == n);
    for (i = 0; i < n && i < p.messages[0].length; i++)
        bad += (unsigned char)p.messages[0].data[i] != i % 251;
    CHECK(bad == 0);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);

    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"fragments\"}", &p);
    REQUIRE(wait_until(&p, 10, has_two));
    REQUIRE(p.count == 2);
    CHECK_INT_EQ(p.messages[0].kind, NL_WS_TEXT);
    CHECK_STR_EQ(p.messages[0].data, "hello world");
    CHECK_INT_EQ(p.messages[1].kind, NL_WS_BINARY);
    CHECK(p.messages[1].length == 5 && memcmp(p.messages[1].data, "\0\1\2\3\4", 5) == 0);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_large_message_sent_in_fragments_comes_back_whole(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    size_t n = 100000, i;
    char *text = malloc(n + 1);
    for (i = 0; i < n; i++)
        text[i] = (char)('a' + i % 26);
    text[n] = '\0';
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\", \"fragmentBytes\": 1000}", &p);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, text, n, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_one));
    REQUIRE(p.count == 1);
    CHECK(p.messages[0].length == n && memcmp(p.messages[0].data, text, n) == 0);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
    free(text);
}

static void test_frames_on_the_wire_are_masked_and_fragmented(void)
{
    /* The raw server reports each message's frames as [fin, opcode, masked, length]. */
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    char text[2500];
    memset(text, 'x', sizeof text);
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"frames\", \"fragmentBytes\": 1000}", &p);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, text, sizeof text, NULL), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_BINARY, "ab", 2, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_two));
    REQUIRE(p.count == 2);
    CHECK_STR_EQ(p.messages[0].data, "[[0, 1, 1, 1000], [0, 0, 1, 1000], [1, 0, 1, 500]]");
    CHECK_STR_EQ(p.messages[1].data, "[[1, 2, 1, 2]]");
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_server_ping_is_answered_with_pong(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"ping\"}", &p);
    REQUIRE(wait_until(&p, 10, has_one));
    CHECK_STR_EQ(p.count ? p.messages[0].data : "(none)", "pong");
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_handshake_carries_the_clients_headers_auth_and_cookies(void)
{
    /* A cookie set by a response of the test server (127.0.0.1, another port) is sent
     * with the handshake, as libcurl would send it with a request to this host. */
    nl_client *c = client_for("\"headers\": {\"X-Default\": \"d\"}, \"auth\": {\"bearer\": \"tok-1\"}");
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"flavour=oat; Path=/\"}}");
    char *doc;
    probe p;
    nl_websocket *ws;
    json_t *seen;
    CHECK(result_ok(r));
    json_decref(r);
    doc = nlt_format("{\"path\": \"http://127.0.0.1:%d/headers\", \"isFullPath\": true,"
                     " \"headers\": {\"X-Trace\": \"t-7\"}, \"query\": {\"q\": \"1\"}}", echo_port());
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    REQUIRE(wait_until(&p, 10, has_one));
    REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
    seen = nlt_parse(p.messages[0].data, "headers");
    CHECK_STR_EQ(jpath_str(seen, "authorization"), "Bearer tok-1");
    CHECK_STR_EQ(jpath_str(seen, "x-default"), "d");
    CHECK_STR_EQ(jpath_str(seen, "x-trace"), "t-7");
    CHECK_STR_EQ(jpath_str(seen, "cookie"), "flavour=oat");
    CHECK(jpath_str(seen, "user-agent") && strstr(jpath_str(seen, "user-agent"), "netlayer"));
    json_decref(seen);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    free(doc);
    nl_client_free(c);
}

static int g_logged_requests, g_logged_answers;

static void sign_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json;
    (void)user_data;
    nl_reply_set(reply, "{\"headers\": {\"X-Signed\": \"yes\"}}");
}

static void log_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)reply;
    (void)user_data;
    if (strstr(event_json, "\"event\":\"request\"") && strstr(event_json, "/headers"))
        __atomic_add_fetch(&g_logged_requests, 1, __ATOMIC_SEQ_CST);
    /* The 101 answer too, as a request's response (with its headers, redacted). */
    if (strstr(event_json, "\"event\":\"response\"") && strstr(event_json, "\"status\":101")
        && nlt_stristr(event_json, "sec-websocket-accept"))
        __atomic_add_fetch(&g_logged_answers, 1, __ATOMIC_SEQ_CST);
}

static void test_adapt_and_log_hooks_see_the_handshake(void)
{
    nl_client *c = echo_client("\"log\": {\"level\": \"info\"}");
    probe p;
    nl_websocket *ws;
    json_t *seen;
    REQUIRE(nl_client_set_hook(c, NL_HOOK_ADAPT, sign_hook, NULL) == 0);
    REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, log_hook, NULL) == 0);
    g_logged_requests = g_logged_answers = 0;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"headers\"}", &p);
    REQUIRE(wait_until(&p, 10, has_one));
    REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
    seen = nlt_parse(p.messages[0].data, "headers");
    CHECK_STR_EQ(jpath_str(seen, "x-signed"), "yes");
    json_decref(seen);
    CHECK_INT_EQ(__atomic_load_n(&g_logged_requests, __ATOMIC_SEQ_CST), 1);
    close_and_wait(ws, &p);
    {   /* log events reach the hook on a thread of their own: give them a moment */
        int i;
        for (i = 0; i < 200 && __atomic_load_n(&g_logged_answers, __ATOMIC_SEQ_CST) == 0; i++)
            sleep_ms(10);
    }
    CHECK_INT_EQ(__atomic_load_n(&g_logged_answers, __ATOMIC_SEQ_CST), 1);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

/* How many events of `sink` are `event` with `status` (0: any). */
static int sink_count(nlt_log_sink *s, const char *event, int status)
{
    size_t i;
    json_t *e;
    int n = 0;
    pthread_mutex_lock(&s->lock);
    json_array_foreach(s->events, i, e) {
        const char *name = jpath_str(e, "event");
        if (name && strcmp(name, event) == 0 && (status == 0 || (int)jpath_num(e, "status", -1) == status))
            n++;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void test_log_hook_redacts_the_handshakes_credentials(void)
{
    /* The handshake's Authorization (basic, then bearer) and a secret query value reach
     * the server, but the LOG hook sees them only as <redacted>: in the request event's
     * headers and url, and nowhere else (debug level: the curl line too). */
    static const struct { const char *auth, *sent, *secrets[2]; } cases[] = {
        { "{\"basic\": {\"user\": \"wsuser\", \"password\": \"pa55-ws-SECRET-71\"}}",
          "Basic d3N1c2VyOnBhNTUtd3MtU0VDUkVULTcx",  /* base64 of wsuser:pa55-ws-SECRET-71 */
          { "pa55-ws-SECRET-71", "d3N1c2VyOnBhNTUtd3MtU0VDUkVULTcx" } },
        { "{\"bearer\": \"tok-WS-s3cret-9931\"}", "Bearer tok-WS-s3cret-9931", { "tok-WS-s3cret-9931", NULL } },
    };
    static const char *const query_secret = "qs-WS-s3cret-4417";
    size_t k;
    for (k = 0; k < NLT_COUNT(cases); k++) {
        nlt_log_sink sink;
        char *extra = nlt_format("\"auth\": %s, \"log\": {\"level\": \"debug\"}", cases[k].auth);
        nl_client *c = echo_client(extra);
        probe p;
        nl_websocket *ws;
        json_t *seen, *e;
        size_t i;
        int requests = 0, j;
        char *doc = nlt_format("{\"path\": \"headers\", \"query\": {\"token\": \"%s\"}}", query_secret);
        nlt_log_sink_init(&sink);
        REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, nlt_log_sink_hook, &sink) == 0);
        probe_init(&p);
        ws = open_ws(c, doc, &p);
        REQUIRE(wait_until(&p, 10, has_one));
        REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
        seen = nlt_parse(p.messages[0].data, "headers");
        CHECK_STR_EQ(jpath_str(seen, "authorization"), cases[k].sent);  /* the server got it */
        json_decref(seen);
        close_and_wait(ws, &p);
        nl_websocket_free(ws);
        probe_done(&p);
        for (j = 0; j < 200 && sink_count(&sink, "response", 101) == 0; j++)
            sleep_ms(10);  /* the 101's event reaches the hook on a thread of its own */
        nl_client_free(c);
        CHECK_INT_EQ(sink_count(&sink, "response", 101), 1);

        json_array_foreach(sink.events, i, e) {
            char *text = json_dumps(e, JSON_COMPACT);
            const char *name = jpath_str(e, "event");
            CHECK_MSG(text && strstr(text, cases[k].secrets[0]) == NULL, "the secret is in a log event: %s", text);
            CHECK_MSG(text && (cases[k].secrets[1] == NULL || strstr(text, cases[k].secrets[1]) == NULL),
                      "the encoded secret is in a log event: %s", text);
            CHECK_MSG(text && strstr(text, query_secret) == NULL, "the query's token is in a log event: %s", text);
            if (name && strcmp(name, "request") == 0) {
                const char *url = jpath_str(e, "url");
                requests++;
                CHECK_STR_EQ(nlt_header_value(json_object_get(e, "headers"), "Authorization"), "<redacted>");
                CHECK_MSG(url && strstr(url, "/headers") && strstr(url, "token=<redacted>"), "url %s",
                          url ? url : "(none)");
                if (jpath_str(e, "curl"))
                    CHECK(strstr(jpath_str(e, "curl"), "<redacted>") != NULL);
            }
            free(text);
        }
        CHECK_INT_EQ(requests, 1);
        nlt_log_sink_done(&sink);
        free(doc);
        free(extra);
    }
}

static void test_permessage_deflate_is_agreed_and_used_both_ways(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    json_t *doc;
    size_t n = 200000, i;
    char *text = malloc(n + 1);
    for (i = 0; i < n; i++)
        text[i] = (char)('a' + (i / 7) % 26);
    text[n] = '\0';
    /* The websockets server agrees; a large message both ways comes back whole. */
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\", \"fragmentBytes\": 4096}", &p);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, text, n, NULL), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_BINARY, "tiny", 4, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_two));
    REQUIRE_MSG(p.count == 2, "error: %s", p.error_json ? p.error_json : "(none)");
    doc = nlt_parse(p.open_json, "open_json");
    CHECK(jpath_str(doc, "headers.sec-websocket-extensions")
          && strncmp(jpath_str(doc, "headers.sec-websocket-extensions"), "permessage-deflate", 18) == 0);
    json_decref(doc);
    CHECK(p.messages[0].length == n && memcmp(p.messages[0].data, text, n) == 0);
    CHECK(p.messages[1].length == 4 && memcmp(p.messages[1].data, "tiny", 4) == 0);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);

    /* "compression": false offers nothing. */
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\", \"compression\": false}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    doc = nlt_parse(p.open_json, "open_json");
    CHECK(jpath(doc, "headers.sec-websocket-extensions") == NULL);
    json_decref(doc);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);

    /* On the wire: a long message goes deflated (RSV1), a short one as it is. */
    c = hostile_client(NULL);
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"deflate-report\"}", &p);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, text, 1000, NULL), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "short", 5, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_two));
    REQUIRE(p.count == 2);
    doc = nlt_parse(p.messages[0].data, "report");
    CHECK(json_is_true(jpath(doc, "rsv1")));
    CHECK(jpath_str(doc, "text") && strlen(jpath_str(doc, "text")) == 1000 && memcmp(jpath_str(doc, "text"), text, 1000) == 0);
    json_decref(doc);
    doc = nlt_parse(p.messages[1].data, "report");
    CHECK(json_is_false(jpath(doc, "rsv1")));
    CHECK_STR_EQ(jpath_str(doc, "text"), "short");
    json_decref(doc);
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
    free(text);
}

static void test_deflate_bomb_and_bad_inflated_text_fail_the_connection(void)
{
    nl_client *c = hostile_client(NULL);
    expect_failure(c, "{\"path\": \"deflate-bomb\"}", 1, "too_large", "inflates to more than maxMessageBytes");
    expect_failure(c, "{\"path\": \"deflate-bad-utf8\"}", 1, "protocol", "UTF-8");
    nl_client_free(c);
}

/* ---- TLS (nginx) and proxies (tinyproxy) --------------------------------------------------- */

static void test_wss_through_nginx_with_the_clients_ca(void)
{
    char *config = nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\"}}", cert_dir());
    nl_client *c = client_with_config(config);
    char *doc = nlt_format("{\"path\": \"wss://localhost:%d/protocol\", \"isFullPath\": true,"
                           " \"protocols\": [\"chat\"]}", nginx_port());
    probe p;
    nl_websocket *ws;
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    REQUIRE(wait_until(&p, 15, has_one));
    REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
    CHECK_STR_EQ(p.messages[0].data, "chat");
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "over tls", 8, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_two));
    CHECK_STR_EQ(p.count > 1 ? p.messages[1].data : "", "over tls");
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    free(doc);
    nl_client_free(c);

    /* Without the CA, the certificate is refused: kind tls. */
    c = client_with_config(strdup("{}"));
    doc = nlt_format("{\"path\": \"wss://localhost:%d/echo\", \"isFullPath\": true}", nginx_port());
    expect_failure(c, doc, 0, "tls", "");
    free(doc);
    nl_client_free(c);
}

/* Opens `doc` on a client with `config`, sends `text` and expects it back. */
static void expect_echo(const char *config, const char *doc, const char *text)
{
    nl_client *c = client_with_config(strdup(config));
    probe p;
    nl_websocket *ws;
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, text, strlen(text), NULL), 0);
    REQUIRE(wait_until(&p, 15, has_one));
    CHECK_MSG(p.count == 1 && strcmp(p.messages[0].data, text) == 0, "%s: %s", doc,
              p.error_json ? p.error_json : "(no error)");
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_wss_checks_the_pinned_public_key(void)
{
    char *right = NULL, *other = NULL, *path, *config, *doc;
    nl_client *c;
    path = nlt_format("%s/server.pem", cert_dir());
    right = fh_pin_of(path);
    free(path);
    path = nlt_format("%s/self.pem", cert_dir());  /* a real key, but not nginx's */
    other = fh_pin_of(path);
    free(path);
    REQUIRE_MSG(right != NULL && other != NULL, "openssl could not compute the pins");
    doc = nlt_format("{\"path\": \"wss://localhost:%d/echo\", \"isFullPath\": true}", nginx_port());

    /* The server's own pin: the connection opens. */
    config = nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\", \"pinnedPublicKey\": \"%s\"}}", cert_dir(), right);
    expect_echo(config, doc, "pinned");
    free(config);

    /* Another key's pin, or a made-up one: kind tls, although the CA vouches for it. */
    config = nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\", \"pinnedPublicKey\": \"%s\"}}", cert_dir(), other);
    c = client_with_config(config);
    expect_failure(c, doc, 0, "tls", "");
    nl_client_free(c);
    c = client_with_config(nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\", \"pinnedPublicKey\":"
                                      " \"sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}}", cert_dir()));
    expect_failure(c, doc, 0, "tls", "");
    nl_client_free(c);

    /* A pin holds with verification off: the right one opens, a wrong one fails. */
    config = nlt_format("{\"tls\": {\"verify\": false, \"pinnedPublicKey\": \"%s\"}}", right);
    expect_echo(config, doc, "pinned, unverified");
    free(config);
    c = client_with_config(nlt_format("{\"tls\": {\"verify\": false, \"pinnedPublicKey\": \"%s\"}}", other));
    expect_failure(c, doc, 0, "tls", "");
    nl_client_free(c);

    free(doc);
    free(right);
    free(other);
}

static void test_wss_presents_the_client_certificate(void)
{
    /* nginx asks for a certificate signed by the test CA and passes its subject on to
     * the echo server, whose /headers shows it. */
    const char *dir = client_certs();
    char *doc = nlt_format("{\"path\": \"wss://localhost:%d/headers\", \"isFullPath\": true}", nginx_mutual_port());
    char *config = nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\", \"certFile\": \"%s/client.pem\","
                              " \"keyFile\": \"%s/client.key\"}}", dir, dir, dir);
    nl_client *c = client_with_config(config);
    probe p;
    nl_websocket *ws;
    json_t *seen, *error;
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    REQUIRE(wait_until(&p, 15, has_one));
    REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
    seen = nlt_parse(p.messages[0].data, "headers");
    CHECK_MSG(jpath_str(seen, "x-client-dn") && strstr(jpath_str(seen, "x-client-dn"), "CN=netlayer-client"),
              "nginx saw the client as %s", jpath_str(seen, "x-client-dn") ? jpath_str(seen, "x-client-dn") : "(none)");
    json_decref(seen);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "mutual", 6, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_two));
    CHECK_STR_EQ(p.count > 1 ? p.messages[1].data : "", "mutual");
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);

    /* Without a certificate, or with one the CA did not sign: nginx refuses the
     * handshake with 400 (after the TLS handshake; `ssl_verify_client on`). */
    c = client_with_config(nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\"}}", dir));
    expect_failure(c, doc, 0, "status", "400");
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    REQUIRE(wait_until(&p, 15, is_closed));
    CHECK_STR_EQ(probe_error_kind(&p, &error), "status");
    CHECK_INT_EQ((long long)jpath_num(error, "status", 0), 400);
    json_decref(error);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
    c = client_with_config(nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\", \"certFile\": \"%s/stranger.pem\","
                                      " \"keyFile\": \"%s/stranger.key\"}}", dir, dir, dir));
    expect_failure(c, doc, 0, "status", "400");
    nl_client_free(c);
    free(doc);
}

static void test_wss_and_ws_through_tinyproxy_connect(void)
{
    char *config = nlt_format("{\"proxy\": \"http://127.0.0.1:%d\", \"tls\": {\"caFile\": \"%s/ca.pem\"}}",
                              proxy_port(), cert_dir());
    nl_client *c = client_with_config(config);
    const char *targets[2];
    char *docs[2];
    int i;
    docs[0] = nlt_format("{\"path\": \"wss://localhost:%d/echo\", \"isFullPath\": true}", nginx_port());
    docs[1] = nlt_format("{\"path\": \"ws://127.0.0.1:%d/echo\", \"isFullPath\": true}", echo_port());
    targets[0] = "wss";
    targets[1] = "ws";
    for (i = 0; i < 2; i++) {
        probe p;
        nl_websocket *ws;
        probe_init(&p);
        ws = open_ws(c, docs[i], &p);
        CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, targets[i], strlen(targets[i]), NULL), 0);
        REQUIRE(wait_until(&p, 15, has_one));
        CHECK_MSG(p.count == 1 && strcmp(p.messages[0].data, targets[i]) == 0, "%s: %s", targets[i],
                  p.error_json ? p.error_json : "(no error)");
        close_and_wait(ws, &p);
        nl_websocket_free(ws);
        probe_done(&p);
        free(docs[i]);
    }
    nl_client_free(c);
}

static void test_ws_over_the_clients_unix_socket(void)
{
    fh_server unix_echo;
    char dir[64], *path, *config;
    const char *more[3];
    nl_client *c;
    probe p;
    nl_websocket *ws;
    snprintf(dir, sizeof dir, "/tmp/netlayer-wsunix-XXXXXX");
    REQUIRE(mkdtemp(dir) != NULL);
    path = nlt_format("%s/echo.sock", dir);
    more[0] = "--unix";
    more[1] = path;
    more[2] = NULL;
    memset(&unix_echo, 0, sizeof unix_echo);
    REQUIRE_MSG(start_ws_server(&unix_echo, "echo", more), "cannot start the echo server on a Unix socket");
    config = nlt_format("{\"baseURL\": \"http://localhost/\", \"unixSocket\": \"%s\"}", path);
    c = client_with_config(config);
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\"}", &p);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "via unix", 8, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_one));
    CHECK_STR_EQ(p.count ? p.messages[0].data : p.error_json, "via unix");
    close_and_wait(ws, &p);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
    fh_server_stop(&unix_echo);
    unlink(path);
    rmdir(dir);
    free(path);
}

static void test_resolve_entries_apply_to_websockets(void)
{
    /* ws.test (a reserved name no resolver knows) answered by the client's `resolve`:
     * the connection goes to the echo server, the handshake still names ws.test. */
    int port = echo_port();
    char *doc = nlt_format("{\"path\": \"ws://ws.test:%d/headers\", \"isFullPath\": true, \"timeout\": 10}", port);
    char *host = nlt_format("ws.test:%d", port);
    nl_client *c = client_with_config(nlt_format("{\"resolve\": [\"ws.test:%d:127.0.0.1\"]}", port));
    probe p;
    nl_websocket *ws;
    json_t *seen;
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    REQUIRE(wait_until(&p, 15, has_one));
    REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
    seen = nlt_parse(p.messages[0].data, "headers");
    CHECK_STR_EQ(jpath_str(seen, "host"), host);
    json_decref(seen);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "resolved", 8, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_two));
    CHECK_STR_EQ(p.count > 1 ? p.messages[1].data : "", "resolved");
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);

    /* Without the entry, or with one for another port, the name does not resolve. */
    c = client_with_config(strdup("{}"));
    expect_failure(c, doc, 0, "not_connected", "");
    nl_client_free(c);
    c = client_with_config(nlt_format("{\"resolve\": [\"ws.test:%d:127.0.0.1\"]}", port == 65535 ? 1 : port + 1));
    expect_failure(c, doc, 0, "not_connected", "");
    nl_client_free(c);
    free(host);
    free(doc);
}

/* ---- hostile servers ----------------------------------------------------------------------- */

static void test_bad_handshakes_fail_with_the_reason(void)
{
    nl_client *c = hostile_client(NULL);
    expect_failure(c, "{\"path\": \"bad-accept\"}", 0, "protocol", "Sec-WebSocket-Accept");
    expect_failure(c, "{\"path\": \"unoffered-protocol\", \"protocols\": [\"chat\"]}", 0, "protocol", "not offered");
    expect_failure(c, "{\"path\": \"status-403\"}", 0, "status", "403");
    expect_failure(c, "{\"path\": \"no-answer\", \"timeout\": 0.5}", 0, "timeout", "handshake");
    nl_client_free(c);
    c = client_with_config(nlt_format("{\"baseURL\": \"http://127.0.0.1:%d/\"}", fh_closed_port()));
    expect_failure(c, "{\"path\": \"echo\"}", 0, "not_connected", "");
    nl_client_free(c);
}

static void test_broken_frames_fail_the_connection(void)
{
    nl_client *c = hostile_client(NULL);
    expect_failure(c, "{\"path\": \"masked\"}", 1, "protocol", "1002");
    expect_failure(c, "{\"path\": \"huge-length\"}", 1, "protocol", "frame");
    expect_failure(c, "{\"path\": \"over-max\"}", 1, "too_large", "1009");
    expect_failure(c, "{\"path\": \"bad-utf8\"}", 1, "protocol", "1007");
    expect_failure(c, "{\"path\": \"eof\"}", 1, "protocol", "without a close frame");
    nl_client_free(c);
}

static void test_message_over_max_message_bytes_closes_with_1009(void)
{
    nl_client *c = echo_client(NULL);
    expect_failure(c, "{\"path\": \"large\", \"query\": {\"bytes\": 5000}, \"maxMessageBytes\": 4096}", 1, "too_large",
                   "maxMessageBytes");
    nl_client_free(c);
}

/* ---- the client's close frames, as the server saw them ------------------------------------- */

/* What the hostile server recorded of the connection whose query had tag `key`:
 * {"close": true, "code", "reason", "masked"} for the first close frame the client
 * sent, {"close": false} when the client hung up without one; NULL (a failed check)
 * when nothing came within the server's wait. Asked over a connection of its own,
 * whose server waits for the record: the client's close frame may reach the server
 * after the failure has reached the test. */
static json_t *close_seen_by_server(const char *key)
{
    nl_client *c = hostile_client(NULL);
    char *doc = nlt_format("{\"path\": \"last-close\", \"query\": {\"key\": \"%s\", \"wait\": %d}}", key,
                           fh_slow_mode() ? 8 : 2);
    probe p;
    nl_websocket *ws;
    json_t *seen = NULL;
    probe_init(&p);
    ws = open_ws(c, doc, &p);
    CHECK_MSG(wait_until(&p, 20, is_closed), "last-close %s: no on_close", key);
    CHECK_MSG(p.count == 1, "last-close %s: %d messages, error %s", key, p.count,
              p.error_json ? p.error_json : "(none)");
    if (p.count == 1) {
        CHECK_MSG(strcmp(p.messages[0].data, "none") != 0, "%s: the server saw neither a close frame nor a hang-up",
                  key);
        if (strcmp(p.messages[0].data, "none") != 0)
            seen = nlt_parse(p.messages[0].data, "the server's close record");
    }
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    free(doc);
    nl_client_free(c);
    return seen;
}

/* Checks that the client sent a masked close frame with `code` (and `reason`, unless
 * NULL) on the connection tagged `key`. */
static void check_close_on_the_wire(const char *key, int code, const char *reason)
{
    json_t *seen = close_seen_by_server(key);
    char *text = seen ? json_dumps(seen, JSON_COMPACT) : NULL;
    CHECK_MSG(seen && json_is_true(jpath(seen, "close")), "%s: the client sent no close frame: %s", key,
              text ? text : "(nothing)");
    CHECK_MSG(seen && jpath_num(seen, "code", -1) == code, "%s: the server got %s, not code %d", key,
              text ? text : "(nothing)", code);
    CHECK_MSG(seen && json_is_true(jpath(seen, "masked")), "%s: the close frame was not masked: %s", key,
              text ? text : "(nothing)");
    if (reason != NULL)
        CHECK_STR_EQ(seen ? jpath_str(seen, "reason") : "(nothing)", reason);
    free(text);
    json_decref(seen);
}

static void test_failures_send_their_close_code_to_the_server(void)
{
    /* The close code each failure names in its message is the one on the wire. */
    static const struct { const char *path, *kind, *words; int code; } cases[] = {
        { "bad-utf8", "protocol", "1007", 1007 },
        { "over-max", "too_large", "1009", 1009 },
        { "masked", "protocol", "1002", 1002 },
        { "deflate-bad-utf8", "protocol", "1007", 1007 },
        { "deflate-bomb", "too_large", "1009", 1009 },
    };
    nl_client *c = hostile_client(NULL);
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        char *doc = nlt_format("{\"path\": \"%s\", \"query\": {\"tag\": \"wire-%s\"}}", cases[i].path, cases[i].path);
        char *key = nlt_format("wire-%s", cases[i].path);
        expect_failure(c, doc, 1, cases[i].kind, cases[i].words);
        check_close_on_the_wire(key, cases[i].code, NULL);
        free(key);
        free(doc);
    }
    /* A message over maxMessageBytes only once its two frames are joined: 1009. */
    expect_failure(c, "{\"path\": \"fragmented\", \"query\": {\"bytes\": 5000, \"count\": 2, \"tag\": \"wire-joined\"},"
                      " \"maxMessageBytes\": 4096}", 1, "too_large", "1009");
    check_close_on_the_wire("wire-joined", 1009, NULL);
    /* Within maxMessageBytes, the same message arrives whole. */
    {
        probe p;
        nl_websocket *ws;
        size_t j, bad = 0;
        probe_init(&p);
        ws = open_ws(c, "{\"path\": \"fragmented\", \"query\": {\"bytes\": 5000, \"count\": 2, \"tag\": \"wire-fits\"},"
                        " \"maxMessageBytes\": 5000, \"closeTimeout\": 0.3}", &p);
        REQUIRE(wait_until(&p, 10, has_one));
        REQUIRE_MSG(p.count == 1, "error: %s", p.error_json ? p.error_json : "(none)");
        CHECK(p.messages[0].length == 5000);
        for (j = 0; j < p.messages[0].length; j++)
            bad += (unsigned char)p.messages[0].data[j] != j % 251;
        CHECK(bad == 0);
        CHECK_INT_EQ(nl_websocket_close(ws, 1000, NULL, NULL), 0);
        CHECK(wait_until(&p, 10, is_closed));  /* the server does not answer: closeTimeout */
        nl_websocket_free(ws);
        probe_done(&p);
        check_close_on_the_wire("wire-fits", 1000, "");
    }
    nl_client_free(c);
}

static void test_malformed_frame_header_sends_1002_to_the_server(void)
{
    /* A 64-bit length with its top bit set, a ping of 126 bytes: "closed with 1002"
     * (docs/documents.md, WebSockets), so the server must get 1002, not a close frame
     * without a code (which it would read as 1005). */
    nl_client *c = hostile_client(NULL);
    expect_failure(c, "{\"path\": \"huge-length\", \"query\": {\"tag\": \"wire-huge-length\"}}", 1, "protocol",
                   "frame");
    check_close_on_the_wire("wire-huge-length", 1002, NULL);
    expect_failure(c, "{\"path\": \"long-ping\", \"query\": {\"tag\": \"wire-long-ping\"}}", 1, "protocol", "");
    check_close_on_the_wire("wire-long-ping", 1002, NULL);
    nl_client_free(c);
}

static void test_close_frame_of_one_byte_fails_with_1002(void)
{
    /* RFC 6455 section 5.5.1: a close body starts with a 2-byte code; 1 byte is no
     * close without a code (1005) but a protocol error, as close code 999 is. */
    nl_client *c = hostile_client(NULL);
    expect_failure(c, "{\"path\": \"short-close\", \"query\": {\"tag\": \"wire-short-close\"}}", 1, "protocol",
                   "too short");
    check_close_on_the_wire("wire-short-close", 1002, NULL);
    nl_client_free(c);
}

static void test_a_close_code_arriving_a_byte_at_a_time_is_read_as_sent(void)
{
    /* The frames before it and the close itself split over reads: 1013 still reported,
     * the message before it intact; 1015 (never sent on the wire) still fails. */
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    int i, intact = 1;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"trickle-close\", \"query\": {\"code\": 1013, \"tag\": \"trickle-1013\"}}", &p);
    REQUIRE(wait_until(&p, 15, is_closed));
    CHECK_INT_EQ(p.code, 1013);
    CHECK_STR_EQ(p.reason, "bye");
    CHECK_INT_EQ(p.errors, 0);
    REQUIRE(p.count == 1);
    CHECK_INT_EQ((int)p.messages[0].length, 300);
    for (i = 0; i < 300 && (size_t)i < p.messages[0].length; i++)
        intact &= (unsigned char)p.messages[0].data[i] == i % 251;
    CHECK_MSG(intact, "the message before the close arrived changed");
    nl_websocket_free(ws);
    probe_done(&p);
    expect_failure(c, "{\"path\": \"trickle-close\", \"query\": {\"code\": 1015}}", 1, "protocol", "close code");
    nl_client_free(c);
}

static void test_close_idle_and_free_send_their_code_to_the_server(void)
{
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    json_t *error;
    /* nl_websocket_close: the caller's code and reason, as given (the server never
     * answers: closeTimeout ends it). */
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"quiet\", \"query\": {\"tag\": \"wire-app\"}, \"closeTimeout\": 0.3}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    CHECK_INT_EQ(nl_websocket_close(ws, 4321, "app says bye \xc3\xa9", NULL), 0);
    REQUIRE(wait_until(&p, 10, is_closed));
    CHECK_STR_EQ(probe_error_kind(&p, &error), "timeout");
    json_decref(error);
    nl_websocket_free(ws);
    probe_done(&p);
    check_close_on_the_wire("wire-app", 4321, "app says bye \xc3\xa9");

    /* idleTimeout: 1001 before the connection fails. */
    expect_failure(c, "{\"path\": \"quiet\", \"query\": {\"tag\": \"wire-idle\"}, \"idleTimeout\": 0.3}", 1, "timeout",
                   "idleTimeout");
    check_close_on_the_wire("wire-idle", 1001, NULL);

    /* nl_websocket_free of an open connection: 1001, the socket taking it at once. */
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"quiet\", \"query\": {\"tag\": \"wire-free\"}}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    nl_websocket_free(ws);
    probe_done(&p);
    check_close_on_the_wire("wire-free", 1001, NULL);
    nl_client_free(c);
}

static void test_close_without_reply_times_out(void)
{
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    json_t *error;
    double started;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"no-close-reply\", \"closeTimeout\": 0.5}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    started = now_ms();
    CHECK_INT_EQ(nl_websocket_close(ws, 1000, NULL, NULL), 0);
    REQUIRE(wait_until(&p, 10, is_closed));
    CHECK(now_ms() - started >= 400);
    CHECK_INT_EQ(p.code, 1006);
    CHECK_STR_EQ(probe_error_kind(&p, &error), "timeout");
    json_decref(error);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

/* Behind messages a server never reads, the close frame is never written: the close
 * still ends within closeTimeout of nl_websocket_close, not never. */
static void test_close_behind_unread_messages_still_times_out(void)
{
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    static char chunk[65536];
    json_t *error;
    double started;
    int i;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"no-read\", \"closeTimeout\": 0.5}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    for (i = 0; i < 64; i++) CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_BINARY, chunk, sizeof chunk, NULL), 0);
    started = now_ms();
    CHECK_INT_EQ(nl_websocket_close(ws, 1000, NULL, NULL), 0);
    REQUIRE(wait_until(&p, 10, is_closed));
    CHECK_MSG(now_ms() - started < 5000, "the close took %.0f ms", now_ms() - started);
    CHECK_INT_EQ(p.code, 1006);
    CHECK_STR_EQ(probe_error_kind(&p, &error), "timeout");
    json_decref(error);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_idle_timeout_fails_a_silent_connection(void)
{
    nl_client *c = echo_client(NULL);
    expect_failure(c, "{\"path\": \"silent\", \"idleTimeout\": 0.3}", 1, "timeout", "idleTimeout");
    nl_client_free(c);
}

static void test_ping_interval_pings_a_quiet_server(void)
{
    /* The raw server reports each message the client sends, a ping being one: after
     * 0.2 s of silence the client sent a masked, empty ping. */
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"frames\", \"pingInterval\": 0.2}", &p);
    REQUIRE(wait_until(&p, 10, has_one));
    CHECK_STR_EQ(p.count ? p.messages[0].data : "(none)", "[[1, 9, 1, 0]]");
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_ping_interval_keeps_a_quiet_connection_within_idle_timeout(void)
{
    /* The websockets server says nothing on /silent but answers pings: with pings
     * after 0.2 s of silence, a 3 s idleTimeout never passes (each pong has 2.8 s,
     * room for valgrind on a machine running other suites beside it), where without
     * them it would pass before the wait below ends. */
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"silent\", \"pingInterval\": 0.2, \"idleTimeout\": 3}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    sleep_ms(4500);
    CHECK_INT_EQ(p.closes, 0);
    CHECK_INT_EQ(p.errors, 0);
    close_and_wait(ws, &p);
    CHECK_INT_EQ(p.code, 1000);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

static void test_ping_interval_fails_a_server_that_does_not_answer(void)
{
    nl_client *c = hostile_client(NULL);
    expect_failure(c, "{\"path\": \"no-read\", \"pingInterval\": 0.2}", 1, "timeout", "pingInterval");
    nl_client_free(c);
}

static void test_server_that_stops_reading_bounds_the_send_queue(void)
{
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    static char chunk[65536];
    char *err = NULL;
    int i, rc = 0;
    json_t *doc;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"no-read\", \"maxQueuedBytes\": 1048576}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    /* 64 MB offered: the queue takes 1 MB (and the kernel's buffers what they hold). */
    for (i = 0; i < 1024 && rc == 0; i++) {
        rc = nl_websocket_send(ws, NL_WS_BINARY, chunk, sizeof chunk, &err);
        if (rc == 0)
            sleep_ms(i % 16 == 0 ? 5 : 0);  /* let the loop write what the socket takes */
    }
    CHECK_MSG(rc == -1, "all %d sends were queued", i);
    CHECK_MSG(i < 200, "%d sends of 64 KB were queued before the bound", i);
    doc = err ? nlt_parse(err, "send error") : NULL;
    CHECK_STR_EQ(doc ? error_kind(doc) : "", "too_large");
    CHECK(doc && strstr(error_message(doc), "maxQueuedBytes"));
    json_decref(doc);
    nl_free(err);
    nl_websocket_free(ws);  /* ends at once: the server will never read the close */
    probe_done(&p);
    nl_client_free(c);
}

static void test_server_that_pings_and_never_reads_keeps_memory_bounded(void)
{
    /* Every ping is answered with a pong the server never reads: the pongs waiting for
     * the socket are bounded too (reading stops), not only nl_websocket_send's queue. */
    nl_client *c = hostile_client(NULL);
    probe p;
    nl_websocket *ws;
    long rss0, rss, peak = 0;
    int i;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"ping-flood\"}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    rss0 = fh_rss_kb();
    for (i = 0; i < 30; i++) {
        sleep_ms(100);
        rss = fh_rss_kb();
        peak = rss > peak ? rss : peak;
    }
    nlt_note("RSS %ld KiB before the flood, %ld KiB at most during 3 s of it", rss0, peak);
    if (!fh_slow_mode() && rss0 > 0 && peak > 0)
        CHECK_MSG(peak - rss0 < 50 * 1024, "RSS grew by %ld KiB while the server pinged", peak - rss0);
    /* Still open: a server that keeps sending is not silent. */
    CHECK_INT_EQ(p.opens, 1);
    CHECK_INT_EQ(p.errors, 0);
    CHECK_INT_EQ(p.closes, 0);
    nl_websocket_free(ws);  /* ends at once: the server will never read a close */
    probe_done(&p);
    nl_client_free(c);
}

/* Messages "t<thread>-<n>" back from the echo server: each thread's in its order. */
typedef struct ordered {
    pthread_mutex_t lock;
    int next[4];
    int received, out_of_order;
} ordered;

static void on_ordered_message(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data)
{
    ordered *o = user_data;
    int t = -1, n = -1;
    char text[32];
    (void)ws;
    (void)kind;
    snprintf(text, sizeof text, "%.*s", (int)(length < 31 ? length : 31), data);
    pthread_mutex_lock(&o->lock);
    if (sscanf(text, "t%d-%d", &t, &n) == 2 && t >= 0 && t < 4 && n == o->next[t])
        o->next[t]++;
    else
        o->out_of_order++;
    o->received++;
    pthread_mutex_unlock(&o->lock);
}

typedef struct sender {
    nl_websocket *ws;
    int thread, failed;
} sender;

static void *send_200(void *arg)
{
    sender *s = arg;
    int n;
    for (n = 0; n < 200; n++) {
        char text[32];
        int len = snprintf(text, sizeof text, "t%d-%d", s->thread, n);
        s->failed += nl_websocket_send(s->ws, NL_WS_TEXT, text, (size_t)len, NULL) != 0;
    }
    return NULL;
}

static void test_sends_from_many_threads_keep_each_threads_order(void)
{
    nl_client *c = echo_client(NULL);
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    ordered o;
    sender senders[4];
    pthread_t threads[4];
    nl_websocket *ws;
    int i;
    double deadline;
    memset(&o, 0, sizeof o);
    pthread_mutex_init(&o.lock, NULL);
    cb.on_message = on_ordered_message;
    cb.user_data = &o;
    ws = nl_websocket_open(c, "{\"path\": \"echo\"}", &cb, NULL);
    REQUIRE(ws != NULL);
    for (i = 0; i < 4; i++) {
        senders[i].ws = ws;
        senders[i].thread = i;
        senders[i].failed = 0;
        pthread_create(&threads[i], NULL, send_200, &senders[i]);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK_INT_EQ(senders[i].failed, 0);
    }
    deadline = now_ms() + 20000;
    for (;;) {
        pthread_mutex_lock(&o.lock);
        i = o.received;
        pthread_mutex_unlock(&o.lock);
        if (i >= 800 || now_ms() > deadline)
            break;
        sleep_ms(10);
    }
    CHECK_INT_EQ(o.received, 800);
    CHECK_INT_EQ(o.out_of_order, 0);
    nl_websocket_free(ws);
    nl_client_free(c);
    pthread_mutex_destroy(&o.lock);
}

/* ---- the ABI's own rules ------------------------------------------------------------------- */

static void test_bad_documents_and_arguments_name_the_problem(void)
{
    nl_client *c = echo_client(NULL);
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    static const struct { const char *doc, *words; } bad[] = {
        { "{\"path\": \"echo\", \"protocls\": [\"chat\"]}", "protocls" },
        { "{\"path\": \"echo\", \"method\": \"POST\"}", "method" },
        { "{\"path\": \"echo\", \"protocols\": [\"a b\"]}", "protocols" },
        { "{\"path\": \"echo\", \"protocols\": \"chat\"}", "protocols" },
        { "{\"path\": \"echo\", \"fragmentBytes\": 5000}", "fragmentBytes" },
        { "{\"path\": \"echo\", \"maxMessageBytes\": 0}", "maxMessageBytes" },
        { "{\"path\": \"echo\", \"pingInterval\": 0}", "pingInterval" },
        { "{\"path\": \"echo\", \"pingInterval\": \"1\"}", "pingInterval" },
        { "{\"path\": \"echo\", \"headers\": {\"Sec-WebSocket-Protocol\": \"x\"}}", "protocols" },
        /* The handshake's own fields are refused when the document is read, naming the key. */
        { "{\"path\": \"echo\", \"headers\": {\"Upgrade\": \"h2c\"}}", "websocket key 'headers': header 'Upgrade'" },
        { "{\"path\": \"echo\", \"headers\": {\"connection\": \"close\"}}", "websocket key 'headers': header 'connection'" },
        { "{\"path\": \"echo\", \"headers\": {\"sec-websocket-key\": \"AAAAAAAAAAAAAAAAAAAAAA==\"}}", "headers" },
        { "{\"path\": \"echo\", \"headers\": {\"Sec-WebSocket-Extensions\": \"x\"}}", "headers" },
        { "{\"path\": \"echo\", \"auth\": {\"digest\": {\"user\": \"u\", \"password\": \"p\"}}}", "digest" },
        { "[1]", "object" },
        { "{", "JSON" },
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(bad); i++) {
        char *err = NULL;
        json_t *doc;
        nl_websocket *ws = nl_websocket_open(c, bad[i].doc, &cb, &err);
        CHECK_MSG(ws == NULL, "%s was accepted", bad[i].doc);
        if (ws == NULL) {
            doc = nlt_parse(err, "open error");
            CHECK_STR_EQ(error_kind(doc), "invalid_request");
            CHECK_MSG(strstr(error_message(doc), bad[i].words), "%s -> %s", bad[i].doc, err);
            json_decref(doc);
        }
        nl_websocket_free(ws);
        nl_free(err);
    }
    {
        /* A default header of the client's that the handshake writes: refused at open too. */
        char *err = NULL;
        nl_client *with_default = echo_client("\"headers\": {\"Connection\": \"keep-alive\"}");
        json_t *doc;
        CHECK(nl_websocket_open(with_default, "{\"path\": \"echo\"}", &cb, &err) == NULL);
        doc = nlt_parse(err, "open error");
        CHECK_STR_EQ(error_kind(doc), "invalid_request");
        CHECK_MSG(strstr(error_message(doc), "header 'Connection' is set by the WebSocket handshake"), "%s", err);
        json_decref(doc);
        nl_free(err);
        nl_client_free(with_default);
    }
    CHECK(nl_websocket_open(NULL, "{}", &cb, NULL) == NULL);
    CHECK(nl_websocket_open(c, NULL, &cb, NULL) == NULL);
    CHECK(nl_websocket_open(c, "{}", NULL, NULL) == NULL);
    cb.version = 99;
    CHECK(nl_websocket_open(c, "{}", &cb, NULL) == NULL);
    CHECK_INT_EQ(nl_websocket_send(NULL, NL_WS_TEXT, "x", 1, NULL), -1);
    CHECK_INT_EQ(nl_websocket_close(NULL, 1000, NULL, NULL), -1);
    nl_websocket_free(NULL);

    {
        probe p;
        nl_websocket *ws;
        char *err = NULL;
        json_t *doc;
        probe_init(&p);
        ws = open_ws(c, "{\"path\": \"echo\"}", &p);
        CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "\xff\xfe", 2, &err), -1);
        doc = nlt_parse(err, "send error");
        CHECK_STR_EQ(error_kind(doc), "invalid_request");
        json_decref(doc);
        nl_free(err);
        err = NULL;
        CHECK_INT_EQ(nl_websocket_send(ws, 7, "x", 1, NULL), -1);
        CHECK_INT_EQ(nl_websocket_close(ws, 1005, NULL, &err), -1);
        doc = nlt_parse(err, "close error");
        CHECK(strstr(error_message(doc), "1005") != NULL);
        json_decref(doc);
        nl_free(err);
        /* The connection is still good after refused calls. */
        CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "still here", 10, NULL), 0);
        REQUIRE(wait_until(&p, 10, has_one));
        CHECK_STR_EQ(p.count ? p.messages[0].data : "", "still here");
        close_and_wait(ws, &p);
        nl_websocket_free(ws);
        probe_done(&p);
    }
    nl_client_free(c);
}

static void test_client_free_ends_open_connections_first(void)
{
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    json_t *error;
    char *err = NULL;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\"}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    nl_client_free(c);
    /* Delivered before nl_client_free returned. */
    CHECK_INT_EQ(p.closes, 1);
    CHECK_INT_EQ(p.code, 1006);
    CHECK_STR_EQ(probe_error_kind(&p, &error), "cancelled");
    json_decref(error);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "x", 1, &err), -1);
    nl_free(err);
    nl_websocket_free(ws);
    probe_done(&p);
}

static void test_client_free_ends_a_paused_connection_too(void)
{
    /* Paused with nothing to send, the socket is out of the loop's epoll set; the
     * loop's stop must end the connection all the same, as the header says. */
    nl_client *c = echo_client(NULL);
    probe p;
    nl_websocket *ws;
    json_t *error;
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\"}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    CHECK_INT_EQ(nl_websocket_pause(ws, 1), 0);
    /* The echo arrives paused: the socket leaves the epoll set unread. */
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "x", 1, NULL), 0);
    sleep_ms(200);
    CHECK_INT_EQ(p.count, 0);
    nl_client_free(c);
    CHECK_INT_EQ(p.closes, 1);
    CHECK_INT_EQ(p.code, 1006);
    CHECK_STR_EQ(probe_error_kind(&p, &error), "cancelled");
    json_decref(error);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "x", 1, NULL), -1);
    nl_websocket_free(ws);
    probe_done(&p);
}

/* Sends, pauses and resumes from another thread until the connection refuses them. */
typedef struct {
    nl_websocket *ws;
    int started;  /* __atomic */
    int refused;
} racing_sender;

static void *send_until_refused(void *arg)
{
    racing_sender *r = arg;
    int i;
    for (i = 0; i < 200000 && !r->refused; i++) {
        __atomic_store_n(&r->started, 1, __ATOMIC_SEQ_CST);
        if (nl_websocket_send(r->ws, NL_WS_TEXT, "x", 1, NULL) != 0) r->refused = 1;
        nl_websocket_pause(r->ws, i % 2 == 0);
        {   /* each send and resume queues work for the loop: no backlog */
            struct timespec pause_for = {0, 20000};
            nanosleep(&pause_for, NULL);
        }
    }
    return NULL;
}

static void test_client_free_beside_sends_of_another_thread(void)
{
    /* The header allows a send on one thread while another frees the client: what
     * the send queues on the loop while nl_client_free ends the connection must run
     * on the loop (before the connection's state is freed), never beside it. The
     * sanitizers' runs see a use after free if it runs beside it. */
    int round;
    for (round = 0; round < 10; round++) {
        nl_client *c = echo_client(NULL);
        probe p;
        racing_sender r;
        pthread_t thread;
        probe_init(&p);
        r.ws = open_ws(c, "{\"path\": \"echo\"}", &p);
        r.started = 0;
        r.refused = 0;
        REQUIRE(wait_until(&p, 10, is_open));
        pthread_create(&thread, NULL, send_until_refused, &r);
        while (!__atomic_load_n(&r.started, __ATOMIC_SEQ_CST)) sleep_ms(1);
        sleep_ms(3 * round);
        nl_client_free(c);
        pthread_join(thread, NULL);
        CHECK_INT_EQ(r.refused, 1);
        CHECK_INT_EQ(p.closes, 1);
        nl_websocket_free(r.ws);
        probe_done(&p);
    }
}

static void test_free_stops_callbacks_even_from_inside_one(void)
{
    nl_client *c = echo_client(NULL);
    probe p, q2;
    nl_websocket *ws;
    int i;
    /* Freed while messages keep coming: no callback after nl_websocket_free returns. */
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\"}", &p);
    for (i = 0; i < 20; i++)
        nl_websocket_send(ws, NL_WS_TEXT, "m", 1, NULL);
    REQUIRE(wait_until(&p, 10, has_one));
    nl_websocket_free(ws);
    pthread_mutex_lock(&p.lock);
    i = p.count + p.closes;
    pthread_mutex_unlock(&p.lock);
    sleep_ms(200);
    CHECK_INT_EQ(p.count + p.closes, i);
    probe_done(&p);

    /* Freed from inside its own on_message. */
    probe_init(&q2);
    ws = open_ws(c, "{\"path\": \"echo\"}", &q2);
    q2.free_on_message = ws;
    nl_websocket_send(ws, NL_WS_TEXT, "one", 3, NULL);
    nl_websocket_send(ws, NL_WS_TEXT, "two", 3, NULL);
    REQUIRE(wait_until(&q2, 10, has_one));
    sleep_ms(200);
    CHECK_INT_EQ(q2.count, 1);
    CHECK_INT_EQ(q2.closes, 0);
    probe_done(&q2);
    nl_client_free(c);

    /* Freed at once, while libcurl still connects (TLS through nginx): nothing is used
     * after it is gone (valgrind, ASan), and the client still works. */
    {
        char *config = nlt_format("{\"tls\": {\"caFile\": \"%s/ca.pem\"}}", cert_dir());
        char *doc = nlt_format("{\"path\": \"wss://localhost:%d/echo\", \"isFullPath\": true}", nginx_port());
        probe r;
        c = client_with_config(config);
        probe_init(&r);
        for (i = 0; i < 10; i++) {
            ws = open_ws(c, doc, &r);
            if (i % 2)
                sleep_ms(i);
            nl_websocket_free(ws);
        }
        sleep_ms(100);
        pthread_mutex_lock(&r.lock);
        r.opens = r.closes = 0;
        pthread_mutex_unlock(&r.lock);
        ws = open_ws(c, doc, &r);
        CHECK(wait_until(&r, 15, is_open) && r.opens == 1);
        close_and_wait(ws, &r);
        nl_websocket_free(ws);
        probe_done(&r);
        free(doc);
        nl_client_free(c);
    }
}

/* ---- pausing reads (nl_websocket_pause) ------------------------------------------------------ */

typedef struct burst {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int opens, closes, code, errors;
    int messages;       /* binary messages of the burst */
    int out_of_order;   /* messages whose index was not the next one */
    int sent_note;      /* the server's "sent N" text came */
    int pause_at;       /* on_message pauses the connection at this count (0: never) */
} burst;

static void burst_open(nl_websocket *ws, const char *open_json, void *user_data)
{
    burst *b = user_data;
    (void)ws;
    (void)open_json;
    pthread_mutex_lock(&b->lock);
    b->opens++;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

static void burst_message(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data)
{
    burst *b = user_data;
    int pause;
    pthread_mutex_lock(&b->lock);
    if (kind == NL_WS_BINARY && length >= 4) {
        const unsigned char *u = (const unsigned char *)data;
        unsigned index = (unsigned)u[0] << 24 | (unsigned)u[1] << 16 | (unsigned)u[2] << 8 | u[3];
        b->out_of_order += index != (unsigned)b->messages;
        b->messages++;
    } else if (kind == NL_WS_TEXT && length >= 5 && memcmp(data, "sent ", 5) == 0) {
        b->sent_note++;
    } else {
        b->messages++;  /* an echo */
    }
    pause = b->pause_at > 0 && b->messages == b->pause_at;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
    if (pause)
        CHECK_INT_EQ(nl_websocket_pause(ws, 1), 0);  /* from inside the callback */
}

static void burst_error(nl_websocket *ws, const char *error_json, void *user_data)
{
    burst *b = user_data;
    (void)ws;
    (void)error_json;
    pthread_mutex_lock(&b->lock);
    b->errors++;
    pthread_mutex_unlock(&b->lock);
}

static void burst_close(nl_websocket *ws, int code, const char *reason, void *user_data)
{
    burst *b = user_data;
    (void)ws;
    (void)reason;
    pthread_mutex_lock(&b->lock);
    b->closes++;
    b->code = code;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

static nl_websocket *open_burst(nl_client *c, const char *doc, burst *b)
{
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    nl_websocket *ws;
    char *err = NULL;
    memset(b, 0, sizeof(*b));
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->changed, NULL);
    cb.on_open = burst_open;
    cb.on_message = burst_message;
    cb.on_error = burst_error;
    cb.on_close = burst_close;
    cb.user_data = b;
    ws = nl_websocket_open(c, doc, &cb, &err);
    CHECK_MSG(ws != NULL, "nl_websocket_open(%s) -> %s", doc, err ? err : "(no error)");
    nl_free(err);
    return ws;
}

static void burst_done(burst *b)
{
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->changed);
}

/* Reads a field of `b` under its lock. */
static int burst_read(burst *b, const int *field)
{
    int value;
    pthread_mutex_lock(&b->lock);
    value = *field;
    pthread_mutex_unlock(&b->lock);
    return value;
}

/* Waits until `*field` >= `want` or `seconds` pass; the value then. */
static int burst_wait(burst *b, const int *field, int want, double seconds)
{
    double deadline = now_ms() + seconds * 1000.0 * (fh_slow_mode() ? 4 : 1);
    int value;
    while ((value = burst_read(b, field)) < want && now_ms() < deadline)
        sleep_ms(10);
    return value;
}

static void test_pause_stops_reading_and_resume_delivers_the_rest_in_order(void)
{
    /* The server sends 300 messages of 1000 random bytes at once. Paused from inside
     * on_message at the first one, the connection delivers only what its one read of
     * at most 4 KiB held (4 messages more at most); resumed, the rest, in order. */
    nl_client *c = echo_client(NULL);
    burst b;
    nl_websocket *ws = open_burst(c, "{\"path\": \"burst\", \"query\": {\"count\": 300, \"bytes\": 1000}}", &b);
    int seen;
    pthread_mutex_lock(&b.lock);
    b.pause_at = 1;
    pthread_mutex_unlock(&b.lock);
    REQUIRE(burst_wait(&b, &b.messages, 1, 10) >= 1);
    sleep_ms(fh_slow_mode() ? 1200 : 400);  /* unpaused, all 300 would arrive meanwhile */
    seen = burst_read(&b, &b.messages);
    CHECK_MSG(seen <= 5, "%d messages arrived while paused", seen);
    CHECK_INT_EQ(burst_read(&b, &b.sent_note), 0);
    CHECK_INT_EQ(nl_websocket_pause(ws, 0), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.sent_note, 1, 10), 1);
    CHECK_INT_EQ(burst_read(&b, &b.messages), 300);
    CHECK_INT_EQ(burst_read(&b, &b.out_of_order), 0);
    CHECK_INT_EQ(nl_websocket_close(ws, 1000, NULL, NULL), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.closes, 1, 10), 1);
    CHECK_INT_EQ(b.code, 1000);
    CHECK_INT_EQ(b.errors, 0);
    nl_websocket_free(ws);
    burst_done(&b);
    CHECK_INT_EQ(nl_websocket_pause(NULL, 1), -1);
    nl_client_free(c);
}

static void test_paused_before_the_handshake_opens_and_a_close_reads_again(void)
{
    nl_client *c = echo_client(NULL);
    burst b;
    nl_websocket *ws = open_burst(c, "{\"path\": \"echo\"}", &b);
    /* Paused before on_open: the handshake completes, echoes wait in the socket. */
    CHECK_INT_EQ(nl_websocket_pause(ws, 1), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "one", 3, NULL), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "two", 3, NULL), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.opens, 1, 10), 1);
    sleep_ms(300);
    CHECK_INT_EQ(burst_read(&b, &b.messages), 0);
    CHECK_INT_EQ(nl_websocket_pause(ws, 0), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.messages, 2, 10), 2);
    /* Paused again: a close reads on, so the echo and the server's answer arrive. */
    CHECK_INT_EQ(nl_websocket_pause(ws, 1), 0);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "three", 5, NULL), 0);
    sleep_ms(300);
    CHECK_INT_EQ(burst_read(&b, &b.messages), 2);
    CHECK_INT_EQ(nl_websocket_close(ws, 1000, "bye", NULL), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.closes, 1, 10), 1);
    CHECK_INT_EQ(b.code, 1000);
    CHECK_INT_EQ(b.messages, 3);
    CHECK_INT_EQ(b.errors, 0);
    nl_websocket_free(ws);
    burst_done(&b);
    nl_client_free(c);
}

static void test_idle_timeout_does_not_count_while_paused(void)
{
    nl_client *c = echo_client(NULL);
    burst b;
    nl_websocket *ws = open_burst(c, "{\"path\": \"silent\", \"idleTimeout\": 0.3}", &b);
    CHECK_INT_EQ(nl_websocket_pause(ws, 1), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.opens, 1, 10), 1);
    sleep_ms(900);
    CHECK_INT_EQ(burst_read(&b, &b.closes), 0);  /* the silence is the reader's */
    CHECK_INT_EQ(nl_websocket_pause(ws, 0), 0);
    CHECK_INT_EQ(burst_wait(&b, &b.closes, 1, 10), 1);  /* the server's again: timeout */
    CHECK_INT_EQ(b.errors, 1);
    CHECK_INT_EQ(b.code, 1006);
    nl_websocket_free(ws);
    burst_done(&b);
    nl_client_free(c);
}

static void test_many_idle_connections_share_the_event_loop(void)
{
    /* 50 connections open at once cost no thread each: the process's thread count
     * stays near what one request needs. */
    nl_client *c = echo_client(NULL);
    enum { N = 50 };
    static probe p[N];
    nl_websocket *ws[N];
    int i, opened = 0, threads = 0;
    FILE *f;
    char line[256];
    for (i = 0; i < N; i++) {
        probe_init(&p[i]);
        ws[i] = open_ws(c, "{\"path\": \"echo\"}", &p[i]);
    }
    for (i = 0; i < N; i++)
        opened += wait_until(&p[i], 20, is_open) && p[i].opens == 1;
    CHECK_INT_EQ(opened, N);
    sleep_ms(100);  /* the opener threads leave when no connection waits */
    f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0)
            threads = atoi(line + 8);
    if (f)
        fclose(f);
    CHECK_MSG(threads > 0 && threads < 10, "%d threads for %d connections", threads, N);
    for (i = 0; i < N; i++) {
        nl_websocket_send(ws[i], NL_WS_TEXT, "ping", 4, NULL);
    }
    for (i = 0; i < N; i++) {
        CHECK(wait_until(&p[i], 10, has_one) && p[i].count == 1);
        close_and_wait(ws[i], &p[i]);
        nl_websocket_free(ws[i]);
        probe_done(&p[i]);
    }
    nl_client_free(c);
}

/* A child of fork() shares the connection's socket, not the loop that runs it: a send
 * or close there is not_connected (it reported 0 and sent nothing), and the parent's
 * connection goes on. */
static void test_a_child_of_fork_cannot_send_on_its_parents_connection(void)
{
    nl_client *c;
    probe p;
    nl_websocket *ws;
    pid_t pid;
    int status = 0;
    SKIP_UNDER_TSAN();
    if (fh_slow_mode()) {
        /* memcheck reports what the parent's threads held as lost in the child, and a
         * child that frees its copies may wait for a callback that was running at the
         * fork: the plain and AddressSanitizer runs test this */
        nlt_note("skipped under valgrind");
        return;
    }
    c = echo_client(NULL);
    probe_init(&p);
    ws = open_ws(c, "{\"path\": \"echo\"}", &p);
    REQUIRE(wait_until(&p, 10, is_open));
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char *err = NULL;
        int sent, closed;
        alarm(20);
        sent = nl_websocket_send(ws, NL_WS_TEXT, "from the child", 14, &err);
        sent = sent == -1 && err != NULL && strstr(err, "not_connected") != NULL && strstr(err, "parent") != NULL;
        nl_free(err);
        err = NULL;
        closed = nl_websocket_close(ws, 1000, "child", &err) == -1 && err != NULL && strstr(err, "parent") != NULL;
        nl_free(err);
        _exit(sent && closed ? 0 : 3);
    }
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's send or close on the parent's connection "
              "did not fail as not_connected (status %d)", status);
    CHECK_INT_EQ(nl_websocket_send(ws, NL_WS_TEXT, "from the parent", 15, NULL), 0);
    REQUIRE(wait_until(&p, 10, has_one));
    CHECK_INT_EQ(p.count, 1);
    nl_websocket_free(ws);
    probe_done(&p);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_echo_text_and_binary),
        NLT_TEST(test_a_send_from_on_open_is_queued_however_soon_it_runs),
        NLT_TEST(test_a_child_of_fork_cannot_send_on_its_parents_connection),
        NLT_TEST(test_subprotocol_offered_and_chosen_one_reported),
        NLT_TEST(test_server_close_code_and_reason_reported),
        NLT_TEST(test_registered_close_codes_after_rfc_6455_are_reported),
        NLT_TEST(test_a_close_code_arriving_a_byte_at_a_time_is_read_as_sent),
        NLT_TEST(test_large_and_fragmented_messages_from_the_server),
        NLT_TEST(test_large_message_sent_in_fragments_comes_back_whole),
        NLT_TEST(test_frames_on_the_wire_are_masked_and_fragmented),
        NLT_TEST(test_server_ping_is_answered_with_pong),
        NLT_TEST(test_handshake_carries_the_clients_headers_auth_and_cookies),
        NLT_TEST(test_adapt_and_log_hooks_see_the_handshake),
        NLT_TEST(test_log_hook_redacts_the_handshakes_credentials),
        NLT_TEST(test_permessage_deflate_is_agreed_and_used_both_ways),
        NLT_TEST(test_deflate_bomb_and_bad_inflated_text_fail_the_connection),
        NLT_TEST(test_wss_through_nginx_with_the_clients_ca),
        NLT_TEST(test_wss_checks_the_pinned_public_key),
        NLT_TEST(test_wss_presents_the_client_certificate),
        NLT_TEST(test_wss_and_ws_through_tinyproxy_connect),
        NLT_TEST(test_ws_over_the_clients_unix_socket),
        NLT_TEST(test_resolve_entries_apply_to_websockets),
        NLT_TEST(test_bad_handshakes_fail_with_the_reason),
        NLT_TEST(test_broken_frames_fail_the_connection),
        NLT_TEST(test_message_over_max_message_bytes_closes_with_1009),
        NLT_TEST(test_failures_send_their_close_code_to_the_server),
        NLT_TEST(test_malformed_frame_header_sends_1002_to_the_server),
        NLT_TEST(test_close_frame_of_one_byte_fails_with_1002),
        NLT_TEST(test_close_idle_and_free_send_their_code_to_the_server),
        NLT_TEST(test_close_without_reply_times_out),
        NLT_TEST(test_close_behind_unread_messages_still_times_out),
        NLT_TEST(test_idle_timeout_fails_a_silent_connection),
        NLT_TEST(test_ping_interval_pings_a_quiet_server),
        NLT_TEST(test_ping_interval_keeps_a_quiet_connection_within_idle_timeout),
        NLT_TEST(test_ping_interval_fails_a_server_that_does_not_answer),
        NLT_TEST(test_server_that_stops_reading_bounds_the_send_queue),
        NLT_TEST(test_server_that_pings_and_never_reads_keeps_memory_bounded),
        NLT_TEST(test_sends_from_many_threads_keep_each_threads_order),
        NLT_TEST(test_bad_documents_and_arguments_name_the_problem),
        NLT_TEST(test_client_free_ends_open_connections_first),
        NLT_TEST(test_client_free_ends_a_paused_connection_too),
        NLT_TEST(test_client_free_beside_sends_of_another_thread),
        NLT_TEST(test_free_stops_callbacks_even_from_inside_one),
        NLT_TEST(test_many_idle_connections_share_the_event_loop),
        NLT_TEST(test_pause_stops_reading_and_resume_delivers_the_rest_in_order),
        NLT_TEST(test_paused_before_the_handshake_opens_and_a_close_reads_again),
        NLT_TEST(test_idle_timeout_does_not_count_while_paused),
    };
    int rc = nlt_main(argc, argv, tests, NLT_COUNT(tests));
    fh_server_stop(&g_proxy);
    fh_server_stop(&g_nginx);
    fh_server_stop(&g_nginx_mutual);
    fh_server_stop(&g_hostile);
    fh_server_stop(&g_echo);
    if (g_cert_dir[0] != '\0')
        fh_sh("rm -rf '%s'", g_cert_dir);
    return rc;
}
