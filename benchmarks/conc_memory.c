/*
 * conc_memory.c — memory per in-flight request: Netlayer vs raw libcurl multi.
 *
 * Against slow_server.py (which holds every /slow request HOLD_S seconds before
 * answering), COUNT requests are started at once and held open together; the
 * process's VmRSS (/proc/self/status) is read before they start and while all of
 * them are in flight, and the difference is divided by COUNT.
 *
 *   netlayer  one client {"baseURL": URL, "maxConcurrent": COUNT}; warm-up: one
 *             nl_request and one nl_request_async of {"path":"fast"}; then COUNT
 *             nl_request_async({"path":"slow"}); each result must be "ok":true.
 *   raw       one multi handle (curl_multi_socket_action + epoll, as conc_raw.c,
 *             CURLMOPT_MAXCONNECTS = COUNT); warm-up: one /fast transfer; then
 *             COUNT fresh easy handles (CURLOPT_NOSIGNAL, body appended to a
 *             buffer each) for /slow; each must end with status 200.
 *
 * "In flight" is checked, not assumed: the program polls the server's /stats
 * (the number of /slow requests it is holding) over a plain socket until it
 * reaches COUNT, then samples VmRSS a few times (~300 ms) and keeps the largest.
 * Everything created per request (easy handles, buffers, Netlayer's transfer
 * objects, sockets' kernel memory is not in RSS) counts toward the difference.
 * Run one COUNT per process, so memory freed by a previous phase does not hide
 * the next one's cost.
 *
 * usage: conc_memory raw|netlayer http://127.0.0.1:PORT/ COUNT
 * stdout: one line   MODE-mem COUNT rss_before_kib rss_during_kib kib_per_request held
 * Exits 1 if the requests are not all held at once within the hold time, or if
 * a result is not ok / not 200; 3 on a hang (no completion within 60 s).
 *
 * build: cc -O2 -I../include -o conc_memory conc_memory.c -lcurl \
 *           -L$LIBDIR -lnetlayer -Wl,-rpath,$LIBDIR -lpthread
 */
#define CONC_WITH_CURL
#include "conc_common.h"
#include "netlayer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#define WAIT_HELD_S 4.0 /* must be below the server's hold time (5 s) */

static int port;

/* The server's count of /slow requests held right now; -1 on error. */
static long held_now(void) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    long v = -1;
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
        const char req[] = "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        if (write(s, req, sizeof req - 1) == (ssize_t)(sizeof req - 1)) {
            shutdown(s, SHUT_WR); /* the server answers, then sees EOF and closes */
            char buf[1024];
            size_t len = 0;
            ssize_t r;
            while (len < sizeof buf - 1 && (r = read(s, buf + len, sizeof buf - 1 - len)) > 0)
                len += (size_t)r;
            buf[len] = '\0';
            char *body = strstr(buf, "\r\n\r\n");
            if (strncmp(buf, "HTTP/1.1 200", 12) == 0 && body) v = strtol(body + 4, NULL, 10);
        }
    }
    close(s);
    return v;
}

/* Samples VmRSS for ~300 ms while all COUNT stay held; returns the largest. */
struct sampler {
    long count;
    long held_max;
    long rss_during;
    int state; /* 0 waiting for all held, 1 sampled, -1 gave up */
    double started, last_poll;
    int samples;
};

/* Polls the server at most every 20 ms; call often while requests start. */
static void sampler_tick(struct sampler *s) {
    if (s->state != 0) return;
    double t = now_s();
    if (t - s->last_poll < 0.02) return;
    s->last_poll = t;
    long h = held_now();
    if (h > s->held_max) s->held_max = h;
    if (h >= s->count) {
        long r = rss_kib();
        if (r > s->rss_during) s->rss_during = r;
        if (++s->samples >= 15) s->state = 1;
    } else if (s->samples > 0) {
        s->state = 1; /* some already answered: keep what was sampled */
    } else if (t - s->started > WAIT_HELD_S) {
        s->state = -1;
    }
}

/* ---- netlayer ---- */

static atomic_long nl_done, nl_bad;
static char nl_first_bad[2048];

static void on_result(uint64_t id, const char *r, void *ud) {
    (void)ud;
    if (!r || !strstr(r, "\"ok\":true")) {
        if (atomic_fetch_add(&nl_bad, 1) == 0)
            snprintf(nl_first_bad, sizeof nl_first_bad, "id %llu: %s", (unsigned long long)id,
                     r ? r : "(NULL)");
    }
    atomic_fetch_add(&nl_done, 1);
}

static int wait_done(long target, const char *what) {
    double t0 = now_s();
    while (atomic_load(&nl_done) < target) {
        if (now_s() - t0 > 60) {
            fprintf(stderr, "%s: HANG: %ld of %ld callbacks after 60 s\n", what,
                    atomic_load(&nl_done), target);
            fflush(stderr);
            _exit(3);
        }
        usleep(2000);
    }
    return 0;
}

static int run_netlayer(const char *base, long count, long *before, struct sampler *s) {
    char config[512];
    snprintf(config, sizeof config, "{\"baseURL\": \"%s\", \"maxConcurrent\": %ld}", base, count);
    char *err = NULL;
    nl_client *c = nl_client_new(config, &err);
    if (!c) {
        fprintf(stderr, "netlayer: nl_client_new(%s) failed: %s\n", config, err ? err : "(no error)");
        return -1;
    }
    char *r = nl_request(c, "{\"path\":\"fast\"}");
    if (!r || !strstr(r, "\"ok\":true")) {
        fprintf(stderr, "netlayer: warm-up failed: %s\n", r ? r : "(NULL)");
        return -1;
    }
    nl_free(r);
    nl_request_async(c, "{\"path\":\"fast\"}", on_result, NULL);
    wait_done(1, "netlayer warm-up");
    if (atomic_load(&nl_bad)) {
        fprintf(stderr, "netlayer: warm-up failed: %s\n", nl_first_bad);
        return -1;
    }
    atomic_store(&nl_done, 0);

    *before = rss_kib();
    s->started = now_s();
    for (long i = 0; i < count; i++) {
        if (nl_request_async(c, "{\"path\":\"slow\"}", on_result, NULL) == 0) {
            fprintf(stderr, "netlayer: nl_request_async returned 0\n");
            return -1;
        }
    }
    while (s->state == 0 && atomic_load(&nl_done) < count) {
        sampler_tick(s);
        usleep(5000);
    }
    wait_done(count, "netlayer");
    if (atomic_load(&nl_bad)) {
        fprintf(stderr, "netlayer: %ld of %ld results not ok; first: %.2000s\n", atomic_load(&nl_bad),
                count, nl_first_bad);
        return -1;
    }
    nl_client_free(c);
    return 0;
}

/* ---- raw ---- */

static CURL *raw_easy(const char *url, struct buf *b) {
    CURL *h = curl_easy_init();
    if (!h) return NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, mdrv_on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    return h;
}

/* Runs the multi until `target` transfers are done; returns how many were not 200. */
static long raw_drive(struct mdrv *d, long target, struct sampler *s) {
    long done = 0, bad = 0;
    double t0 = now_s();
    while (done < target) {
        if (mdrv_step(d, s ? 5 : 100) != 0) return -1;
        if (s) sampler_tick(s);
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(d->multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            long code = 0;
            curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            if (m->data.result != CURLE_OK || code != 200) {
                if (bad++ == 0)
                    fprintf(stderr, "raw: transfer failed: %s, status %ld\n",
                            curl_easy_strerror(m->data.result), code);
            }
            curl_multi_remove_handle(d->multi, m->easy_handle);
            done++;
        }
        if (now_s() - t0 > 60) {
            fprintf(stderr, "raw: HANG: %ld of %ld done after 60 s\n", done, target);
            _exit(3);
        }
    }
    return bad;
}

static int run_raw(const char *base, long count, long *before, struct sampler *s) {
    char fast[600], slow[600];
    snprintf(fast, sizeof fast, "%sfast", base);
    snprintf(slow, sizeof slow, "%sslow", base);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return -1;
    struct mdrv d;
    if (mdrv_init(&d, count) != 0) return -1;
    struct buf wb = {0};
    CURL *w = raw_easy(fast, &wb);
    curl_multi_add_handle(d.multi, w);
    if (raw_drive(&d, 1, NULL) != 0) return -1;
    curl_easy_cleanup(w);
    free(wb.data);

    *before = rss_kib();
    s->started = now_s();
    CURL **hs = calloc((size_t)count, sizeof *hs);
    struct buf *bs = calloc((size_t)count, sizeof *bs);
    if (!hs || !bs) return -1;
    for (long i = 0; i < count; i++) {
        hs[i] = raw_easy(slow, &bs[i]);
        if (!hs[i]) return -1;
        curl_multi_add_handle(d.multi, hs[i]);
    }
    long bad = raw_drive(&d, count, s);
    if (bad != 0) {
        fprintf(stderr, "raw: %ld of %ld transfers failed\n", bad, count);
        return -1;
    }
    for (long i = 0; i < count; i++) {
        curl_easy_cleanup(hs[i]);
        free(bs[i].data);
    }
    free(hs);
    free(bs);
    curl_multi_cleanup(d.multi);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s raw|netlayer http://127.0.0.1:PORT/ COUNT\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *base = argv[2];
    long count = atol(argv[3]);
    const char *colon = strrchr(base, ':');
    if (count <= 0 || strncmp(base, "http://127.0.0.1:", 17) != 0 || !colon ||
        base[strlen(base) - 1] != '/' || strlen(base) > 500) {
        fprintf(stderr, "conc_memory: bad arguments\n");
        return 2;
    }
    port = atoi(colon + 1);

    struct sampler s = {.count = count};
    long before = 0;
    int rc;
    if (strcmp(mode, "netlayer") == 0)
        rc = run_netlayer(base, count, &before, &s);
    else if (strcmp(mode, "raw") == 0)
        rc = run_raw(base, count, &before, &s);
    else {
        fprintf(stderr, "conc_memory: mode must be raw or netlayer\n");
        return 2;
    }
    if (rc != 0) return 1;
    if (s.state != 1) {
        fprintf(stderr, "%s: the %ld requests were never all held at once (at most %ld)\n", mode,
                count, s.held_max);
        return 1;
    }
    printf("%s-mem %ld %ld %ld %.1f %ld\n", mode, count, before, s.rss_during,
           (double)(s.rss_during - before) / (double)count, s.held_max);
    return 0;
}
