/*
 * conc_netlayer.c — N GETs through Netlayer's C ABI with K in flight.
 *
 * One client, config {"baseURL": ..., "maxConcurrent": K}. Two ways to keep K
 * in flight:
 *
 *   batch  nl_request_batch() of K endpoint documents, again and again until N
 *          are done (the last batch is smaller when K does not divide N). Each
 *          batch waits for its slowest member before the next starts, as a caller
 *          of the blocking batch call would.
 *   async  K nl_request_async() started at once; each callback checks its result,
 *          counts it and starts the next request from inside the callback (allowed
 *          by netlayer.h), so K stay in flight until N have been started.
 *
 * and two kinds of document:
 *
 *   repeated  every request sends {"path":"small.json"} (batch: one array of K
 *             of them, built once)
 *   distinct  every request sends {"path":"small.json","query":{"page":<i>}},
 *             formatted with snprintf per request (batch: the array built for
 *             every batch), i counting up through the process (warm-up included)
 *
 * WARMUP untimed requests first, the same way, open the K connections.
 *
 * usage: conc_netlayer batch|async URL K [N=20000] [WARMUP=2000] [repeated|distinct]
 *        URL is split at its last '/': "http://127.0.0.1:PORT/" becomes the
 *        client's baseURL and "small.json" the endpoint's path.
 * stdout: one line   netlayer-MODE K N elapsed_s req_per_s cpu_us_per_req
 * stderr: one line   netlayer: library VERSION (ABI n)
 * CPU is user+sys from getrusage(RUSAGE_SELF) (every thread, the library's
 * event-loop thread included), delta over the measured part, / N.
 * Exits 1 on the first result that is not "ok":true (printing it), and 3 when no
 * request completes for STALL_S seconds (a hang; prints the counters).
 *
 * build: cc -O2 -I../include -o conc_netlayer conc_netlayer.c \
 *           -L$LIBDIR -lnetlayer -Wl,-rpath,$LIBDIR -lpthread
 */
#include "netlayer.h"
#include "conc_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define STALL_S 30

static int is_ok(const char *r) {
    return r && (strncmp(r, "{\"ok\":true", 10) == 0 || strstr(r, "\"ok\":true") ||
                 strstr(r, "\"ok\": true"));
}

/* Occurrences of needle in s. */
static long count_of(const char *s, const char *needle) {
    long c = 0;
    size_t nl = strlen(needle);
    for (const char *p = s; (p = strstr(p, needle)); p += nl) c++;
    return c;
}

static void json_escape(char *out, size_t cap, const char *s, size_t n) {
    size_t o = strlen(out);
    for (size_t i = 0; i < n && o + 3 < cap; i++) {
        if (s[i] == '"' || s[i] == '\\') out[o++] = '\\';
        out[o++] = s[i];
    }
    out[o] = '\0';
}

static char path[2100]; /* the path, escaped for a JSON string */
static int distinct;
static atomic_long page; /* the next "page" of distinct mode */

/* A distinct document into out (cap bytes); returns its length. */
static int distinct_doc(char *out, size_t cap) {
    return snprintf(out, cap, "{\"path\":\"%s\",\"query\":{\"page\":%ld}}", path,
                    atomic_fetch_add_explicit(&page, 1, memory_order_relaxed));
}

/* "[d,d,...,d]" with m distinct documents, into *s (grown as needed). */
static char *distinct_batch(char **s, size_t *cap, long m) {
    size_t need = (strlen(path) + 64) * (size_t)m + 3;
    if (*cap < need) {
        char *p = realloc(*s, need);
        if (!p) return NULL;
        *s = p;
        *cap = need;
    }
    char *p = *s;
    *p++ = '[';
    for (long i = 0; i < m; i++) {
        if (i) *p++ = ',';
        p += distinct_doc(p, *cap - (size_t)(p - *s));
    }
    *p++ = ']';
    *p = '\0';
    return *s;
}

/* "[e,e,...,e]" with m copies of the endpoint document. */
static char *batch_doc(const char *endpoint, long m) {
    size_t el = strlen(endpoint);
    char *s = malloc((el + 1) * (size_t)m + 3);
    if (!s) return NULL;
    char *p = s;
    *p++ = '[';
    for (long i = 0; i < m; i++) {
        if (i) *p++ = ',';
        memcpy(p, endpoint, el);
        p += el;
    }
    *p++ = ']';
    *p = '\0';
    return s;
}

/* ---- batch ---- */

static atomic_long batch_progress; /* batches returned; watched by watchdog() */

static int run_batch(nl_client *c, const char *endpoint, long k, long n) {
    static char *scratch; /* distinct: the array of the current batch */
    static size_t scratch_cap;
    char *full = distinct ? NULL : batch_doc(endpoint, k);
    char *tail = !distinct && n % k ? batch_doc(endpoint, n % k) : NULL;
    if (!distinct && (!full || (n % k && !tail))) return -1;
    long done = 0;
    while (done < n) {
        long m = n - done < k ? n - done : k;
        const char *doc = distinct ? distinct_batch(&scratch, &scratch_cap, m) : m == k ? full : tail;
        if (!doc) return -1;
        char *r = nl_request_batch(c, doc);
        long oks = r ? count_of(r, "\"ok\":true") : 0;
        if (!r || r[0] != '[' || oks != m) {
            fprintf(stderr, "netlayer-batch: batch of %ld at request %ld: %ld ok results; got: %.2000s\n",
                    m, done, oks, r ? r : "(NULL)");
            nl_free(r);
            return -1;
        }
        nl_free(r);
        done += m;
        atomic_fetch_add(&batch_progress, 1);
    }
    free(full);
    free(tail);
    return 0;
}

/* ---- async ---- */

struct async_run {
    nl_client *client;
    const char *endpoint;
    long target;
    atomic_long started;
    atomic_long completed;
    atomic_long failed;
    char first_failure[2048];
};

static pthread_mutex_t async_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t async_cv = PTHREAD_COND_INITIALIZER;

static void on_result(uint64_t id, const char *result, void *user_data) {
    struct async_run *a = user_data;
    if (!is_ok(result)) {
        if (atomic_fetch_add(&a->failed, 1) == 0)
            snprintf(a->first_failure, sizeof a->first_failure, "id %llu: %s",
                     (unsigned long long)id, result ? result : "(NULL)");
    }
    /* Start the next one before counting this one, so K stay in flight. */
    if (atomic_fetch_add(&a->started, 1) < a->target) {
        char doc[2300];
        if (distinct) distinct_doc(doc, sizeof doc);
        if (nl_request_async(a->client, distinct ? doc : a->endpoint, on_result, a) == 0) {
            if (atomic_fetch_add(&a->failed, 1) == 0)
                snprintf(a->first_failure, sizeof a->first_failure,
                         "nl_request_async returned 0 from inside a callback");
            atomic_fetch_add(&a->completed, 1); /* it will never complete: count it */
        }
    }
    long done = atomic_fetch_add(&a->completed, 1) + 1;
    if (done >= a->target) {
        pthread_mutex_lock(&async_mu);
        pthread_cond_signal(&async_cv);
        pthread_mutex_unlock(&async_mu);
    }
}

static int run_async(nl_client *c, const char *endpoint, long k, long n) {
    static struct async_run a; /* lives until exit: a late callback must find it */
    a.client = c;
    a.endpoint = endpoint;
    a.target = n;
    atomic_store(&a.started, 0);
    atomic_store(&a.completed, 0);
    atomic_store(&a.failed, 0);
    a.first_failure[0] = '\0';

    long first = k < n ? k : n;
    atomic_store(&a.started, first);
    for (long i = 0; i < first; i++) {
        char doc[2300];
        if (distinct) distinct_doc(doc, sizeof doc);
        if (nl_request_async(c, distinct ? doc : endpoint, on_result, &a) == 0) {
            fprintf(stderr, "netlayer-async: nl_request_async returned 0\n");
            return -1;
        }
    }
    long last = -1;
    double last_progress = now_s();
    pthread_mutex_lock(&async_mu);
    while (atomic_load(&a.completed) < n) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&async_cv, &async_mu, &ts);
        long done = atomic_load(&a.completed);
        if (done != last) {
            last = done;
            last_progress = now_s();
        } else if (now_s() - last_progress > STALL_S) {
            fprintf(stderr, "netlayer-async: HANG: no completion for %d s; started=%ld completed=%ld "
                    "failed=%ld of %ld (K=%ld)\n", STALL_S, atomic_load(&a.started), done,
                    atomic_load(&a.failed), n, k);
            fflush(stderr);
            _exit(3);
        }
    }
    pthread_mutex_unlock(&async_mu);
    if (atomic_load(&a.failed) > 0) {
        fprintf(stderr, "netlayer-async: %ld of %ld results not ok; first: %.2000s\n",
                atomic_load(&a.failed), n, a.first_failure);
        return -1;
    }
    return 0;
}

/* Batch calls block; a watchdog thread turns a stall into exit code 3. */
static void *watchdog(void *arg) {
    (void)arg;
    long last = -1;
    double since = now_s();
    for (;;) {
        sleep(1);
        long p = atomic_load(&batch_progress);
        if (p != last) {
            last = p;
            since = now_s();
        } else if (now_s() - since > STALL_S) {
            fprintf(stderr, "netlayer-batch: HANG: nl_request_batch has not returned for %d s "
                    "(%ld batches returned so far)\n", STALL_S, p);
            fflush(stderr);
            _exit(3);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s batch|async URL K [N=20000] [WARMUP=2000] [repeated|distinct]\n",
                argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    const char *url = argv[2];
    long k = atol(argv[3]);
    long n = argc > 4 ? atol(argv[4]) : 20000;
    long warmup = argc > 5 ? atol(argv[5]) : 2000;
    const char *docs = argc > 6 ? argv[6] : "repeated";
    distinct = strcmp(docs, "distinct") == 0;
    const char *slash = strrchr(url, '/');
    int batch = strcmp(mode, "batch") == 0;
    if ((!batch && strcmp(mode, "async") != 0) || k <= 0 || n <= 0 || warmup < 0 || !slash ||
        slash[1] == '\0' || strlen(url) > 1000 || (!distinct && strcmp(docs, "repeated") != 0)) {
        fprintf(stderr, "netlayer: bad way (batch|async), URL, K, N, WARMUP or documents (repeated|distinct)\n");
        return 2;
    }
    if (nl_abi_version() != NL_ABI_VERSION) {
        fprintf(stderr, "netlayer: ABI %d, header expects %d\n", nl_abi_version(), NL_ABI_VERSION);
        return 1;
    }

    char config[2300] = "{\"baseURL\": \"";
    json_escape(config, sizeof config, url, (size_t)(slash + 1 - url));
    snprintf(config + strlen(config), sizeof config - strlen(config), "\", \"maxConcurrent\": %ld}", k);
    json_escape(path, sizeof path, slash + 1, strlen(slash + 1));
    char endpoint[2300];
    snprintf(endpoint, sizeof endpoint, "{\"path\":\"%s\"}", path);

    char *err = NULL;
    nl_client *c = nl_client_new(config, &err);
    if (!c) {
        fprintf(stderr, "netlayer: nl_client_new(%s) failed: %s\n", config, err ? err : "(no error)");
        nl_free(err);
        return 1;
    }
    pthread_t wd;
    if (batch) pthread_create(&wd, NULL, watchdog, NULL);

    int (*run)(nl_client *, const char *, long, long) = batch ? run_batch : run_async;
    if (warmup > 0 && run(c, endpoint, k, warmup) != 0) return 1;

    double t0 = now_s(), c0 = cpu_s();
    int rc = run(c, endpoint, k, n);
    double t1 = now_s(), c1 = cpu_s();
    if (rc != 0) return 1;

    double elapsed = t1 - t0;
    printf("netlayer-%s %ld %ld %.3f %.0f %.2f\n", mode, k, n, elapsed, (double)n / elapsed,
           (c1 - c0) * 1e6 / (double)n);
    fflush(stdout);
    fprintf(stderr, "netlayer: library %s (ABI %d)\n", nl_version(), nl_abi_version());
    nl_client_free(c);
    return 0;
}
