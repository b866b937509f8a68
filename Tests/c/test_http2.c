/*
 * test_http2.c — HTTP/2 is negotiated where the server offers it (ALPN) and the
 * requests of one client are multiplexed as streams on one connection (issue 3).
 *
 * The test starts its own nginx (Debian nginx-light: http_v2 + ssl modules) on a free
 * 127.0.0.1 port with `listen PORT ssl http2`, a certificate for 127.0.0.1 signed by a
 * CA made at test time with openssl (fh_make_certs), and everything nginx writes in a
 * private temporary folder. nginx serves
 *   /json   {"ok":1} at once
 *   /slow   proxied to /delay/<ms> of a Tests/server/server.py started by the test,
 *           so concurrent requests overlap in time
 *   /stream-bytes/<n>  proxied, unbuffered, to the same server's body of n bytes
 * and its access log records, per request, nginx's connection serial number
 * ($connection), the protocol ($server_protocol), and when the request ended and how
 * long it took, so the test can see which requests shared a connection and how many
 * were in flight at once.
 *
 * nginx and openssl are required: when either is missing the test FAILS (install
 * them with scripts/deps.sh). nginx runs in the foreground as a child of the test
 * (daemon off, master_process off) with PR_SET_PDEATHSIG, so it also ends when the
 * test dies; server.py ends when its stdin closes.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 120
#include "harness.h"
#include "fault_helpers.h"
#include "pause_watch.h"

#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#define DELAY_MS 300
#define BATCH 20

static char g_dir[64] = "";
static fh_server g_backend = { -1, -1, 0, "" };
static pid_t g_nginx = -1;
static int g_port = 0;
static int g_ready = 0;

/* ---- nginx ------------------------------------------------------------------------- */

/* The nginx executable: $NETLAYER_NGINX, /usr/sbin/nginx or nginx on PATH (malloc'ed), or NULL. */
static char *find_nginx(void)
{
    const char *env = getenv("NETLAYER_NGINX");
    const char *path = getenv("PATH");
    char *copy, *dir, *save = NULL;
    if (env != NULL && *env != '\0')
        return access(env, X_OK) == 0 ? nlt_format("%s", env) : NULL;
    if (access("/usr/sbin/nginx", X_OK) == 0)
        return nlt_format("/usr/sbin/nginx");
    if (path == NULL)
        return NULL;
    copy = nlt_format("%s", path);
    for (dir = strtok_r(copy, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save)) {
        char *candidate = nlt_format("%s/nginx", dir);
        if (candidate != NULL && access(candidate, X_OK) == 0) {
            free(copy);
            return candidate;
        }
        free(candidate);
    }
    free(copy);
    return NULL;
}

static char *dir_path(const char *name)
{
    return nlt_format("%s/%s", g_dir, name);
}

static int write_nginx_conf(int port)
{
    char *conf = dir_path("nginx.conf");
    FILE *f = conf ? fopen(conf, "w") : NULL;
    free(conf);
    if (f == NULL)
        return 0;
    /* As root nginx would switch to "nobody", who cannot use the private 0700 folder. */
    if (geteuid() == 0)
        fputs("user root;\n", f);
    fprintf(f,
            "daemon off;\n"
            "master_process off;\n"
            "worker_processes 1;\n"
            "pid %1$s/nginx.pid;\n"
            "error_log %1$s/error.log warn;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "    log_format h2 '$connection $server_protocol $status $msec $request_time $request_uri';\n"
            "    access_log %1$s/access.log h2;\n"
            "    client_body_temp_path %1$s/client_body;\n"
            "    proxy_temp_path %1$s/proxy;\n"
            "    fastcgi_temp_path %1$s/fastcgi;\n"
            "    uwsgi_temp_path %1$s/uwsgi;\n"
            "    scgi_temp_path %1$s/scgi;\n"
            "    keepalive_timeout 120s;\n"
            "    server {\n"
            "        listen 127.0.0.1:%2$d ssl http2;\n"
            "        server_name localhost;\n"
            "        ssl_certificate %1$s/server.pem;\n"
            "        ssl_certificate_key %1$s/server.key;\n"
            "        location = /json {\n"
            "            default_type application/json;\n"
            "            return 200 '{\"ok\":1}';\n"
            "        }\n"
            "        location = /slow {\n"
            "            proxy_pass http://127.0.0.1:%3$d/delay/%4$d;\n"
            "            proxy_read_timeout 30s;\n"
            "        }\n"
            "        location /stream-bytes/ {\n"
            "            proxy_pass http://127.0.0.1:%3$d;\n"
            "            proxy_buffering off;\n"
            "            proxy_read_timeout 30s;\n"
            "        }\n"
            "    }\n"
            "}\n",
            g_dir, port, g_backend.port, DELAY_MS);
    return fclose(f) == 0;
}

static int port_accepts(int port)
{
    int fd = fh_nonblocking_connect(port);
    struct pollfd pfd;
    int ok = 0;
    if (fd < 0)
        return 0;
    pfd.fd = fd;
    pfd.events = POLLOUT;
    pfd.revents = 0;
    if (poll(&pfd, 1, 200) > 0) {
        int err = 0;
        socklen_t len = sizeof(err);
        ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    close(fd);
    return ok;
}

static void stop_nginx(void)
{
    int status, i;
    if (g_nginx <= 0)
        return;
    kill(g_nginx, SIGTERM);
    for (i = 0; i < 250; i++) {
        if (waitpid(g_nginx, &status, WNOHANG) == g_nginx)
            break;
        sleep_ms(20);
    }
    if (i == 250) {
        kill(g_nginx, SIGKILL);
        waitpid(g_nginx, &status, 0);
    }
    g_nginx = -1;
}

/* Starts nginx on a free port; 1 when it accepts connections within 10 s. */
static int start_nginx(const char *nginx, int port)
{
    char *conf = dir_path("nginx.conf"), *errlog = dir_path("error.log"), *out = dir_path("nginx.out");
    char *prefix = nlt_format("%s/", g_dir);
    const char *argv[] = { nginx, "-p", prefix, "-c", conf, "-e", errlog, NULL };
    int fd, status;
    double deadline;
    int ok = 0;

    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    fflush(stdout);
    fflush(stderr);
    g_nginx = fork();
    if (g_nginx == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execv(nginx, (char *const *)argv);
        _exit(127);
    }
    if (fd >= 0)
        close(fd);
    if (g_nginx < 0) {
        nlt_note("fork failed");
    } else {
        deadline = now_ms() + 10000.0;
        while (now_ms() < deadline) {
            if (waitpid(g_nginx, &status, WNOHANG) == g_nginx) {
                g_nginx = -1;
                break;
            }
            if (port_accepts(port)) {
                ok = 1;
                break;
            }
            sleep_ms(20);
        }
        if (!ok) {
            char *e1 = fh_read_file(errlog), *e2 = fh_read_file(out);
            nlt_note("nginx did not start on port %d; error.log: %.1500s; output: %.1500s", port,
                     e1 ? e1 : "(none)", e2 ? e2 : "(none)");
            free(e1);
            free(e2);
            stop_nginx();
        }
    }
    free(conf);
    free(errlog);
    free(out);
    free(prefix);
    return ok;
}

static void teardown(void);

/* Makes the certificates, starts the backend and nginx on first use. */
static void setup(void)
{
    char *nginx;
    int attempt;
    if (g_ready)
        return;
    teardown(); /* what a failed earlier setup left behind */
    nginx = find_nginx();
    REQUIRE_MSG(nginx != NULL, "nginx is not installed (not $NETLAYER_NGINX, /usr/sbin/nginx or on PATH): this test needs "
                "Debian's nginx-light (scripts/deps.sh installs it, or apt-get install nginx-light)");
    if (!fh_sh("'%s' -V 2>&1 | grep -q -- --with-http_v2_module", nginx) ||
        !fh_sh("'%s' -V 2>&1 | grep -q -- --with-http_ssl_module", nginx)) {
        free(nginx);
        REQUIRE_MSG(0, "this nginx has no http_v2 or ssl module (see `nginx -V`); install Debian's nginx-light");
    }
    if (!fh_sh("command -v openssl")) {
        free(nginx);
        REQUIRE_MSG(0, "the openssl command-line tool is not installed: this test needs it to make its "
                    "certificates (scripts/deps.sh installs it, or apt-get install openssl)");
    }
    snprintf(g_dir, sizeof(g_dir), "/tmp/netlayer-h2-XXXXXX");
    if (mkdtemp(g_dir) == NULL) {
        g_dir[0] = '\0';
        free(nginx);
        REQUIRE_MSG(0, "cannot make a temporary folder");
    }
    if (!fh_make_certs(g_dir)) {
        free(nginx);
        REQUIRE_MSG(0, "openssl could not make the test certificates in %s", g_dir);
    }
    if (!fh_server_start(&g_backend, "server.py", NULL)) {
        free(nginx);
        REQUIRE_MSG(0, "cannot start the backend server.py for /slow");
    }
    /* The free port is found by binding port 0 and closing it; retry if someone takes it first. */
    for (attempt = 0; attempt < 3 && !g_ready; attempt++) {
        g_port = fh_closed_port();
        if (!write_nginx_conf(g_port)) {
            free(nginx);
            REQUIRE_MSG(0, "cannot write nginx.conf in %s", g_dir);
        }
        g_ready = start_nginx(nginx, g_port);
    }
    free(nginx);
    REQUIRE_MSG(g_ready, "nginx did not start (see the notes above)");
    nlt_note("nginx (HTTP/2 over TLS) on 127.0.0.1:%d, backend on %d, files in %s", g_port, g_backend.port,
             g_dir);
}

static void teardown(void)
{
    stop_nginx();
    fh_server_stop(&g_backend);
    if (g_dir[0] != '\0')
        fh_rm_dir(g_dir);
    g_dir[0] = '\0';
    g_ready = 0;
}

/* ---- nginx's access log ------------------------------------------------------------ */

typedef struct log_entry {
    long connection;
    char protocol[32];
    int status;
    double end_ms;   /* $msec */
    double start_ms; /* $msec - $request_time */
} log_entry;

/* The access-log lines whose URI contains `tag` (up to `max`); returns how many. */
static int read_log(const char *tag, log_entry *out, int max)
{
    char *path = dir_path("access.log");
    char *text = fh_read_file(path);
    char *line, *save = NULL;
    int n = 0;
    free(path);
    if (text == NULL)
        return 0;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        log_entry e;
        double msec = 0, rt = 0;
        char uri[512];
        memset(&e, 0, sizeof(e));
        if (sscanf(line, "%ld %31s %d %lf %lf %511s", &e.connection, e.protocol, &e.status, &msec, &rt, uri) != 6)
            continue;
        if (strstr(uri, tag) == NULL)
            continue;
        e.end_ms = msec * 1000.0;
        e.start_ms = (msec - rt) * 1000.0;
        if (n < max)
            out[n] = e;
        n++;
    }
    free(text);
    return n;
}

/* Waits (up to 3 s) until nginx has logged `want` requests tagged `tag`. */
static int wait_log(const char *tag, log_entry *out, int want)
{
    double deadline = now_ms() + 3000.0;
    int n;
    while ((n = read_log(tag, out, want)) < want && now_ms() < deadline)
        sleep_ms(20);
    return n;
}

static int distinct_connections(const log_entry *e, int n)
{
    int i, j, distinct = 0;
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++)
            if (e[j].connection == e[i].connection)
                break;
        if (j == i)
            distinct++;
    }
    return distinct;
}

/* The largest number of requests nginx had in flight at once. */
static int peak_in_flight(const log_entry *e, int n)
{
    int i, j, peak = 0;
    for (i = 0; i < n; i++) {
        int k = 0;
        for (j = 0; j < n; j++)
            if (e[j].start_ms <= e[i].start_ms && e[i].start_ms < e[j].end_ms)
                k++;
        if (k > peak)
            peak = k;
    }
    return peak;
}

/* ---- helpers ----------------------------------------------------------------------- */

static nl_client *h2_client(void)
{
    return client_with_config(nlt_format("{\"baseURL\": \"https://127.0.0.1:%d/\", \"tls\": {\"caFile\": \"%s/ca.pem\"},"
                                         " \"maxConcurrent\": 32, \"timeout\": 30}",
                                         g_port, g_dir));
}

static void check_http_version(json_t *r, const char *want)
{
    const char *v = jpath_str(r, "httpVersion");
    if (v == NULL || strcmp(v, want) != 0) {
        char *s = r ? json_dumps(r, JSON_COMPACT) : NULL;
        nlt_fail(__FILE__, __LINE__, "httpVersion", "expected httpVersion \"%s\": %.1000s", want, s ? s : "(null)");
        free(s);
    }
}

/* nl_request_async and a bounded wait for its result (parsed; caller json_decref()s). Single
 * requests of nl_request run on the caller's thread with their own pooled connection; async
 * requests and batches go through the client's multi handle and its connection pool. */
typedef struct async_wait {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int done;
    char *text;
} async_wait;

static void on_async(uint64_t id, const char *result_json, void *user_data)
{
    async_wait *w = (async_wait *)user_data;
    (void)id;
    pthread_mutex_lock(&w->m);
    w->text = result_json ? nlt_format("%s", result_json) : NULL;
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
}

static json_t *request_async(nl_client *c, const char *endpoint)
{
    /* on the heap: after a timeout the callback may still come, so `w` is then left alone */
    async_wait *w = (async_wait *)calloc(1, sizeof(*w));
    struct timespec until;
    json_t *r;
    int done;
    REQUIRE(w != NULL);
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->cv, NULL);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    CHECK(nl_request_async(c, endpoint, on_async, w) != 0);
    pthread_mutex_lock(&w->m);
    while (!w->done && pthread_cond_timedwait(&w->cv, &w->m, &until) == 0) {
    }
    done = w->done;
    pthread_mutex_unlock(&w->m);
    REQUIRE_MSG(done, "no callback within 30 s for %s", endpoint);
    r = nlt_parse(w->text, "nl_request_async");
    free(w->text);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->m);
    free(w);
    return r;
}

/* Sends BATCH requests to /slow?tag=<tag>-<i> as one nl_request_batch; checks every result
 * (ok, HTTP/2, the delayed body) and returns the batch's wall time in ms. */
static double slow_batch(nl_client *c, const char *tag)
{
    char *doc = NULL, *text;
    json_t *arr, *r;
    size_t i;
    double t0, elapsed;
    int n;
    doc = nlt_format("[");
    for (n = 0; n < BATCH; n++) {
        char *next = nlt_format("%s%s{\"path\": \"slow\", \"query\": {\"tag\": \"%s-%d\"}}", doc, n ? ", " : "",
                                tag, n);
        free(doc);
        doc = next;
        REQUIRE(doc != NULL);
    }
    {
        char *next = nlt_format("%s]", doc);
        free(doc);
        doc = next;
        REQUIRE(doc != NULL);
    }
    t0 = now_ms();
    text = nl_request_batch(c, doc);
    elapsed = now_ms() - t0;
    free(doc);
    arr = nlt_parse(text, "nl_request_batch");
    nl_free(text);
    REQUIRE(json_is_array(arr));
    CHECK_INT_EQ(json_array_size(arr), BATCH);
    json_array_foreach(arr, i, r) {
        CHECK_OK(r);
        CHECK_INT_EQ(result_status(r), 200);
        check_http_version(r, "2");
        CHECK_INT_EQ(jpath_num(r, "value.delayed", -1), DELAY_MS);
    }
    json_decref(arr);
    return elapsed;
}

/* ---- tests --------------------------------------------------------------------------- */

/* ALPN: libcurl offers h2 over https and nginx agrees. */
static void test_https_to_an_h2_server_negotiates_http2(void)
{
    nl_client *c;
    json_t *r;
    log_entry e[4];
    setup();
    c = h2_client();
    r = request_json(c, "{\"path\": \"json\", \"query\": {\"tag\": \"alpn\"}}");
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_INT_EQ(jpath_num(r, "value.ok", -1), 1);
    check_http_version(r, "2");
    json_decref(r);
    nl_client_free(c);
    REQUIRE_MSG(wait_log("tag=alpn", e, 1) == 1, "nginx did not log the request");
    CHECK_STR_EQ(e[0].protocol, "HTTP/2.0");
}

/* Once the client has an HTTP/2 connection, 20 concurrent requests are 20 streams on it. */
static void test_concurrent_requests_are_streams_of_one_connection(void)
{
    nl_client *c;
    json_t *r;
    log_entry first[4], e[BATCH];
    double elapsed;
    int n, i, distinct, peak;
    setup();
    c = h2_client();
    /* through the multi handle, like the batch, so the batch can find its connection */
    r = request_async(c, "{\"path\": \"json\", \"query\": {\"tag\": \"warmup\"}}");
    CHECK_OK(r);
    check_http_version(r, "2");
    json_decref(r);

    elapsed = slow_batch(c, "warm");
    nl_client_free(c);

    REQUIRE_MSG(wait_log("tag=warmup", first, 1) == 1, "nginx did not log the first request");
    n = wait_log("tag=warm-", e, BATCH);
    REQUIRE_MSG(n == BATCH, "nginx logged %d of the %d requests", n, BATCH);
    distinct = distinct_connections(e, n);
    peak = peak_in_flight(e, n);
    nlt_note("%d requests of %d ms in %.0f ms; nginx: %d connection(s), up to %d in flight at once", BATCH,
             DELAY_MS, elapsed, distinct, peak);
    for (i = 0; i < n; i++) {
        CHECK_STR_EQ(e[i].protocol, "HTTP/2.0");
        CHECK_INT_EQ(e[i].status, 200);
        CHECK_MSG(e[i].connection == first[0].connection,
                  "request %d came on connection %ld, the first request on %ld", i, e[i].connection,
                  first[0].connection);
    }
    CHECK_MSG(distinct == 1, "%d connections for one client's concurrent requests to one HTTP/2 server", distinct);
    /* overlapped: far from 20 x delay one after the other, and nginx saw them together */
    CHECK_MSG(elapsed >= DELAY_MS * 0.9, "the batch took %.0f ms, less than one delay", elapsed);
    CHECK_MSG(elapsed < BATCH * DELAY_MS / 3.0, "the batch took %.0f ms (sequential would be %d ms)", elapsed,
              BATCH * DELAY_MS);
    CHECK_MSG(peak >= BATCH / 2, "nginx had at most %d of the %d requests in flight at once", peak, BATCH);
}

/* A fresh client whose first act is a batch: the library sets CURLOPT_PIPEWAIT on https
 * transfers, so the requests started before the first handshake has told libcurl (ALPN)
 * that the server multiplexes wait for that connection instead of opening their own. */
static void test_cold_batch_is_http2_and_overlaps(void)
{
    nl_client *c;
    log_entry e[BATCH];
    double elapsed;
    int n;
    setup();
    c = h2_client();
    elapsed = slow_batch(c, "cold");
    nl_client_free(c);
    n = wait_log("tag=cold-", e, BATCH);
    REQUIRE_MSG(n == BATCH, "nginx logged %d of the %d requests", n, BATCH);
    nlt_note("cold batch: %d requests in %.0f ms over %d connection(s), up to %d in flight at once", BATCH,
             elapsed, distinct_connections(e, n), peak_in_flight(e, n));
    CHECK_MSG(distinct_connections(e, n) == 1, "a fresh client's batch used %d connections to one HTTP/2 server",
              distinct_connections(e, n));
    /* loose: 20 TLS handshakes are slow under valgrind */
    CHECK_MSG(elapsed < BATCH * DELAY_MS, "the batch took %.0f ms (sequential would be %d ms)", elapsed,
              BATCH * DELAY_MS);
}

static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec * 1e3 + u.ru_utime.tv_usec / 1e3 + u.ru_stime.tv_sec * 1e3 + u.ru_stime.tv_usec / 1e3;
}

/* A stream paused from its callback over HTTP/2: the other streams of the connection go
 * on, the paused one costs no CPU while it waits, and once resumed every byte arrives. */
static void test_a_paused_stream_leaves_the_connections_other_streams_going(void)
{
    nl_client *c;
    pause_watch w;
    json_t *r;
    uint64_t id;
    int waited, held;
    double cpu0;
    setup();
    c = h2_client();
    id = start_pause_watch(&w, c, "{\"path\": \"stream-bytes/4000000\", \"stream\": \"chunks\"}", 1);
    REQUIRE(id != 0);
    for (waited = 0; atomic_load(&w.events) == 0 && waited < 10000; waited += 5) sleep_ms(5);
    REQUIRE(atomic_load(&w.events) > 0);
    sleep_ms(100);
    held = atomic_load(&w.events);
    cpu0 = cpu_ms();
    /* Another stream of the same connection, while this one is paused. */
    r = request_async(c, "{\"path\": \"json\", \"query\": {\"tag\": \"beside-paused\"}}");
    CHECK_OK(r);
    check_http_version(r, "2");
    json_decref(r);
    sleep_ms(400);
    CHECK_INT_EQ(atomic_load(&w.events), held);
    if (!fh_slow_mode())  /* under valgrind the request beside it takes that much */
        CHECK_MSG(cpu_ms() - cpu0 < 200, "%.0f ms of CPU while a stream was paused for 400 ms", cpu_ms() - cpu0);
    CHECK_INT_EQ(nl_pause(c, id, 0), 1);
    r = finish_pause_watch(&w, "paused h2 stream", 4000000);
    check_http_version(r, "2");
    json_decref(r);
    nl_client_free(c);
}

/* For contrast: the same client over plain http to the HTTP/1.1 test server. */
static void test_plain_http_stays_http1_1(void)
{
    nl_client *c;
    json_t *r;
    setup();
    c = h2_client();
    r = request_json(c, "{\"path\": \"%sjson\", \"isFullPath\": true}", base_url());
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.id", -1), 1);
    check_http_version(r, "1.1");
    json_decref(r);
    /* and back to the h2 server on the same client */
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    check_http_version(r, "2");
    json_decref(r);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_https_to_an_h2_server_negotiates_http2),
        NLT_TEST(test_concurrent_requests_are_streams_of_one_connection),
        NLT_TEST(test_cold_batch_is_http2_and_overlaps),
        NLT_TEST(test_plain_http_stays_http1_1),
        NLT_TEST(test_a_paused_stream_leaves_the_connections_other_streams_going),
    };
    int rc = nlt_main(argc, argv, tests, NLT_COUNT(tests));
    teardown();
    return rc;
}
