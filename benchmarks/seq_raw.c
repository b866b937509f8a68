/*
 * seq_raw.c — baseline: N sequential GETs through raw libcurl.
 *
 * One easy handle reused for every request (so one kept-alive connection),
 * CURLOPT_NOSIGNAL=1, and a write callback that appends the body into a
 * growable buffer so the client does work comparable to a real one.
 *
 * usage: seq_raw URL [N=20000] [WARMUP=1000]
 * stdout: one line   raw N elapsed_s req_per_s cpu_us_per_req
 * stderr: one line   raw: new_connections=K (measured part) ...
 * CPU is user+sys from getrusage(RUSAGE_SELF), delta over the measured part, / N.
 * Exits non-zero if any response is not 200 or the transfer fails.
 *
 * build: cc -O2 -o seq_raw seq_raw.c -lcurl
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct buf {
    char *data;
    size_t len, cap;
};

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
    struct buf *b = userdata;
    size_t n = size * nmemb;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) return 0; /* makes libcurl fail with CURLE_WRITE_ERROR */
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
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

/* Performs n GETs; returns the number of new connections, or -1 on failure. */
static long run(CURL *h, struct buf *b, long n) {
    long conns = 0;
    for (long i = 0; i < n; i++) {
        b->len = 0;
        CURLcode rc = curl_easy_perform(h);
        if (rc != CURLE_OK) {
            fprintf(stderr, "raw: request %ld failed: %s\n", i, curl_easy_strerror(rc));
            return -1;
        }
        long code = 0, nc = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &nc);
        if (code != 200 || b->len == 0) {
            fprintf(stderr, "raw: request %ld: status %ld, %zu body bytes\n", i, code, b->len);
            return -1;
        }
        conns += nc;
    }
    return conns;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [N=20000] [WARMUP=1000]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 20000;
    long warmup = argc > 3 ? atol(argv[3]) : 1000;
    if (n <= 0 || warmup < 0) {
        fprintf(stderr, "raw: bad N or WARMUP\n");
        return 2;
    }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
    CURL *h = curl_easy_init();
    if (!h) return 1;
    struct buf b = {0};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* The request Netlayer sends by default (compression on, its User-Agent), so both
     * sides do the same HTTP work and the difference is Netlayer's own. */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "netlayer/0.1.0");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);

    long warm_conns = run(h, &b, warmup);
    if (warm_conns < 0) return 1;

    double t0 = now_s(), c0 = cpu_s();
    long conns = run(h, &b, n);
    double t1 = now_s(), c1 = cpu_s();
    if (conns < 0) return 1;

    double elapsed = t1 - t0;
    printf("raw %ld %.3f %.0f %.2f\n", n, elapsed, (double)n / elapsed, (c1 - c0) * 1e6 / (double)n);
    fprintf(stderr, "raw: new_connections=%ld (warmup %ld)\n", conns, warm_conns);

    free(b.data);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    /* A connection per request (or close to it) means the run measured the wrong thing. */
    if (conns > 2) {
        fprintf(stderr, "raw: connection was not reused (%ld new connections)\n", conns);
        return 1;
    }
    return 0;
}
