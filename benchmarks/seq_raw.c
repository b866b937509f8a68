/*
 * seq_raw.c — baseline: N sequential GETs through raw libcurl, the loop a user writes.
 *
 * One easy handle reused for every request (so one kept-alive connection),
 * CURLOPT_NOSIGNAL=1, CURLOPT_URL set before every request, a write callback
 * that counts the body's bytes and discards them, and the status checked.
 *
 *   repeated  every request sets the same URL (the same document every time)
 *   distinct  every request sets URL?page=<i>, i counting up through the
 *             process (warm-up included), so no two requests ask for the same
 *             document; the URL is formatted with snprintf per request
 *
 * usage: seq_raw URL [N=20000] [WARMUP=1000] [repeated|distinct] [compressed|plain]
 * stdout: one line   raw N elapsed_s req_per_s cpu_us_per_req
 * stderr: one line   raw: mode=MODE new_connections=K (measured part) (warmup W)
 * CPU is user+sys from getrusage(RUSAGE_SELF), delta over the measured part, / N.
 * Exits non-zero if any response is not a 200 with a body, if a transfer fails,
 * or if the connection was not reused.
 *
 * build: cc -O2 -o seq_raw seq_raw.c -lcurl
 */
#include <curl/curl.h>
#include <netlayer.h> /* NL_VERSION_STRING only: the raw client sends the User-Agent Netlayer sends */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
    (void)ptr;
    size_t n = size * nmemb;
    *(size_t *)userdata += n;
    return n;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static const char *base_url;
static int distinct;
static long page; /* the next ?page= of distinct mode */

/* Performs n GETs; returns the number of new connections, or -1 on failure. */
static long run(CURL *h, size_t *body, long n) {
    char url[2100];
    long conns = 0;
    for (long i = 0; i < n; i++) {
        if (distinct) {
            snprintf(url, sizeof url, "%s?page=%ld", base_url, page++);
            curl_easy_setopt(h, CURLOPT_URL, url);
        } else {
            curl_easy_setopt(h, CURLOPT_URL, base_url);
        }
        *body = 0;
        CURLcode rc = curl_easy_perform(h);
        if (rc != CURLE_OK) {
            fprintf(stderr, "raw: request %ld failed: %s\n", i, curl_easy_strerror(rc));
            return -1;
        }
        long code = 0, nc = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &nc);
        if (code != 200 || *body == 0) {
            fprintf(stderr, "raw: request %ld: status %ld, %zu body bytes\n", i, code, *body);
            return -1;
        }
        conns += nc;
    }
    return conns;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [N=20000] [WARMUP=1000] [repeated|distinct] [compressed|plain]\n", argv[0]);
        return 2;
    }
    base_url = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 20000;
    long warmup = argc > 3 ? atol(argv[3]) : 1000;
    const char *mode = argc > 4 ? argv[4] : "repeated";
    const char *encoding = argc > 5 ? argv[5] : "compressed";
    int plain = strcmp(encoding, "plain") == 0;
    distinct = strcmp(mode, "distinct") == 0;
    if (n <= 0 || warmup < 0 || strlen(base_url) > 2000 ||
        (!distinct && strcmp(mode, "repeated") != 0) || (!plain && strcmp(encoding, "compressed") != 0)) {
        fprintf(stderr, "raw: bad URL, N, WARMUP, mode (repeated|distinct) or encoding (compressed|plain)\n");
        return 2;
    }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    CURL *h = curl_easy_init();
    if (!h) return 1;
    size_t body = 0;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* The request Netlayer sends by default (compression on, its User-Agent), so both
     * sides put the same request on the wire and the difference is Netlayer's own;
     * "plain" offers no compression, as a user's loop that sets nothing does. */
    if (!plain)
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "netlayer/" NL_VERSION_STRING);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);

    long warm_conns = run(h, &body, warmup);
    if (warm_conns < 0) return 1;

    double t0 = now_s(), c0 = cpu_s();
    long conns = run(h, &body, n);
    double t1 = now_s(), c1 = cpu_s();
    if (conns < 0) return 1;

    double elapsed = t1 - t0;
    printf("raw %ld %.3f %.0f %.2f\n", n, elapsed, (double)n / elapsed, (c1 - c0) * 1e6 / (double)n);
    fprintf(stderr, "raw: mode=%s new_connections=%ld (measured part) (warmup %ld)\n", mode, conns,
            warm_conns);

    curl_easy_cleanup(h);
    curl_global_cleanup();
    /* A connection per request (or close to it) means the run measured the wrong thing. */
    if (conns > 2) {
        fprintf(stderr, "raw: connection was not reused (%ld new connections)\n", conns);
        return 1;
    }
    return 0;
}
