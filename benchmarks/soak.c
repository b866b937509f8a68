/*
 * soak: N requests on one client, mixed success / HTTP error / cancelled async, to
 * check that memory does not drift and latency stays stable.
 *
 *   soak URL_OF_SMALL_JSON [N]      (default 1,000,000)
 *
 * Prints RSS after warm-up (the first 10%) and at the end, and p50/p99 latency of
 * the synchronous requests in the first and the last 100,000.
 */
#define _POSIX_C_SOURCE 200809L
#include <netlayer.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    if (f) fclose(f);
    return kib;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t drained = PTHREAD_COND_INITIALIZER;
static long pending = 0, cancelled = 0, async_ok = 0;

static void on_done(uint64_t id, const char *result, void *user) {
    (void)id; (void)user;
    pthread_mutex_lock(&lock);
    if (strstr(result, "\"kind\":\"cancelled\"")) cancelled++;
    else if (strstr(result, "\"ok\":true")) async_ok++;
    if (--pending == 0) pthread_cond_signal(&drained);
    pthread_mutex_unlock(&lock);
}

static void percentiles(double *v, long n, const char *label) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("%s: p50 %.1f us, p99 %.1f us\n", label, v[n / 2], v[n * 99 / 100]);
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : NULL;
    long n = argc > 2 ? atol(argv[2]) : 1000000, window = n / 10 < 100000 ? n / 10 : 100000;
    char config[512], *slash;
    double *first = calloc((size_t)window, sizeof(double)), *last = calloc((size_t)window, sizeof(double));
    long nf = 0, nl = 0, ok = 0, status_errors = 0, other = 0, rss_warm = 0, i;
    nl_client *client;
    if (!url || !first || !last) { fprintf(stderr, "usage: soak URL [N]\n"); return 2; }
    slash = strrchr(url, '/');
    snprintf(config, sizeof config, "{\"baseURL\": \"%.*s/\"}", (int)(slash - url), url);
    client = nl_client_new(config, NULL);
    if (!client) return 2;
    for (i = 0; i < n; i++) {
        int kind = (int)(i % 10);
        if (kind == 9) {  /* an async request cancelled at once */
            uint64_t id;
            pthread_mutex_lock(&lock);
            pending++;
            pthread_mutex_unlock(&lock);
            id = nl_request_async(client, "{\"path\": \"small.json\"}", on_done, NULL);
            nl_cancel(client, id);
        } else {
            double t0 = now_us(), dt;
            char *r = nl_request(client, kind == 8 ? "{\"path\": \"missing.json\"}" : "{\"path\": \"small.json\"}");
            dt = now_us() - t0;
            if (strstr(r, "\"ok\":true")) ok++;
            else if (strstr(r, "\"kind\":\"status\"")) status_errors++;
            else other++;
            nl_free(r);
            if (i < window && nf < window) first[nf++] = dt;
            if (i >= n - window && nl < window) last[nl++] = dt;
        }
        if (i == n / 10) rss_warm = rss_kib();
    }
    pthread_mutex_lock(&lock);
    while (pending > 0) pthread_cond_wait(&drained, &lock);
    pthread_mutex_unlock(&lock);
    printf("requests %ld: ok %ld, status errors %ld, async ok %ld, cancelled %ld, other %ld\n",
           n, ok, status_errors, async_ok, cancelled, other);
    printf("RSS after warm-up %ld KiB, at the end %ld KiB, drift %+ld KiB\n", rss_warm, rss_kib(), rss_kib() - rss_warm);
    percentiles(first, nf, "first window");
    percentiles(last, nl, "last window");
    nl_client_free(client);
    free(first);
    free(last);
    return other == 0 ? 0 : 1;
}
