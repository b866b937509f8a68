/*
 * conc_raw.c — baseline: N GETs through raw libcurl multi with K in flight.
 *
 * One multi handle driven by curl_multi_socket_action + epoll (conc_common.h),
 * CURLMOPT_MAXCONNECTS = K, K easy handles each with CURLOPT_NOSIGNAL=1 and a
 * write callback appending the body into its own growable buffer. Whenever a
 * transfer finishes, its handle is checked (CURLE_OK, status 200, a body),
 * removed and re-added for the next request until N are done, so K stay in
 * flight. WARMUP untimed requests first, the same way, open the K connections.
 *
 * usage: conc_raw URL K [N=20000] [WARMUP=2000]
 * stdout: one line   raw K N elapsed_s req_per_s cpu_us_per_req
 * stderr: one line   raw: new_connections=C (measured part) (warmup W)
 * CPU is user+sys from getrusage(RUSAGE_SELF), delta over the measured part, / N.
 * Exits non-zero on the first transfer that fails or is not a 200.
 *
 * build: cc -O2 -o conc_raw conc_raw.c -lcurl
 */
#define CONC_WITH_CURL
#include "conc_common.h"

struct xfer {
    CURL *h;
    struct buf b;
};

/* Performs n requests with up to k in flight; returns new connections, or -1. */
static long run(struct mdrv *d, struct xfer *xs, long k, long n) {
    long started = 0, done = 0, conns = 0;
    for (long i = 0; i < k && started < n; i++, started++) {
        xs[i].b.len = 0;
        curl_multi_add_handle(d->multi, xs[i].h);
    }
    while (done < n) {
        if (mdrv_step(d, -1) != 0) return -1;
        int left;
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(d->multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *h = msg->easy_handle;
            CURLcode rc = msg->data.result;
            struct xfer *x = NULL;
            curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&x);
            long code = 0, nc = 0;
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
            curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &nc);
            curl_multi_remove_handle(d->multi, h);
            if (rc != CURLE_OK) {
                fprintf(stderr, "raw: request %ld failed: %s\n", done, curl_easy_strerror(rc));
                return -1;
            }
            if (code != 200 || x->b.len == 0) {
                fprintf(stderr, "raw: request %ld: status %ld, %zu body bytes\n", done, code, x->b.len);
                return -1;
            }
            conns += nc;
            done++;
            if (started < n) {
                started++;
                x->b.len = 0;
                curl_multi_add_handle(d->multi, h);
            }
        }
    }
    return conns;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s URL K [N=20000] [WARMUP=2000]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    long k = atol(argv[2]);
    long n = argc > 3 ? atol(argv[3]) : 20000;
    long warmup = argc > 4 ? atol(argv[4]) : 2000;
    if (k <= 0 || n <= 0 || warmup < 0) {
        fprintf(stderr, "raw: bad K, N or WARMUP\n");
        return 2;
    }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    struct mdrv d;
    if (mdrv_init(&d, k) != 0) {
        fprintf(stderr, "raw: could not create the multi handle or epoll set\n");
        return 1;
    }
    struct xfer *xs = calloc((size_t)k, sizeof *xs);
    if (!xs) return 1;
    for (long i = 0; i < k; i++) {
        CURL *h = curl_easy_init();
        if (!h) return 1;
        xs[i].h = h;
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        /* The request Netlayer sends by default (compression on, its User-Agent), so both
         * sides do the same HTTP work and the difference is Netlayer's own. */
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(h, CURLOPT_USERAGENT, "netlayer/0.1.0");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, mdrv_on_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &xs[i].b);
        curl_easy_setopt(h, CURLOPT_PRIVATE, (char *)&xs[i]);
    }

    long warm_conns = warmup > 0 ? run(&d, xs, k, warmup) : 0;
    if (warm_conns < 0) return 1;

    double t0 = now_s(), c0 = cpu_s();
    long conns = run(&d, xs, k, n);
    double t1 = now_s(), c1 = cpu_s();
    if (conns < 0) return 1;

    double elapsed = t1 - t0;
    printf("raw %ld %ld %.3f %.0f %.2f\n", k, n, elapsed, (double)n / elapsed,
           (c1 - c0) * 1e6 / (double)n);
    fflush(stdout);
    fprintf(stderr, "raw: new_connections=%ld (measured part) (warmup %ld)\n", conns, warm_conns);

    for (long i = 0; i < k; i++) {
        curl_easy_cleanup(xs[i].h);
        free(xs[i].b.data);
    }
    free(xs);
    curl_multi_cleanup(d.multi);
    curl_global_cleanup();
    return 0;
}
