/*
 * harness.h — a tiny header-only test harness for the Netlayer C tests.
 *
 * Include this header first (it defines _POSIX_C_SOURCE when nobody did).
 *
 *   static void test_something(void) { CHECK(1 + 1 == 2); }
 *   int main(int argc, char **argv) {
 *       static const nlt_test tests[] = { NLT_TEST(test_something) };
 *       return nlt_main(argc, argv, tests, NLT_COUNT(tests));
 *   }
 *
 * - CHECK(cond) records a failure (file:line and the expression) and goes on.
 *   CHECK and its variants are thread-safe and may be used from any thread.
 * - REQUIRE(cond) records a failure and aborts the current test; use it only
 *   on the thread that runs the test (it longjmps).
 * - nlt_main runs every test (or those whose name contains argv[1]), prints
 *   one "ok"/"FAIL" line per test and a final line "N passed, N failed", and
 *   returns non-zero when any test failed. Each test has a watchdog
 *   (NLT_TEST_TIMEOUT seconds) so a hung library call fails the run instead of
 *   blocking it forever.
 *
 * Link with the library, -ljansson and -lpthread.
 */
#ifndef NETLAYER_TEST_HARNESS_H
#define NETLAYER_TEST_HARNESS_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif

#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ThreadSanitizer cannot follow a multi-threaded fork (it refuses to start threads in
   the child): tests that fork start with SKIP_UNDER_TSAN(); ASan and valgrind run them. */
#if defined(__SANITIZE_THREAD__)
#  define NLT_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define NLT_TSAN 1
#  endif
#endif
#ifdef NLT_TSAN
#  define SKIP_UNDER_TSAN() do { nlt_note("skipped: ThreadSanitizer cannot follow fork()"); return; } while (0)
#else
#  define SKIP_UNDER_TSAN() do { } while (0)
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <jansson.h>

#include "netlayer.h"

#ifndef NLT_TEST_TIMEOUT
#  define NLT_TEST_TIMEOUT 60
#endif

typedef void (*nlt_fn)(void);

typedef struct nlt_test {
    const char *name;
    nlt_fn fn;
} nlt_test;

#define NLT_TEST(fn) { #fn, fn }
#define NLT_COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* ---- state ------------------------------------------------------------------ */

static pthread_mutex_t nlt_lock = PTHREAD_MUTEX_INITIALIZER;
static int nlt_current_failures = 0;
static const char *volatile nlt_current_name = "";
static jmp_buf nlt_abort_jmp;

static inline void nlt_vfail(const char *file, int line, const char *expr, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&nlt_lock);
    nlt_current_failures++;
    fprintf(stdout, "    %s:%d: check failed: %s\n", file, line, expr);
    if (fmt != NULL) {
        fputs("        ", stdout);
        vfprintf(stdout, fmt, ap);
        fputc('\n', stdout);
    }
    fflush(stdout);
    pthread_mutex_unlock(&nlt_lock);
}

static inline void nlt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nlt_vfail(file, line, expr, fmt, ap);
    va_end(ap);
}

/* Prints a note under the current test (thread-safe). */
static inline void nlt_note(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&nlt_lock);
    fputs("    note: ", stdout);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
    pthread_mutex_unlock(&nlt_lock);
}

static inline void nlt_abort_test(void)
{
    longjmp(nlt_abort_jmp, 1);
}

#define CHECK(cond) \
    do { if (!(cond)) nlt_fail(__FILE__, __LINE__, #cond, NULL); } while (0)

/* CHECK_MSG(cond, fmt, ...): like CHECK, plus a printf-style explanation. */
#define CHECK_MSG(cond, ...) \
    do { if (!(cond)) nlt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); } while (0)

#define REQUIRE(cond) \
    do { if (!(cond)) { nlt_fail(__FILE__, __LINE__, #cond, "(test aborted)"); nlt_abort_test(); } } while (0)

#define REQUIRE_MSG(cond, ...) \
    do { if (!(cond)) { nlt_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); nlt_abort_test(); } } while (0)

#define CHECK_STR_EQ(actual, expected)                                                   \
    do {                                                                                 \
        const char *nlt_a_ = (actual);                                                   \
        const char *nlt_e_ = (expected);                                                 \
        if (nlt_a_ == NULL || nlt_e_ == NULL || strcmp(nlt_a_, nlt_e_) != 0)             \
            nlt_fail(__FILE__, __LINE__, #actual " == " #expected,                       \
                     "actual \"%s\", expected \"%s\"", nlt_a_ ? nlt_a_ : "(null)",       \
                     nlt_e_ ? nlt_e_ : "(null)");                                        \
    } while (0)

#define CHECK_INT_EQ(actual, expected)                                                   \
    do {                                                                                 \
        long long nlt_a_ = (long long)(actual);                                          \
        long long nlt_e_ = (long long)(expected);                                        \
        if (nlt_a_ != nlt_e_)                                                            \
            nlt_fail(__FILE__, __LINE__, #actual " == " #expected,                       \
                     "actual %lld, expected %lld", nlt_a_, nlt_e_);                      \
    } while (0)

/* ---- small utilities ---------------------------------------------------------- */

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1.0e6;
}

static inline void sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The TCP sockets (IPv4, IPv6) of this process a program it executes would inherit:
 * those without close-on-exec. (libcurl's own socketpairs are Unix sockets.) */
static inline int nlt_tcp_sockets_kept_across_exec(int *open_count)
{
    int fd, kept = 0, open = 0;
    for (fd = 3; fd < 4096; fd++) {
        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        int flags = fcntl(fd, F_GETFD);
        if (flags < 0 || getsockname(fd, (struct sockaddr *)&address, &length) != 0)
            continue;
        if (address.ss_family != AF_INET && address.ss_family != AF_INET6)
            continue;
        open++;
        if (!(flags & FD_CLOEXEC))
            kept++;
    }
    if (open_count != NULL)
        *open_count = open;
    return kept;
}

/* Case-insensitive strstr; NULL arguments never match. */
static inline const char *nlt_stristr(const char *haystack, const char *needle)
{
    size_t n;
    if (haystack == NULL || needle == NULL)
        return NULL;
    n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i;
        for (i = 0; i < n; i++) {
            if (tolower((unsigned char)haystack[i]) != tolower((unsigned char)needle[i]))
                break;
        }
        if (i == n)
            return haystack;
    }
    return n == 0 ? haystack : NULL;
}

/* printf into a fresh malloc'ed string (caller frees). */
static inline char *nlt_vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    char *s;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    s = (char *)malloc((size_t)n + 1);
    if (s != NULL)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static inline char *nlt_format(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    s = nlt_vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* ---- Netlayer helpers ------------------------------------------------------- */

/* The test server's base URL (NETLAYER_TEST_URL, with a trailing slash).
 * Aborts the current test when the variable is not set. */
static inline const char *base_url(void)
{
    const char *u = getenv("NETLAYER_TEST_URL");
    if (u == NULL || *u == '\0') {
        nlt_fail(__FILE__, __LINE__, "getenv(\"NETLAYER_TEST_URL\") != NULL",
                 "NETLAYER_TEST_URL is not set: run the tests through "
                 "Tests/server/with_server.py -- <test binary>");
        nlt_abort_test();
    }
    return u;
}

/* Parses a document returned by the library; NULL (with a failure recorded)
 * when it is NULL or not JSON. Does not free `text`. */
static inline json_t *nlt_parse(const char *text, const char *what)
{
    json_error_t err;
    json_t *j;
    if (text == NULL) {
        nlt_fail(__FILE__, __LINE__, "result != NULL", "%s returned NULL", what);
        return NULL;
    }
    j = json_loads(text, JSON_DECODE_ANY, &err);
    if (j == NULL)
        nlt_fail(__FILE__, __LINE__, "json_loads(result)",
                 "%s returned text that is not JSON (%s at %d): %.400s", what, err.text,
                 err.position, text);
    return j;
}

/* Sends an endpoint document given verbatim (may be NULL or malformed) and
 * returns the parsed result (caller json_decref()s). */
static inline json_t *request_doc(nl_client *c, const char *endpoint)
{
    char *text = nl_request(c, endpoint);
    json_t *j = nlt_parse(text, "nl_request");
    nl_free(text);
    return j;
}

/* printf-formats the endpoint document, calls nl_request and returns the parsed
 * result (caller json_decref()s). Remember to write a literal '%' as "%%". */
static inline json_t *request_json(nl_client *c, const char *endpoint_fmt, ...)
{
    va_list ap;
    char *doc;
    json_t *j;
    va_start(ap, endpoint_fmt);
    doc = nlt_vformat(endpoint_fmt, ap);
    va_end(ap);
    if (doc == NULL) {
        nlt_fail(__FILE__, __LINE__, "format", "cannot format endpoint document");
        return NULL;
    }
    j = request_doc(c, doc);
    free(doc);
    return j;
}

/* Creates a client with {"baseURL": base_url(), <extra members>}. `extra` is a
 * list of JSON object members without braces, e.g. "\"timeout\": 5", or NULL.
 * Aborts the test when the client cannot be created. */
static inline nl_client *client_with_config(char *config);

static inline nl_client *client_for(const char *extra_config_json_members)
{
    int has_extra = extra_config_json_members != NULL && *extra_config_json_members != '\0';
    return client_with_config(nlt_format("{\"baseURL\": \"%s\"%s%s}", base_url(), has_extra ? ", " : "",
                                         has_extra ? extra_config_json_members : ""));
}

/* Creates a client from a whole config document, which it frees (a NULL config, from a
 * failed nlt_format, aborts the test, as does a client that cannot be created). */
static inline nl_client *client_with_config(char *config)
{
    char *err = NULL;
    nl_client *c;
    REQUIRE(config != NULL);
    c = nl_client_new(config, &err);
    if (c == NULL) {
        nlt_fail(__FILE__, __LINE__, "nl_client_new(config) != NULL", "config %s -> %s", config,
                 err ? err : "(no error document)");
        nl_free(err);
        free(config);
        nlt_abort_test();
    }
    free(config);
    return c;
}

/* Follows a dot-separated path through objects and arrays (numeric parts index
 * arrays). Returns a borrowed reference or NULL. An empty path is `root`. */
static inline json_t *jpath(json_t *root, const char *path)
{
    json_t *cur = root;
    const char *p = path;
    char part[256];
    if (root == NULL || path == NULL)
        return NULL;
    while (*p) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof(part))
            return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        p += n;
        if (*p == '.')
            p++;
        if (json_is_object(cur)) {
            cur = json_object_get(cur, part);
        } else if (json_is_array(cur)) {
            char *end;
            long idx = strtol(part, &end, 10);
            if (*part == '\0' || *end != '\0' || idx < 0)
                return NULL;
            cur = json_array_get(cur, (size_t)idx);
        } else {
            return NULL;
        }
        if (cur == NULL)
            return NULL;
    }
    return cur;
}

/* The string at `path`, or NULL when it is missing or not a string. */
static inline const char *jpath_str(json_t *root, const char *path)
{
    json_t *v = jpath(root, path);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The number at `path`, or `dflt` when it is missing or not a number. */
static inline double jpath_num(json_t *root, const char *path, double dflt)
{
    json_t *v = jpath(root, path);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* 1 when the result's "ok" is true, else 0. */
static inline int result_ok(json_t *r)
{
    return json_is_true(json_object_get(r, "ok")) ? 1 : 0;
}

/* The result's HTTP "status", or -1 when absent. */
static inline long long result_status(json_t *r)
{
    json_t *s = json_object_get(r, "status");
    return json_is_number(s) ? (long long)json_number_value(s) : -1;
}

/* error.kind, or "" when absent (never NULL). */
static inline const char *error_kind(json_t *r)
{
    const char *k = jpath_str(r, "error.kind");
    return k ? k : "";
}

/* error.message, or "" when absent (never NULL). */
static inline const char *error_message(json_t *r)
{
    const char *m = jpath_str(r, "error.message");
    return m ? m : "";
}

/* Prints a compact rendering of a JSON value as a note. */
/* The value of header `name` (any case) in the object `headers`, or NULL. */
static inline const char *nlt_header_value(json_t *headers, const char *name)
{
    const char *k;
    json_t *v;
    if (!json_is_object(headers))
        return NULL;
    json_object_foreach(headers, k, v) {
        if (strcasecmp(k, name) == 0)
            return json_is_string(v) ? json_string_value(v) : "(not a string)";
    }
    return NULL;
}

/* Every log event of a client, parsed, in order: install nlt_log_sink_hook as the
 * LOG hook with the sink as user_data. */
typedef struct nlt_log_sink {
    pthread_mutex_t lock;
    json_t *events;
} nlt_log_sink;

static inline void nlt_log_sink_init(nlt_log_sink *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->events = json_array();
}

static inline void nlt_log_sink_done(nlt_log_sink *s)
{
    json_decref(s->events);
    pthread_mutex_destroy(&s->lock);
}

static inline void nlt_log_sink_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    nlt_log_sink *s = (nlt_log_sink *)user_data;
    json_t *e = json_loads(event_json, 0, NULL);
    (void)reply;
    CHECK_MSG(e != NULL, "log event is not JSON: %.300s", event_json);
    if (e == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    json_array_append_new(s->events, e);
    pthread_mutex_unlock(&s->lock);
}

static inline void nlt_dump(const char *label, json_t *j)
{
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    nlt_note("%s: %.1500s", label, s ? s : "(null)");
    free(s);
}

/* Checks that a result succeeded; on failure prints the document. */
#define CHECK_OK(r)                                                                      \
    do {                                                                                 \
        json_t *nlt_r_ = (r);                                                            \
        if (!result_ok(nlt_r_)) {                                                        \
            char *nlt_s_ = nlt_r_ ? json_dumps(nlt_r_, JSON_COMPACT) : NULL;             \
            nlt_fail(__FILE__, __LINE__, "result_ok(" #r ")", "result: %.1500s",         \
                     nlt_s_ ? nlt_s_ : "(null)");                                        \
            free(nlt_s_);                                                                \
        }                                                                                \
    } while (0)

/* Checks that a result failed with error kind `kind`; on failure prints it. */
#define CHECK_KIND(r, kind)                                                              \
    do {                                                                                 \
        json_t *nlt_r_ = (r);                                                            \
        if (result_ok(nlt_r_) || strcmp(error_kind(nlt_r_), (kind)) != 0) {              \
            char *nlt_s_ = nlt_r_ ? json_dumps(nlt_r_, JSON_COMPACT) : NULL;             \
            nlt_fail(__FILE__, __LINE__, "error.kind == " #kind, "result: %.1500s",      \
                     nlt_s_ ? nlt_s_ : "(null)");                                        \
            free(nlt_s_);                                                                \
        }                                                                                \
    } while (0)

/* ---- runner ------------------------------------------------------------------ */

static inline void nlt_on_alarm(int sig)
{
    const char *name = nlt_current_name;
    static const char msg1[] = "\nFAIL (watchdog: test did not finish within the time limit): ";
    ssize_t w;
    (void)sig;
    w = write(STDOUT_FILENO, msg1, sizeof(msg1) - 1);
    w = write(STDOUT_FILENO, name, strlen(name));
    w = write(STDOUT_FILENO, "\n", 1);
    (void)w;
    _exit(3);
}

/* Runs one test; REQUIRE's longjmp lands here. setjmp lives in a function of its own,
 * with no local variable that changes between setjmp and longjmp: such variables are
 * indeterminate after the jump (C99 7.13.2.1), which gcc's -Wclobbered reports at -O2
 * and above when the loop counters of nlt_main share setjmp's frame. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void nlt_run_guarded(nlt_fn fn)
{
    if (setjmp(nlt_abort_jmp) == 0)
        fn();
}

static inline int nlt_main(int argc, char **argv, const nlt_test *tests, size_t count)
{
    size_t i;
    int passed = 0, failed = 0;
    const char *filter = argc > 1 ? argv[1] : NULL;
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = nlt_on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (i = 0; i < count; i++) {
        double t0;
        int failures;
        if (filter != NULL && strstr(tests[i].name, filter) == NULL)
            continue;
        pthread_mutex_lock(&nlt_lock);
        nlt_current_failures = 0;
        nlt_current_name = tests[i].name;
        pthread_mutex_unlock(&nlt_lock);
        printf("RUN  %s\n", tests[i].name);
        fflush(stdout);
        alarm(NLT_TEST_TIMEOUT);
        t0 = now_ms();
        nlt_run_guarded(tests[i].fn);
        alarm(0);
        pthread_mutex_lock(&nlt_lock);
        failures = nlt_current_failures;
        pthread_mutex_unlock(&nlt_lock);
        if (failures == 0) {
            passed++;
            printf("ok   %s (%.0f ms)\n", tests[i].name, now_ms() - t0);
        } else {
            failed++;
            printf("FAIL %s (%d failed checks, %.0f ms)\n", tests[i].name, failures,
                   now_ms() - t0);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    fflush(stdout);
    return failed == 0 ? 0 : 1;
}

/* ---- helpers shared by several test files ------------------------------------------ */

/* A key no other test (or run) uses, for the server's per-key counters. Caller frees. */
static inline char *unique_key(const char *what)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    static int serial = 0;
    int n;
    pthread_mutex_lock(&m);
    n = ++serial;
    pthread_mutex_unlock(&m);
    return nlt_format("%s-%ld-%d", what, (long)getpid(), n);
}

/* How many requests the server counted for `key` (/flaky, /auth, and /cache as "cache:<key>"). */
static inline long server_hits(const char *key)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"hits/%s\"}", key);
    long n = -1;
    CHECK_OK(r);
    n = (long)jpath_num(r, "value.hits", -1);
    json_decref(r);
    nl_client_free(c);
    return n;
}

/* A loopback port nobody listens on (bound, then closed). */
static inline int closed_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int port = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port ? port : 1;
}

#endif /* NETLAYER_TEST_HARNESS_H */
