/*
 * origins.h — three loopback origins for the tests of cross-origin rules (include
 * harness.h and fault_helpers.h first):
 *   A = NETLAYER_TEST_URL (server.py via with_server.py);
 *   B = a second server.py on another port, started on first use (port_b());
 *   T = tls_server.py, one port speaking both https and plain http with a certificate
 *       from a local CA made with openssl (port_t(); the CA is g_cert_dir/ca.pem), so a
 *       redirect can change the scheme alone.
 * origins_teardown() stops B and T. make_client() and req() take JSON objects.
 */
#ifndef NETLAYER_TEST_ORIGINS_H
#define NETLAYER_TEST_ORIGINS_H

static fh_server g_b = { -1, -1, 0, "" };
static fh_server g_t = { -1, -1, 0, "" };
static char g_cert_dir[64] = "";

/* ---- setup ---------------------------------------------------------------------------- */

static inline int port_a(void)
{
    const char *b = base_url();
    const char *colon = strrchr(b, ':');
    REQUIRE(strncmp(b, "http://127.0.0.1:", 17) == 0 && colon != NULL);
    return atoi(colon + 1);
}

static inline int port_b(void)
{
    if (g_b.port <= 0)
        REQUIRE_MSG(fh_server_start(&g_b, "server.py", NULL), "cannot start a second server.py");
    return g_b.port;
}

static inline int port_t(void)
{
    if (g_t.port <= 0) {
        char *cert, *key;
        const char *extra[5];
        int ok;
        snprintf(g_cert_dir, sizeof(g_cert_dir), "/tmp/netlayer-sec-XXXXXX");
        REQUIRE(mkdtemp(g_cert_dir) != NULL);
        REQUIRE_MSG(fh_make_certs(g_cert_dir), "openssl could not make certificates");
        cert = nlt_format("%s/server.pem", g_cert_dir);
        key = nlt_format("%s/server.key", g_cert_dir);
        extra[0] = "--cert";
        extra[1] = cert;
        extra[2] = "--key";
        extra[3] = key;
        extra[4] = NULL;
        ok = fh_server_start(&g_t, "tls_server.py", extra);
        free(cert);
        free(key);
        REQUIRE_MSG(ok, "cannot start tls_server.py");
    }
    return g_t.port;
}

static inline void origins_teardown(void)
{
    fh_server_stop(&g_b);
    fh_server_stop(&g_t);
    if (g_cert_dir[0] != '\0')
        fh_rm_dir(g_cert_dir);
}

/* nl_client_new with a config object (stolen), aborting the test on failure. */
static inline nl_client *make_client(json_t *config)
{
    char *text = json_dumps(config, JSON_COMPACT);
    char *err = NULL;
    nl_client *c;
    json_decref(config);
    REQUIRE(text != NULL);
    c = nl_client_new(text, &err);
    if (c == NULL) {
        nlt_fail(__FILE__, __LINE__, "nl_client_new", "config %s -> %s", text, err ? err : "(null)");
        nl_free(err);
        free(text);
        nlt_abort_test();
    }
    free(text);
    return c;
}

/* nl_request with an endpoint object (stolen); returns the parsed result. */
static inline json_t *req(nl_client *c, json_t *endpoint)
{
    char *text = json_dumps(endpoint, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *r;
    json_decref(endpoint);
    REQUIRE(text != NULL);
    r = request_doc(c, text);
    free(text);
    return r;
}

#endif /* NETLAYER_TEST_ORIGINS_H */
