/*
 * seq_netlayer.c — N sequential GETs through Netlayer's C ABI.
 *
 * The same work as seq_raw.c: one client (one connection pool), then N blocking
 * requests, each result checked for "ok":true.
 *
 *   repeated  every request sends the same endpoint document {"path":"small.json"}
 *   distinct  every request sends {"path":"small.json","query":{"page":<i>}},
 *             formatted with snprintf per request, i counting up through the
 *             process (warm-up included): no document and no URL comes twice
 *
 *   request   nl_request() + nl_free() per request (the default)
 *   borrowed  nl_request_borrowed(): the result lent, no nl_free()
 *
 * usage: seq_netlayer URL [N=20000] [WARMUP=1000] [repeated|distinct] [request|borrowed]
 *        URL is split at its last '/': "http://127.0.0.1:PORT/" becomes the
 *        client's baseURL and "small.json" the endpoint's path.
 * stdout: one line   netlayer|netlayer-borrowed N elapsed_s req_per_s cpu_us_per_req
 * stderr: one line   netlayer: library VERSION (ABI n)
 * CPU is user+sys from getrusage(RUSAGE_SELF) (all threads of the process,
 * the library's event-loop thread included), delta over the measured part, / N.
 * Exits non-zero on the first result that is not "ok":true.
 *
 * build: cc -O2 -I../include -o seq_netlayer seq_netlayer.c \
 *           -L$LIBDIR -lnetlayer -Wl,-rpath,$LIBDIR
 */
#include "netlayer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

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

static int is_ok(const char *r) {
    return r && (strstr(r, "\"ok\":true") || strstr(r, "\"ok\": true"));
}

/* Appends s to out as the inside of a JSON string (URLs here need little). */
static void json_escape(char *out, size_t cap, const char *s, size_t n) {
    size_t o = strlen(out);
    for (size_t i = 0; i < n && o + 3 < cap; i++) {
        if (s[i] == '"' || s[i] == '\\') out[o++] = '\\';
        out[o++] = s[i];
    }
    out[o] = '\0';
}

static int distinct, borrowed;
static char path[2100]; /* the path, escaped for a JSON string */
static long page;       /* the next "page" of distinct mode */

/* Performs n requests; returns 0, or -1 after printing the first failure. */
static int run(nl_client *c, const char *fixed, long n) {
    char doc[2300];
    for (long i = 0; i < n; i++) {
        const char *endpoint = fixed;
        if (distinct) {
            snprintf(doc, sizeof doc, "{\"path\":\"%s\",\"query\":{\"page\":%ld}}", path, page++);
            endpoint = doc;
        }
        if (borrowed) {
            const char *r = nl_request_borrowed(c, endpoint);
            if (!is_ok(r)) {
                fprintf(stderr, "netlayer: request %ld failed: %s\n", i, r ? r : "(NULL)");
                return -1;
            }
        } else {
            char *r = nl_request(c, endpoint);
            if (!is_ok(r)) {
                fprintf(stderr, "netlayer: request %ld failed: %s\n", i, r ? r : "(NULL)");
                nl_free(r);
                return -1;
            }
            nl_free(r);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [N=20000] [WARMUP=1000] [repeated|distinct] [request|borrowed]\n",
                argv[0]);
        return 2;
    }
    const char *url = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 20000;
    long warmup = argc > 3 ? atol(argv[3]) : 1000;
    const char *mode = argc > 4 ? argv[4] : "repeated";
    const char *api = argc > 5 ? argv[5] : "request";
    distinct = strcmp(mode, "distinct") == 0;
    borrowed = strcmp(api, "borrowed") == 0;
    const char *slash = strrchr(url, '/');
    if (n <= 0 || warmup < 0 || !slash || slash[1] == '\0' || strlen(url) > 1000 ||
        (!distinct && strcmp(mode, "repeated") != 0) || (!borrowed && strcmp(api, "request") != 0)) {
        fprintf(stderr, "netlayer: bad URL, N, WARMUP, mode (repeated|distinct) or api (request|borrowed)\n");
        return 2;
    }
    if (nl_abi_version() != NL_ABI_VERSION) {
        fprintf(stderr, "netlayer: ABI %d, header expects %d\n", nl_abi_version(), NL_ABI_VERSION);
        return 1;
    }

    char config[2200] = "{\"baseURL\": \"";
    json_escape(config, sizeof config, url, (size_t)(slash + 1 - url));
    strcat(config, "\"}");
    json_escape(path, sizeof path, slash + 1, strlen(slash + 1));
    char fixed[2300];
    snprintf(fixed, sizeof fixed, "{\"path\":\"%s\"}", path);

    char *err = NULL;
    nl_client *c = nl_client_new(config, &err);
    if (!c) {
        fprintf(stderr, "netlayer: nl_client_new(%s) failed: %s\n", config, err ? err : "(no error)");
        nl_free(err);
        return 1;
    }

    if (run(c, fixed, warmup) != 0) return 1;

    double t0 = now_s(), c0 = cpu_s();
    int rc = run(c, fixed, n);
    double t1 = now_s(), c1 = cpu_s();
    if (rc != 0) return 1;

    double elapsed = t1 - t0;
    printf("%s %ld %.3f %.0f %.2f\n", borrowed ? "netlayer-borrowed" : "netlayer", n, elapsed,
           (double)n / elapsed, (c1 - c0) * 1e6 / (double)n);
    fflush(stdout);
    fprintf(stderr, "netlayer: library %s (ABI %d)\n", nl_version(), nl_abi_version());
    nl_client_free(c);
    return 0;
}
