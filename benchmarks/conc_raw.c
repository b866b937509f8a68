/*
 * conc_raw.c — baseline: N GETs through raw libcurl multi with K in flight.
 *
 * One multi handle driven by curl_multi_socket_action + epoll (conc_common.h),
 * CURLMOPT_MAXCONNECTS = K, K easy handles each with CURLOPT_NOSIGNAL=1 and a
 * write callback that counts the body's bytes and discards them. CURLOPT_URL is
 * set before every transfer. Whenever a transfer finishes, its handle is checked
 * (CURLE_OK, status 200, a body), removed, given the next URL and re-added until
 * N are done, so K stay in flight. WARMUP untimed requests first, the same way,
 * open the K connections.
 *
 *   repeated  every transfer gets the same URL
 *   distinct  every transfer gets URL?page=<i>, i counting up through the
 *             process (warm-up included): no two transfers ask for the same document
 *
 * usage: conc_raw URL K [N=20000] [WARMUP=2000] [repeated|distinct]
 * stdout: one line   raw K N elapsed_s req_per_s cpu_us_per_req
 * stderr: one line   raw: mode=MODE new_connections=C (measured part) (warmup W)
 * CPU is user+sys from getrusage(RUSAGE_SELF), delta over the measured part, / N.
 * Exits non-zero on the first transfer that fails or is not a 200.
 *
 * build: cc -O2 -o conc_raw conc_raw.c -lcurl
 */
#define CONC_WITH_CURL
#include "conc_common.h"
#include <netlayer.h> /* NL_VERSION_STRING only: the raw client sends the User-Agent Netlayer sends */

struct xfer {
    CURL *h;
    size_t body; /* bytes received; the body itself is discarded */
};

static const char *base_url;
static int distinct;
static long page; /* the next ?page= of distinct mode */

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
    (void)ptr;
    size_t n = size * nmemb;
    *(size_t *)userdata += n;
    return n;
}

/* Gives x its next URL and adds it to the multi handle. */
static void start(struct mdrv *d, struct xfer *x) {
    if (distinct) {
        char url[2100];
        snprintf(url, sizeof url, "%s?page=%ld", base_url, page++);
        curl_easy_setopt(x->h, CURLOPT_URL, url); /* libcurl copies it */
    } else {
        curl_easy_setopt(x->h, CURLOPT_URL, base_url);
    }
    x->body = 0;
    curl_multi_add_handle(d->multi, x->h);
}

/* Performs n requests with up to k in flight; returns new connections, or -1. */
static long run(struct mdrv *d, struct xfer *xs, long k, long n) {
    long started = 0, done = 0, conns = 0;
    for (long i = 0; i < k && started < n; i++, started++) start(d, &xs[i]);
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
            if (code != 200 || x->body == 0) {
                fprintf(stderr, "raw: request %ld: status %ld, %zu body bytes\n", done, code, x->body);
                return -1;
            }
            conns += nc;
            done++;
            if (started < n) {
                started++;
                start(d, x);
            }
        }
    }
    return conns;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s URL K [N=20000] [WARMUP=2000] [repeated|distinct]\n", argv[0]);
        return 2;
    }
    base_url = argv[1];
    long k = atol(argv[2]);
    long n = argc > 3 ? atol(argv[3]) : 20000;
    long warmup = argc > 4 ? atol(argv[4]) : 2000;
    const char *mode = argc > 5 ? argv[5] : "repeated";
    distinct = strcmp(mode, "distinct") == 0;
    if (k <= 0 || n <= 0 || warmup < 0 || strlen(base_url) > 2000 ||
        (!distinct && strcmp(mode, "repeated") != 0)) {
        fprintf(stderr, "raw: bad URL, K, N, WARMUP or mode (repeated|distinct)\n");
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
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        /* The request Netlayer sends by default (compression on, its User-Agent), so both
         * sides put the same request on the wire and the difference is Netlayer's own. */
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(h, CURLOPT_USERAGENT, "netlayer/" NL_VERSION_STRING);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &xs[i].body);
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
    fprintf(stderr, "raw: mode=%s new_connections=%ld (measured part) (warmup %ld)\n", mode, conns,
            warm_conns);

    for (long i = 0; i < k; i++) {
        curl_easy_cleanup(xs[i].h);
    }
    free(xs);
    curl_multi_cleanup(d.multi);
    curl_global_cleanup();
    return 0;
}
