/*
 * test_tls.c — TLS verification, a local CA, public-key pinning and verify off
 * (reliability-notes rows 6 and 18, contract section 7); client certificates, and
 * the TLS files a config names: regular files or refused at creation, an encrypted
 * key never a passphrase prompt.
 *
 * The certificates are made at test time with the openssl command-line tool in a
 * temporary folder: a local CA, a server certificate for 127.0.0.1 and localhost
 * signed by it, one for wrong.example signed by it, and a self-signed one. Each is
 * served by Tests/server/tls_server.py (started by this test, loopback only).
 * NETLAYER_TEST_URL (through Tests/server/with_server.py) serves the normal
 * request that must still work after each failure.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 120
#include "harness.h"
#include "fault_helpers.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char g_dir[64] = "";
static fh_server g_ca_signed = { -1, -1, 0, "" };
static fh_server g_self_signed = { -1, -1, 0, "" };
static fh_server g_wrong_host = { -1, -1, 0, "" };
static fh_server g_mutual = { -1, -1, 0, "" };  /* asks for a client certificate the CA signed */
static int g_ready = 0;

static char *cert_path(const char *name)
{
    return nlt_format("%s/%s", g_dir, name);
}

static void start_tls_server(fh_server *s, const char *cert, const char *key)
{
    char *c = cert_path(cert), *k = cert_path(key);
    const char *extra[] = { "--cert", c, "--key", k, NULL };
    int ok = fh_server_start(s, "tls_server.py", extra);
    free(c);
    free(k);
    REQUIRE_MSG(ok, "cannot start tls_server.py with %s", cert);
}

/* Makes the certificates and starts the three servers on first use. */
static void setup(void)
{
    if (g_ready)
        return;
    snprintf(g_dir, sizeof(g_dir), "/tmp/netlayer-tls-XXXXXX");
    REQUIRE(mkdtemp(g_dir) != NULL);
    REQUIRE_MSG(fh_make_certs(g_dir), "openssl could not make the test certificates in %s", g_dir);
    start_tls_server(&g_ca_signed, "server.pem", "server.key");
    start_tls_server(&g_self_signed, "self.pem", "self.key");
    start_tls_server(&g_wrong_host, "wronghost.pem", "wronghost.key");
    REQUIRE_MSG(fh_sh("cd '%s' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
                      " -keyout client.key -out client.csr -subj '/CN=netlayer-client'"
                      " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                      " -out client.pem"
                      " && openssl pkey -in client.key -aes256 -passout pass:open-s3same -out client-enc.key"
                      " && openssl pkey -in client.key -traditional -aes256 -passout pass:open-s3same"
                      " -out client-enc-traditional.key"
                      " && cat client.pem client-enc.key > client-and-enc-key.pem", g_dir),
                "openssl could not make the client certificate in %s", g_dir);
    {
        char *c = cert_path("server.pem"), *k = cert_path("server.key"), *ca = cert_path("ca.pem");
        const char *extra[] = { "--cert", c, "--key", k, "--client-ca", ca, NULL };
        int ok = fh_server_start(&g_mutual, "tls_server.py", extra);
        free(c);
        free(k);
        free(ca);
        REQUIRE_MSG(ok, "cannot start tls_server.py with --client-ca");
    }
    g_ready = 1;
}

static void teardown(void)
{
    fh_server_stop(&g_ca_signed);
    fh_server_stop(&g_self_signed);
    fh_server_stop(&g_wrong_host);
    fh_server_stop(&g_mutual);
    if (g_dir[0] != '\0')
        fh_rm_dir(g_dir);
}

/* A client for NETLAYER_TEST_URL with `tls_json` as its "tls" (NULL: none) and more members. */
static nl_client *tls_client(const char *tls_json, const char *more)
{
    char *extra = nlt_format("\"timeout\": 10%s%s%s%s", tls_json ? ", \"tls\": " : "", tls_json ? tls_json : "",
                             more ? ", " : "", more ? more : "");
    nl_client *c = client_for(extra);
    free(extra);
    return c;
}

static json_t *get_https(nl_client *c, const char *host, int port)
{
    return request_json(c, "{\"path\": \"https://%s:%d/json\", \"isFullPath\": true}", host, port);
}

static void check_ok_over_tls(json_t *r)
{
    CHECK_OK(r);
    CHECK(json_is_true(jpath(r, "value.tls")));
    /* a new connection's handshake ends after its connect; a reused one has neither */
    CHECK_MSG(jpath_num(r, "timing.tlsMs", -1) >= jpath_num(r, "timing.connectMs", 0) &&
                  jpath_num(r, "timing.firstByteMs", -1) >= jpath_num(r, "timing.tlsMs", 0),
              "timing: tls %.3f connect %.3f first byte %.3f", jpath_num(r, "timing.tlsMs", -1),
              jpath_num(r, "timing.connectMs", -1), jpath_num(r, "timing.firstByteMs", -1));
}

static void check_client_still_works(nl_client *c)
{
    json_t *r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.id", -1), 1);
    json_decref(r);
}

/* ---- verification on by default ------------------------------------------------------ */

static void test_self_signed_certificate_is_tls_error_by_default(void)
{
    nl_client *c;
    json_t *r;
    setup();
    c = tls_client(NULL, NULL);
    r = get_https(c, "127.0.0.1", g_self_signed.port);
    CHECK_KIND(r, "tls");
    nlt_note("self-signed -> %s (%s)", error_kind(r), error_message(r));
    json_decref(r);
    r = get_https(c, "localhost", g_self_signed.port);
    CHECK_KIND(r, "tls");
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_certificate_of_an_unknown_ca_is_tls_error(void)
{
    nl_client *c;
    json_t *r;
    setup();
    c = tls_client("{\"verify\": true}", NULL);
    r = get_https(c, "127.0.0.1", g_ca_signed.port);
    CHECK_KIND(r, "tls");
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- a local CA --------------------------------------------------------------------- */

static void test_ca_file_trusts_the_local_ca(void)
{
    nl_client *c;
    json_t *r;
    char *tls;
    setup();
    tls = nlt_format("{\"caFile\": \"%s/ca.pem\"}", g_dir);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_ca_signed.port);
    check_ok_over_tls(r);
    CHECK(jpath_num(r, "timing.tlsMs", 0) > 0);  /* a new connection: a handshake */
    json_decref(r);
    r = get_https(c, "localhost", g_ca_signed.port);
    check_ok_over_tls(r);
    json_decref(r);
    /* the local CA does not make a self-signed certificate acceptable */
    r = get_https(c, "127.0.0.1", g_self_signed.port);
    CHECK_KIND(r, "tls");
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
    free(tls);
}

static void test_certificate_for_another_host_is_tls_error_even_with_its_ca(void)
{
    nl_client *c;
    json_t *r;
    char *tls;
    setup();
    tls = nlt_format("{\"caFile\": \"%s/ca.pem\"}", g_dir);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_wrong_host.port);
    CHECK_KIND(r, "tls");
    nlt_note("wrong host -> %s (%s)", error_kind(r), error_message(r));
    json_decref(r);
    r = get_https(c, "localhost", g_wrong_host.port);
    CHECK_KIND(r, "tls");
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
    free(tls);
}

/* ---- pinning ------------------------------------------------------------------------- */

static void test_pinned_public_key_matching_is_ok_and_wrong_pin_is_tls(void)
{
    char *cert = NULL, *pin = NULL, *tls;
    nl_client *c;
    json_t *r;
    setup();
    cert = cert_path("server.pem");
    pin = fh_pin_of(cert);
    REQUIRE_MSG(pin != NULL, "openssl could not compute the pin of %s", cert);

    tls = nlt_format("{\"caFile\": \"%s/ca.pem\", \"pinnedPublicKey\": \"%s\"}", g_dir, pin);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_ca_signed.port);
    check_ok_over_tls(r);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
    free(tls);

    tls = nlt_format("{\"caFile\": \"%s/ca.pem\", \"pinnedPublicKey\": "
                     "\"sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}", g_dir);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_ca_signed.port);
    CHECK_KIND(r, "tls");
    nlt_note("wrong pin -> %s (%s)", error_kind(r), error_message(r));
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
    free(tls);
    free(pin);
    free(cert);
}

/* A pin is checked even when verification is off. */
static void test_pin_is_enforced_with_verify_off(void)
{
    char *cert = NULL, *pin = NULL, *tls;
    nl_client *c;
    json_t *r;
    setup();
    cert = cert_path("self.pem");
    pin = fh_pin_of(cert);
    REQUIRE(pin != NULL);
    tls = nlt_format("{\"verify\": false, \"pinnedPublicKey\": \"%s\"}", pin);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_self_signed.port);
    check_ok_over_tls(r);
    json_decref(r);
    /* the pin of the self-signed key does not match the CA-signed server's key */
    r = get_https(c, "127.0.0.1", g_ca_signed.port);
    CHECK_KIND(r, "tls");
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
    free(tls);
    free(pin);
    free(cert);
}

/* ---- verification off: allowed, explicitly, and logged ---------------------------------- */

static void test_verify_false_is_ok_against_self_signed_and_logs_a_warning(void)
{
    nlt_log_sink sink;
    nl_client *c;
    json_t *r, *e;
    size_t i;
    int warnings = 0;
    setup();
    nlt_log_sink_init(&sink);
    c = tls_client("{\"verify\": false}", "\"log\": {\"level\": \"error\"}");
    REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, nlt_log_sink_hook, &sink) == 0);
    r = get_https(c, "127.0.0.1", g_self_signed.port);
    check_ok_over_tls(r);
    json_decref(r);
    r = get_https(c, "localhost", g_wrong_host.port); /* wrong host too: verification is off */
    check_ok_over_tls(r);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);

    json_array_foreach(sink.events, i, e) {
        const char *ev = jpath_str(e, "event");
        const char *msg = jpath_str(e, "message");
        if (ev != NULL && strcmp(ev, "warning") == 0) {
            warnings++;
            CHECK_MSG(msg != NULL && nlt_stristr(msg, "TLS") != NULL && nlt_stristr(msg, "verif") != NULL,
                      "warning does not mention TLS verification: %s", msg ? msg : "(no message)");
        }
    }
    CHECK_MSG(warnings >= 1, "no \"warning\" log event at level error with tls.verify false (%zu events)",
              json_array_size(sink.events));
    if (warnings >= 1) {
        char *s = json_dumps(json_array_get(sink.events, 0), JSON_COMPACT);
        nlt_note("%d warning(s); first event: %.300s", warnings, s ? s : "");
        free(s);
    }
    nlt_log_sink_done(&sink);
}

/* ---- client certificates (mutual TLS) -------------------------------------------------- */

static char *mutual_tls(const char *cert, const char *key, const char *password)
{
    char *ca = cert_path("ca.pem"), *c = cert ? cert_path(cert) : NULL, *k = key ? cert_path(key) : NULL;
    char *tls = nlt_format("{\"caFile\": \"%s\"%s%s%s%s%s%s%s%s%s}", ca,
                           c ? ", \"certFile\": \"" : "", c ? c : "", c ? "\"" : "",
                           k ? ", \"keyFile\": \"" : "", k ? k : "", k ? "\"" : "",
                           password ? ", \"keyPassword\": \"" : "", password ? password : "", password ? "\"" : "");
    free(ca);
    free(c);
    free(k);
    return tls;
}

static void test_client_certificates_open_a_server_that_asks_for_one(void)
{
    static const char *const secret = "open-s3same";
    nlt_log_sink sink;
    nl_client *c;
    json_t *r, *e;
    char *tls, *text;
    size_t i;
    setup();

    /* No certificate: under TLS 1.3 the server refuses after the handshake, so the
     * alert (kind tls) races the server's close (a send error): either way a failure. */
    tls = mutual_tls(NULL, NULL, NULL);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_mutual.port);
    CHECK(!result_ok(r));
    json_decref(r);
    nl_client_free(c);
    free(tls);

    tls = mutual_tls("client.pem", "client.key", NULL);
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_mutual.port);
    check_ok_over_tls(r);
    CHECK_STR_EQ(jpath_str(r, "value.clientCN"), "netlayer-client");
    json_decref(r);
    nl_client_free(c);
    free(tls);

    nlt_log_sink_init(&sink);
    tls = mutual_tls("client.pem", "client-enc.key", secret);  /* an encrypted key and its password */
    c = tls_client(tls, "\"log\": {\"level\": \"debug\"}");
    REQUIRE(nl_client_set_hook(c, NL_HOOK_LOG, nlt_log_sink_hook, &sink) == 0);
    r = get_https(c, "127.0.0.1", g_mutual.port);
    check_ok_over_tls(r);
    CHECK_STR_EQ(jpath_str(r, "value.clientCN"), "netlayer-client");
    json_decref(r);
    nl_client_free(c);
    free(tls);
    json_array_foreach(sink.events, i, e) {
        text = json_dumps(e, JSON_COMPACT);
        CHECK_MSG(text != NULL && strstr(text, secret) == NULL, "the key password is in a log event: %s", text);
        free(text);
    }
    CHECK(json_array_size(sink.events) > 0);
    nlt_log_sink_done(&sink);

    tls = mutual_tls("client.pem", "client-enc.key", "wrong");  /* a wrong password fails the request, not the client */
    c = tls_client(tls, NULL);
    r = get_https(c, "127.0.0.1", g_mutual.port);
    CHECK_KIND(r, "tls");
    CHECK(strstr(error_message(r) ? error_message(r) : "", "wrong") == NULL);
    json_decref(r);
    nl_client_free(c);
    free(tls);
}

static void test_unreadable_client_certificate_files_are_refused_naming_the_key(void)
{
    static const struct { const char *tls, *key; } cases[] = {
        {"{\"certFile\": \"/nonexistent/client.pem\"}", "certFile"},
        {"{\"certFile\": \"%s/client.pem\", \"keyFile\": \"/nonexistent/k.pem\"}", "keyFile"},
        {"{\"keyFile\": \"%s/client.key\"}", "keyFile"},
        {"{\"keyPassword\": \"x\"}", "keyPassword"},
        {"{\"certFile\": 7}", "certFile"},
    };
    size_t i;
    setup();
    for (i = 0; i < NLT_COUNT(cases); i++) {
        char *tls = nlt_format(cases[i].tls, g_dir);
        char *config = nlt_format("{\"baseURL\": \"%s\", \"tls\": %s}", base_url(), tls);
        char *error = NULL;
        nl_client *c = nl_client_new(config, &error);
        CHECK_MSG(c == NULL, "%s was accepted", config);
        CHECK_MSG(error != NULL && strstr(error, "invalid_request") != NULL && strstr(error, cases[i].key) != NULL,
                  "%s: %s", config, error ? error : "(no error)");
        if (c) nl_client_free(c);
        nl_free(error);
        free(config);
        free(tls);
    }
}

/* nl_client_new with `tls` (a format with %s for the certificate folder) refused with
   invalid_request naming `key` and saying `why`, at once. */
static void check_tls_refused(const char *tls_format, const char *key, const char *why)
{
    char *tls = nlt_format(tls_format, g_dir, g_dir, g_dir);
    char *config = nlt_format("{\"baseURL\": \"%s\", \"tls\": %s}", base_url(), tls);
    char *error = NULL, *named = nlt_format("'%s'", key);
    double started = now_ms();
    nl_client *c = nl_client_new(config, &error);
    CHECK_MSG(c == NULL && error != NULL && strstr(error, "invalid_request") != NULL && strstr(error, named) != NULL &&
                  strstr(error, why) != NULL,
              "%s: %s", tls, error ? error : "(accepted)");
    CHECK_MSG(now_ms() - started < 2000, "%s: refused after %.0f ms", tls, now_ms() - started);
    if (c) nl_client_free(c);
    nl_free(error);
    free(named);
    free(config);
    free(tls);
}

static void test_an_encrypted_key_without_its_password_is_refused_at_creation(void)
{
    setup();
    check_tls_refused("{\"certFile\": \"%s/client.pem\", \"keyFile\": \"%s/client-enc.key\"}", "keyPassword", "encrypted");
    check_tls_refused("{\"certFile\": \"%s/client.pem\", \"keyFile\": \"%s/client-enc-traditional.key\"}", "keyPassword",
                      "encrypted");
    check_tls_refused("{\"certFile\": \"%s/client-and-enc-key.pem\"}", "keyPassword", "encrypted");  /* the key beside the certificate */
}

/* What the test's child reports through `out`: the kind of its request's error, or "ok". */
static int child_requests_with_a_key_encrypted_after_creation(int out)
{
    char *key = cert_path("swapped.key"), *encrypted = cert_path("swapped-enc.key");
    char *tls = nlt_format("{\"caFile\": \"%s/ca.pem\", \"certFile\": \"%s/client.pem\", \"keyFile\": \"%s\"}", g_dir,
                           g_dir, key);
    char *config = nlt_format("{\"baseURL\": \"%s\", \"timeout\": 5, \"tls\": %s}", base_url(), tls);
    char *error = NULL, *answer;
    nl_client *c = nl_client_new(config, &error);
    json_t *r;
    if (c == NULL)
        return 1;
    if (rename(encrypted, key) != 0)  /* the key file is replaced by an encrypted one while the client lives */
        return 2;
    r = get_https(c, "127.0.0.1", g_mutual.port);
    answer = nlt_format("%s: %s", result_ok(r) ? "ok" : error_kind(r), result_ok(r) ? "" : error_message(r));
    if (write(out, answer, strlen(answer)) < 0)
        return 3;
    json_decref(r);
    nl_client_free(c);
    free(answer);
    free(config);
    free(tls);
    free(key);
    free(encrypted);
    return 0;
}

/* Without a password OpenSSL asks for one: on the terminal, else on standard input,
   and waits for the answer with no timeout. In a child without a terminal whose
   standard input is a pipe nobody writes to, the request must fail at once instead. */
static void test_a_key_encrypted_after_creation_fails_the_handshake_instead_of_asking(void)
{
    int stdin_pipe[2], result[2], status = 0;
    char text[512];
    ssize_t n = 0;
    double started;
    struct pollfd p;
    pid_t pid;
    SKIP_UNDER_TSAN();
    setup();
    REQUIRE(fh_sh("cd '%s' && cp client.key swapped.key && cp client-enc.key swapped-enc.key", g_dir));
    REQUIRE(pipe(stdin_pipe) == 0 && pipe(result) == 0);
    fflush(stdout);
    fflush(stderr);
    started = now_ms();
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        setsid();  /* no controlling terminal: /dev/tty cannot be opened */
        dup2(stdin_pipe[0], 0);
        close(result[0]);
        _exit(child_requests_with_a_key_encrypted_after_creation(result[1]));
    }
    close(stdin_pipe[0]);
    close(result[1]);
    p.fd = result[0];
    p.events = POLLIN;
    if (poll(&p, 1, 30000) == 1)
        n = read(result[0], text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    CHECK_MSG(n > 0, "the child gave no answer in %.0f ms: it waits for a passphrase", now_ms() - started);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    CHECK_MSG(strncmp(text, "tls:", 4) == 0, "the request with the encrypted key: %s", text);
    nlt_note("%s (%.0f ms)", text, now_ms() - started);
    close(stdin_pipe[1]);
    close(result[0]);
}

static void test_tls_files_that_are_not_regular_files_are_refused_naming_the_key(void)
{
    char *fifo;
    setup();
    fifo = cert_path("fifo.pem");
    REQUIRE(access(fifo, F_OK) == 0 || mkfifo(fifo, 0600) == 0);
    check_tls_refused("{\"caFile\": \"%s\"}", "caFile", "folder");
    check_tls_refused("{\"caFile\": \"%s/fifo.pem\"}", "caFile", "FIFO");
    check_tls_refused("{\"caFile\": \"/nonexistent/ca.pem\"}", "caFile", "No such file");
    check_tls_refused("{\"certFile\": \"%s\"}", "certFile", "folder");
    check_tls_refused("{\"certFile\": \"%s/fifo.pem\"}", "certFile", "FIFO");
    check_tls_refused("{\"certFile\": \"/dev/zero\"}", "certFile", "character device");
    check_tls_refused("{\"certFile\": \"%s/client.pem\", \"keyFile\": \"%s/fifo.pem\"}", "keyFile", "FIFO");
    check_tls_refused("{\"certFile\": \"%s/client.pem\", \"keyFile\": \"/dev/urandom\"}", "keyFile", "character device");
    check_tls_refused("{\"pinnedPublicKey\": \"%s\"}", "pinnedPublicKey", "folder");
    check_tls_refused("{\"pinnedPublicKey\": \"%s/fifo.pem\"}", "pinnedPublicKey", "FIFO");
    unlink(fifo);
    free(fifo);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_self_signed_certificate_is_tls_error_by_default),
        NLT_TEST(test_certificate_of_an_unknown_ca_is_tls_error),
        NLT_TEST(test_ca_file_trusts_the_local_ca),
        NLT_TEST(test_certificate_for_another_host_is_tls_error_even_with_its_ca),
        NLT_TEST(test_pinned_public_key_matching_is_ok_and_wrong_pin_is_tls),
        NLT_TEST(test_pin_is_enforced_with_verify_off),
        NLT_TEST(test_verify_false_is_ok_against_self_signed_and_logs_a_warning),
        NLT_TEST(test_client_certificates_open_a_server_that_asks_for_one),
        NLT_TEST(test_unreadable_client_certificate_files_are_refused_naming_the_key),
        NLT_TEST(test_an_encrypted_key_without_its_password_is_refused_at_creation),
        NLT_TEST(test_a_key_encrypted_after_creation_fails_the_handshake_instead_of_asking),
        NLT_TEST(test_tls_files_that_are_not_regular_files_are_refused_naming_the_key),
    };
    int rc = nlt_main(argc, argv, tests, NLT_COUNT(tests));
    teardown();
    return rc;
}
