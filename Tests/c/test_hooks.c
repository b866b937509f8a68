/*
 * test_hooks.c — hooks (ADAPT, RETRY, RESOLVE_ERROR, LOG), the retry policy,
 * deadlines, the error resolver and log redaction, against the loopback test
 * server (run through Tests/server/with_server.py).
 *
 * Server endpoints used: /flaky/<key>, /hits/<key>, /auth/<key>, /token/rotate,
 * /error-json/<status>, /echo, /json, /status/<code>, /delay/<ms>.
 *
 * Under valgrind (NETLAYER_TEST_SLOW set) counts shrink and timing bounds widen.
 * Run with "--log-child" this binary is the child process of the stderr logging
 * test instead.
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 90
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#define CANARY "CANARY-5f3a9"

static const char *g_argv0 = NULL;

/* ---- helpers ------------------------------------------------------------------------ */

static int slow_mode(void)
{
    const char *s = getenv("NETLAYER_TEST_SLOW");
    return s != NULL && *s != '\0';
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1.0e9;
}

/* base_url() with "user:CANARY@" inserted after "http://". */
static char *base_url_with_userinfo(void)
{
    const char *b = base_url();
    REQUIRE(strncmp(b, "http://", 7) == 0);
    return nlt_format("http://user:%s@%s", CANARY, b + 7);
}

static int get_int(json_t *o, const char *key, long long *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return 0;
    *out = json_integer_value(v);
    return 1;
}

/* Waits for asynchronous requests; each request gets its own slot as user_data. */
typedef struct async_wait async_wait;
typedef struct async_slot {
    async_wait *w;
    json_t *result;
} async_slot;
struct async_wait {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int remaining;
    async_slot *slots;
    int n;
};

static void async_cb(uint64_t id, const char *result_json, void *user_data)
{
    async_slot *s = (async_slot *)user_data;
    json_t *j = nlt_parse(result_json, "async callback");
    (void)id;
    pthread_mutex_lock(&s->w->m);
    CHECK_MSG(s->result == NULL, "callback ran twice for one request");
    if (s->result == NULL)
        s->result = j;
    else
        json_decref(j);
    s->w->remaining--;
    pthread_cond_broadcast(&s->w->cv);
    pthread_mutex_unlock(&s->w->m);
}

static void async_init(async_wait *w, int n)
{
    int i;
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->remaining = n;
    w->n = n;
    w->slots = (async_slot *)calloc((size_t)n, sizeof(async_slot));
    for (i = 0; i < n; i++)
        w->slots[i].w = w;
}

static int async_done(async_wait *w)
{
    int done;
    pthread_mutex_lock(&w->m);
    done = w->remaining == 0;
    pthread_mutex_unlock(&w->m);
    return done;
}

/* Waits until every callback ran; 1 on success, 0 after `seconds`. */
static int async_wait_all(async_wait *w, double seconds)
{
    double end = mono_s() + seconds;
    int ok;
    pthread_mutex_lock(&w->m);
    while (w->remaining > 0 && mono_s() < end) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->m, &ts);
    }
    ok = w->remaining == 0;
    pthread_mutex_unlock(&w->m);
    return ok;
}

static void async_destroy(async_wait *w)
{
    int i;
    for (i = 0; i < w->n; i++)
        json_decref(w->slots[i].result);
    free(w->slots);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->m);
}

/* ---- hooks used by several tests ---------------------------------------------------- */

/* Replies with a fixed document (may be NULL: no reply), counts calls, keeps the
 * last event. */
typedef struct fixed_hook {
    pthread_mutex_t m;
    const char *reply;
    int calls;
    int in_hook;
    int overlapped;
    json_t *last_event;
    json_t *events; /* array of every event */
} fixed_hook;

static void fixed_hook_init(fixed_hook *h, const char *reply)
{
    pthread_mutex_init(&h->m, NULL);
    h->reply = reply;
    h->calls = 0;
    h->in_hook = 0;
    h->overlapped = 0;
    h->last_event = NULL;
    h->events = json_array();
}

static void fixed_hook_destroy(fixed_hook *h)
{
    json_decref(h->last_event);
    json_decref(h->events);
    pthread_mutex_destroy(&h->m);
}

static void fixed_hook_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    fixed_hook *h = (fixed_hook *)user_data;
    json_t *ev = nlt_parse(event_json, "hook event");
    pthread_mutex_lock(&h->m);
    h->calls++;
    if (h->in_hook++ > 0)
        h->overlapped++;
    if (ev != NULL) {
        json_decref(h->last_event);
        h->last_event = json_incref(ev);
        json_array_append(h->events, ev);
    }
    pthread_mutex_unlock(&h->m);
    json_decref(ev);
    if (h->reply != NULL)
        nl_reply_set(reply, h->reply);
    pthread_mutex_lock(&h->m);
    h->in_hook--;
    pthread_mutex_unlock(&h->m);
}

/* ---- ADAPT -------------------------------------------------------------------------- */

static void test_adapt_hook_adds_header_the_server_sees(void)
{
    nl_client *c = client_for(NULL);
    fixed_hook h;
    json_t *r;
    long long v;
    fixed_hook_init(&h, "{\"headers\": {\"X-Adapted\": \"yes\"}}");
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"echo\", \"headers\": {\"X-Mine\": \"1\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-adapted"), "yes");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-mine"), "1");
    CHECK_INT_EQ(h.calls, 1);
    /* the event */
    CHECK(get_int(h.last_event, "id", &v) && v > 0);
    CHECK(get_int(h.last_event, "attempt", &v) && v == 1);
    CHECK_STR_EQ(jpath_str(h.last_event, "method"), "GET");
    CHECK(jpath_str(h.last_event, "url") != NULL && strstr(jpath_str(h.last_event, "url"), "/echo") != NULL);
    CHECK(json_is_object(jpath(h.last_event, "headers")));
    if (!result_ok(r) || h.calls != 1)
        nlt_dump("adapt event", h.last_event);
    json_decref(r);
    nl_client_free(c);
    fixed_hook_destroy(&h);
}

/* Counts hook calls, and those made on the thread that called into the library. */
typedef struct thread_probe {
    pthread_t caller;
    pthread_mutex_t m;
    int calls;
    int on_caller;
} thread_probe;

static void thread_probe_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    thread_probe *p = (thread_probe *)user_data;
    (void)event_json;
    (void)reply;
    pthread_mutex_lock(&p->m);
    p->calls++;
    if (pthread_equal(pthread_self(), p->caller))
        p->on_caller++;
    pthread_mutex_unlock(&p->m);
}

/* Contract section 6: a hook runs on a library thread. The first attempt's ADAPT and
 * LOG events come while a request starts, so they must not run inside nl_request,
 * nl_request_batch or nl_request_async on the caller's own thread. */
static void test_hooks_never_run_on_the_calling_thread(void)
{
    nl_client *c = client_for("\"log\": {\"level\": \"debug\"}");
    thread_probe p;
    async_wait w;
    json_t *r;
    char *text;
    p.caller = pthread_self();
    pthread_mutex_init(&p.m, NULL);
    p.calls = 0;
    p.on_caller = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, thread_probe_fn, &p), 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, thread_probe_fn, &p), 0);
    r = request_doc(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    text = nl_request_batch(c, "[{\"path\": \"json\"}, {\"path\": \"echo\"}]");
    r = nlt_parse(text, "nl_request_batch");
    nl_free(text);
    CHECK(json_is_array(r) && result_ok(json_array_get(r, 0)) && result_ok(json_array_get(r, 1)));
    json_decref(r);
    async_init(&w, 1);
    CHECK(nl_request_async(c, "{\"path\": \"json\"}", async_cb, &w.slots[0]) != 0);
    CHECK(async_wait_all(&w, 10));
    CHECK_OK(w.slots[0].result);
    async_destroy(&w);
    nl_client_free(c);
    /* 4 requests: an ADAPT and at least a request and a response LOG event each */
    CHECK_MSG(p.calls >= 12, "only %d hook calls", p.calls);
    CHECK_MSG(p.on_caller == 0, "%d of %d hook calls ran on the calling thread", p.on_caller, p.calls);
    pthread_mutex_destroy(&p.m);
}

static void test_adapt_hook_runs_before_every_attempt(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    char *key = unique_key("adapt-every");
    fixed_hook h;
    json_t *r;
    size_t i;
    fixed_hook_init(&h, NULL);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 2}}", key);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 3);
    CHECK_INT_EQ(h.calls, 3);
    for (i = 0; i < json_array_size(h.events); i++)
        CHECK_INT_EQ(jpath_num(json_array_get(h.events, i), "attempt", -1), (long long)i + 1);
    json_decref(r);
    nl_client_free(c);
    fixed_hook_destroy(&h);
    free(key);
}

/* Cancels the attempts after the first (the event's "attempt" is 2 or more). */
static void cancel_retries_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    json_t *ev = nlt_parse(event_json, "hook event");
    (void)user_data;
    if (ev != NULL && jpath_num(ev, "attempt", 0) >= 2)
        nl_reply_set(reply, "{\"cancel\": true}");
    json_decref(ev);
}

static void test_an_attempt_the_adapt_hook_cancels_is_not_counted(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    char *key = unique_key("adapt-count");
    json_t *r;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, cancel_retries_fn, NULL), 0);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 5}}", key);
    CHECK_KIND(r, "cancelled");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
    CHECK_INT_EQ(server_hits(key), 1);
    json_decref(r);
    nl_client_free(c);
    free(key);
}

static void test_adapt_cancel_yields_cancelled_and_sends_nothing(void)
{
    nl_client *c = client_for(NULL);
    char *key = unique_key("adapt-cancel");
    fixed_hook h;
    json_t *r;
    fixed_hook_init(&h, "{\"cancel\": true}");
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"flaky/%s\"}", key);
    CHECK_KIND(r, "cancelled");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 0);  /* the requests sent */
    json_decref(r);
    CHECK_INT_EQ(server_hits(key), 0);
    nl_client_free(c);
    fixed_hook_destroy(&h);
    free(key);
}

static void test_adapt_invalid_reply_is_invalid_request_and_next_request_works(void)
{
    static const char *bad[] = {
        "{oops",                          /* not JSON */
        "[1, 2]",                         /* not an object */
        "{\"headers\": 5}",               /* wrong shape */
        "{\"headers\": {\"X\": 1}}",      /* header value not a string */
        "{\"nosuchkey\": true}",          /* unknown key */
        "{\"headers\": {\"X\": \"a\\r\\nInjected: 1\"}}", /* CR LF in a value */
    };
    nl_client *c = client_for(NULL);
    size_t i;
    json_t *r;
    for (i = 0; i < NLT_COUNT(bad); i++) {
        fixed_hook h;
        fixed_hook_init(&h, bad[i]);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, fixed_hook_fn, &h), 0);
        r = request_json(c, "{\"path\": \"echo\"}");
        CHECK_KIND(r, "invalid_request");
        if (strcmp(error_kind(r), "invalid_request") != 0)
            nlt_note("ADAPT reply %s was accepted", bad[i]);
        json_decref(r);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL), 0);
        fixed_hook_destroy(&h);
        /* the next request, without the hook, works */
        r = request_json(c, "{\"path\": \"echo\"}");
        CHECK_OK(r);
        CHECK(jpath_str(r, "value.headers.injected") == NULL);
        json_decref(r);
    }
    nl_client_free(c);
}

/* ADAPT hook that adds a header and yields a little, to stay busy while being toggled. */
static void adapt_slow_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    fixed_hook *h = (fixed_hook *)user_data;
    (void)event_json;
    pthread_mutex_lock(&h->m);
    h->calls++;
    pthread_mutex_unlock(&h->m);
    sleep_ms(1);
    nl_reply_set(reply, "{\"headers\": {\"X-Toggled\": \"1\"}}");
}

static void test_hooks_set_and_removed_while_requests_in_flight_do_not_crash(void)
{
    int n = slow_mode() ? 12 : 60;
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    char *prefix = unique_key("toggle");
    fixed_hook h, rh;
    async_wait w;
    int i, toggles = 0, ok = 0;
    fixed_hook_init(&h, NULL);
    fixed_hook_init(&rh, NULL);
    async_init(&w, n);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, adapt_slow_fn, &h), 0);
    for (i = 0; i < n; i++) {
        char *doc = nlt_format("{\"path\": \"flaky/%s-%d\", \"query\": {\"fails\": 1}}", prefix, i);
        CHECK(nl_request_async(c, doc, async_cb, &w.slots[i]) != 0);
        free(doc);
    }
    while (!async_done(&w) && toggles < 100000) {
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, (toggles & 1) ? adapt_slow_fn : NULL, &h), 0);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, (toggles & 2) ? fixed_hook_fn : NULL, &rh), 0);
        toggles++;
        sleep_ms(1);
    }
    CHECK(async_wait_all(&w, 30.0));
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL), 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, NULL, NULL), 0);
    for (i = 0; i < n; i++) {
        if (result_ok(w.slots[i].result))
            ok++;
        else
            CHECK_OK(w.slots[i].result);
    }
    CHECK_INT_EQ(ok, n);
    CHECK(toggles > 0);
    nl_client_free(c);
    async_destroy(&w);
    fixed_hook_destroy(&h);
    fixed_hook_destroy(&rh);
    free(prefix);
}

/* A hook that takes its time and says when it is inside and when it has returned. */
typedef struct {
    atomic_int entered, returned;
    nl_client *client;
    int remove_kind;  /* from inside: remove the hook of this kind (0: none) */
} slow_probe;

static void slow_probe_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    slow_probe *p = user_data;
    (void)event_json; (void)reply;
    atomic_fetch_add(&p->entered, 1);
    sleep_ms(150);
    if (p->remove_kind)  /* meanwhile another thread may be removing it too */
        CHECK_INT_EQ(nl_client_set_hook(p->client, p->remove_kind, NULL, NULL), 0);
    sleep_ms(150);
    atomic_fetch_add(&p->returned, 1);
}

/* Sets `p` (zeroed, removing `remove_kind` from inside when not 0) as c's ADAPT hook
 * and starts one request into `w`; with `until_entered`, returns once the hook's call
 * is running. */
static void start_request_in_slow_probe(nl_client *c, slow_probe *p, int remove_kind, async_wait *w,
                                        int until_entered)
{
    int waited;
    memset(p, 0, sizeof *p);
    p->client = c;
    p->remove_kind = remove_kind;
    async_init(w, 1);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, slow_probe_fn, p), 0);
    CHECK(nl_request_async(c, "{\"path\": \"json\"}", async_cb, &w->slots[0]) != 0);
    if (!until_entered) return;
    for (waited = 0; atomic_load(&p->entered) == 0 && waited < 10000; waited += 1) sleep_ms(1);
    REQUIRE(atomic_load(&p->entered) == 1);
}

static void test_removing_a_hook_waits_for_its_running_call(void)
{
    nl_client *c = client_for(NULL);
    slow_probe *p = malloc(sizeof *p), other;
    async_wait w;
    double t0;
    start_request_in_slow_probe(c, p, 0, &w, 1);
    t0 = now_ms();
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL), 0);
    /* Returned only once the call had: what user_data points to may go now. */
    CHECK_INT_EQ(atomic_load(&p->returned), 1);
    CHECK_MSG(now_ms() - t0 >= 150, "the removal returned after %.0f ms", now_ms() - t0);
    free(p);
    CHECK(async_wait_all(&w, 10.0));
    CHECK_OK(w.slots[0].result);

    async_destroy(&w);

    /* From inside a hook, removing it (or another) does not wait: its own call is
     * running on this very thread, and two hooks removing each other would wait for
     * each other. */
    start_request_in_slow_probe(c, &other, NL_HOOK_ADAPT, &w, 0);
    CHECK(async_wait_all(&w, 10.0));
    CHECK_OK(w.slots[0].result);
    CHECK_INT_EQ(atomic_load(&other.entered), 1);
    CHECK_INT_EQ(atomic_load(&other.returned), 1);
    nl_client_free(c);
    async_destroy(&w);
}

/* A hook that does nothing (its calls are what the tests below exercise). */
static void quiet_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json; (void)reply; (void)user_data;
}

typedef struct {
    nl_client *client;
    slow_probe *probe;
    atomic_int removed;
} remover;

static void *remove_adapt_hook(void *arg)
{
    remover *r = arg;
    CHECK_INT_EQ(nl_client_set_hook(r->client, NL_HOOK_ADAPT, NULL, NULL), 0);
    atomic_store(&r->removed, 1);
    return NULL;
}

static void test_a_hook_removing_itself_while_another_thread_removes_it(void)
{
    /* The removal on this thread waits for the call; the call, removing its own hook
     * from inside, must not wait for the lock that removal holds. */
    nl_client *c = client_for(NULL);
    slow_probe p;
    async_wait w;
    start_request_in_slow_probe(c, &p, NL_HOOK_ADAPT, &w, 1);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL), 0);
    CHECK_INT_EQ(atomic_load(&p.returned), 1);
    CHECK(async_wait_all(&w, 10.0));
    CHECK_OK(w.slots[0].result);
    nl_client_free(c);
    async_destroy(&w);
}

static void test_a_fork_while_a_removal_waits_leaves_the_child_able_to_set_hooks(void)
{
    nl_client *c = client_for(NULL);
    slow_probe p;
    async_wait w;
    remover r;
    pthread_t thread;
    pid_t child;
    int status = 0;
    SKIP_UNDER_TSAN();
    memset(&r, 0, sizeof r);
    r.client = c;
    start_request_in_slow_probe(c, &p, 0, &w, 1);
    REQUIRE(pthread_create(&thread, NULL, remove_adapt_hook, &r) == 0);
    sleep_ms(50);  /* the removal now waits for the running call */
    child = fork();
    if (child == 0) {
        /* The parent's waiting thread does not exist here: setting hooks must not wait
         * for it, nor for the call it waited for. */
        alarm(10);
        nl_client_set_hook(c, NL_HOOK_LOG, quiet_hook, NULL);
        nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL);
        nl_client_set_hook(c, NL_HOOK_LOG, NULL, NULL);
        /* Gone without an exit of its own: what the parent's threads held in flight is
         * unreachable here, and valgrind would count it as lost at the child's exit. */
        execl("/bin/true", "true", (char *)NULL);
        _exit(0);
    }
    REQUIRE(child > 0);
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child ended with status 0x%x (a hang ends it by SIGALRM)", status);
    pthread_join(thread, NULL);
    CHECK_INT_EQ(atomic_load(&r.removed), 1);
    CHECK(async_wait_all(&w, 10.0));
    nl_client_free(c);
    async_destroy(&w);
}

typedef struct {
    nl_client *client;
    atomic_int stop, toggles;
} hook_toggler;

static void *toggle_stream_hook(void *arg)
{
    hook_toggler *t = arg;
    while (!atomic_load(&t->stop)) {
        nl_client_set_hook(t->client, NL_HOOK_STREAM, quiet_hook, NULL);
        nl_client_set_hook(t->client, NL_HOOK_STREAM, NULL, NULL);
        atomic_fetch_add(&t->toggles, 1);
        if (slow_mode())  /* valgrind runs one thread at a time: leave the others room */
            sleep_ms(1);
    }
    return NULL;
}

static void test_hooks_toggled_beside_a_log_hook_while_requests_complete(void)
{
    /* Setting a hook moves requests onto the event loop: a completion that waits for
     * its LOG events must not queue that wait to the loop it runs on. */
    int n = slow_mode() ? 100 : 2000;
    nl_client *c = client_for("\"log\": {\"level\": \"info\"}");
    hook_toggler t;
    pthread_t thread;
    async_wait w;
    int i, ok = 0;
    memset(&t, 0, sizeof t);
    t.client = c;
    async_init(&w, n);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, quiet_hook, NULL), 0);
    REQUIRE(pthread_create(&thread, NULL, toggle_stream_hook, &t) == 0);
    for (i = 0; i < n; i++) {
        CHECK(nl_request_async(c, "{\"path\": \"json\"}", async_cb, &w.slots[i]) != 0);
        if (i % 20 == 19) sleep_ms(5);
    }
    CHECK_MSG(async_wait_all(&w, 30.0), "requests stopped completing while hooks were toggled");
    atomic_store(&t.stop, 1);
    pthread_join(thread, NULL);
    for (i = 0; i < n; i++) ok += result_ok(w.slots[i].result);
    CHECK_INT_EQ(ok, n);
    CHECK(atomic_load(&t.toggles) > 0);
    nl_client_set_hook(c, NL_HOOK_LOG, NULL, NULL);
    nl_client_free(c);
    async_destroy(&w);
}

static void test_set_hook_rejects_bad_arguments(void)
{
    nl_client *c = client_for(NULL);
    fixed_hook h;
    fixed_hook_init(&h, NULL);
    CHECK_INT_EQ(nl_client_set_hook(NULL, NL_HOOK_ADAPT, fixed_hook_fn, &h), -1);
    CHECK_INT_EQ(nl_client_set_hook(c, 0, fixed_hook_fn, &h), -1);
    CHECK_INT_EQ(nl_client_set_hook(c, 99, fixed_hook_fn, &h), -1);
    CHECK_INT_EQ(nl_client_set_hook(c, -1, fixed_hook_fn, &h), -1);
    /* removing a hook that was never set is fine */
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, NULL, NULL), 0);
    nl_reply_set(NULL, "{}"); /* no-op */
    nl_client_free(c);
    fixed_hook_destroy(&h);
}

/* ---- retry policy ------------------------------------------------------------------- */

static void test_retry_503_twice_then_200_succeeds_on_third_attempt(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.05}");
    char *key = unique_key("retry3");
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 2, \"status\": 503}}", key);
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 3);
    CHECK_INT_EQ(jpath_num(r, "value.hits", -1), 3);
    json_decref(r);
    CHECK_INT_EQ(server_hits(key), 3);
    nl_client_free(c);
    free(key);
}

static void test_retry_backoff_is_honoured_between_attempts(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.05}");
    char *key = unique_key("backoff");
    double t0 = mono_s(), dt;
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 2}}", key);
    dt = mono_s() - t0;
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 3);
    /* delays in [0.025, 0.05] then [0.05, 0.1] */
    CHECK_MSG(dt >= 0.05 * 0.5 + 0.1 * 0.5, "took %.3f s", dt);
    CHECK_MSG(dt < (slow_mode() ? 5.0 : 1.0), "took %.3f s", dt);
    json_decref(r);
    nl_client_free(c);
    free(key);
}

static void test_retry_after_seconds_delays_the_next_attempt(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 2, \"backoff\": 0.01}");
    char *key = unique_key("retry-after");
    double t0 = mono_s(), dt;
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 1, \"retry_after\": \"1\"}}", key);
    dt = mono_s() - t0;
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 2);
    CHECK_MSG(dt >= 1.0, "took %.3f s, Retry-After: 1 asks for at least 1 s", dt);
    CHECK_MSG(dt < (slow_mode() ? 6.0 : 3.0), "took %.3f s", dt);
    json_decref(r);
    nl_client_free(c);
    free(key);
}

static void test_retry_after_is_capped_by_max_backoff(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 2, \"backoff\": 0.01, \"maxBackoff\": 0.2}");
    char *key = unique_key("retry-after-cap");
    double t0 = mono_s(), dt;
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 1, \"retry_after\": \"30\"}}", key);
    dt = mono_s() - t0;
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 2);
    CHECK_MSG(dt < (slow_mode() ? 5.0 : 2.0), "took %.3f s, maxBackoff 0.2 caps Retry-After: 30", dt);
    json_decref(r);
    nl_client_free(c);
    free(key);
}

static void test_post_is_attempted_once_unless_retry_methods_lists_it(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    char *key = unique_key("post-once");
    char *key2 = unique_key("post-listed");
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"method\": \"POST\", \"body\": {\"a\": 1},"
                                " \"query\": {\"fails\": 5}}", key);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 503);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
    json_decref(r);
    CHECK_INT_EQ(server_hits(key), 1);

    r = request_json(c, "{\"path\": \"flaky/%s\", \"method\": \"POST\", \"body\": {\"a\": 1},"
                        " \"query\": {\"fails\": 2}, \"retry\": {\"methods\": [\"POST\"]}}", key2);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 3);
    json_decref(r);
    CHECK_INT_EQ(server_hits(key2), 3);
    nl_client_free(c);
    free(key);
    free(key2);
}

static void test_status_not_in_on_status_is_not_retried(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    char *key = unique_key("no-retry-404");
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 5, \"status\": 404}}", key);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
    json_decref(r);
    CHECK_INT_EQ(server_hits(key), 1);
    nl_client_free(c);
    free(key);
}

static void test_connection_refused_is_retried_and_reports_attempts(void)
{
    char *cfg = nlt_format("{\"baseURL\": \"http://127.0.0.1:%d/\","
                           " \"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}}", closed_port());
    nl_client *c = nl_client_new(cfg, NULL);
    json_t *r;
    free(cfg);
    REQUIRE(c != NULL);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "not_connected");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 3);
    json_decref(r);
    nl_client_free(c);
}

/* ---- deadline ----------------------------------------------------------------------- */

static void test_deadline_bounds_all_attempts_and_backoff(void)
{
    nl_client *c = client_for(NULL);
    char *key = unique_key("deadline");
    /* Attempts run while the next back-off ends before the deadline; then the last
     * error comes at once rather than at the deadline, which no attempt could use. */
    double lo = 0.25, hi = slow_mode() ? 3.0 : 1.2;
    double t0 = mono_s(), dt;
    json_t *r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 100},"
                                " \"retry\": {\"maxAttempts\": 50, \"backoff\": 0.2}, \"deadline\": 1.0}", key);
    dt = mono_s() - t0;
    CHECK(!result_ok(r));
    CHECK_MSG(strcmp(error_kind(r), "status") == 0 || strcmp(error_kind(r), "timeout") == 0,
              "kind %s, expected the last error (status) or timeout", error_kind(r));
    CHECK_MSG(dt >= lo && dt <= hi, "result after %.3f s, expected within [%.1f, %.1f] s", dt, lo, hi);
    CHECK(jpath_num(r, "attempts", -1) >= 2 && jpath_num(r, "attempts", -1) < 50);
    nlt_note("deadline 1.0: %.3f s, %d attempts, kind %s", dt, (int)jpath_num(r, "attempts", -1),
             error_kind(r));
    json_decref(r);
    nl_client_free(c);
    free(key);
}

static void test_deadline_clips_the_attempt_timeout(void)
{
    nl_client *c = client_for("\"deadline\": 0.5, \"timeout\": 10");
    double hi = slow_mode() ? 3.0 : 1.0;
    double t0 = mono_s(), dt;
    json_t *r = request_json(c, "{\"path\": \"delay/5000\"}");
    dt = mono_s() - t0;
    CHECK_KIND(r, "timeout");
    CHECK_MSG(dt >= 0.4 && dt <= hi, "result after %.3f s, deadline 0.5", dt);
    json_decref(r);
    nl_client_free(c);
}

/* ---- RETRY hook --------------------------------------------------------------------- */

static void test_retry_hook_always_true_is_stopped_by_max_attempts(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 4, \"backoff\": 0.01}");
    char *key = unique_key("retry-hook-true");
    fixed_hook h;
    json_t *r, *ev;
    size_t i;
    fixed_hook_init(&h, "{\"retry\": true, \"delay\": 0.01}");
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, fixed_hook_fn, &h), 0);
    /* 404 is not in onStatus: only the hook makes it retry */
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 100, \"status\": 404}}", key);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(result_status(r), 404);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 4);
    CHECK_INT_EQ(h.calls, 3); /* only while attempt < maxAttempts */
    for (i = 0; i < json_array_size(h.events); i++)
        CHECK_INT_EQ(jpath_num(json_array_get(h.events, i), "attempt", -1), (long long)i + 1);
    ev = h.last_event;
    CHECK_STR_EQ(jpath_str(ev, "method"), "GET");
    CHECK(jpath_str(ev, "url") != NULL && strstr(jpath_str(ev, "url"), key) != NULL);
    CHECK(json_is_integer(json_object_get(ev, "id")));
    CHECK_STR_EQ(jpath_str(ev, "error.kind"), "status");
    CHECK_INT_EQ(jpath_num(ev, "error.status", -1), 404);
    CHECK(jpath_str(ev, "error.body") != NULL && strstr(jpath_str(ev, "error.body"), "flaky") != NULL);
    CHECK(json_is_string(jpath(ev, "error.message")));
    CHECK(json_is_object(jpath(ev, "error.headers")));
    json_decref(r);
    CHECK_INT_EQ(server_hits(key), 4);
    nl_client_free(c);
    fixed_hook_destroy(&h);
    free(key);
}

static void test_retry_hook_false_stops_retries_the_policy_would_make(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 5, \"backoff\": 0.01}");
    char *key = unique_key("retry-hook-false");
    fixed_hook h;
    json_t *r;
    fixed_hook_init(&h, "{\"retry\": false}");
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 100}}", key);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
    CHECK_INT_EQ(h.calls, 1);
    json_decref(r);
    CHECK_INT_EQ(server_hits(key), 1);
    nl_client_free(c);
    fixed_hook_destroy(&h);
    free(key);
}

static void test_retry_hook_without_reply_leaves_it_to_the_policy(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    char *key = unique_key("retry-hook-none");
    fixed_hook h;
    json_t *r;
    fixed_hook_init(&h, NULL);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 2}}", key);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 3);
    CHECK_INT_EQ(h.calls, 2);
    json_decref(r);
    nl_client_free(c);
    fixed_hook_destroy(&h);
    free(key);
}

static void test_malformed_retry_and_resolve_replies_fail_only_that_request(void)
{
    static const char *bad_retry[] = {"{oops", "{\"retry\": \"yes\"}", "{\"retry\": true, \"delay\": \"x\"}",
                                      "{\"retry\": true, \"extra\": 1}", "7"};
    static const char *bad_resolve[] = {"{oops", "[1]", "{\"code\": 5}", "{\"code\": \"c\", \"bogus\": 1}"};
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    size_t i;
    json_t *r;
    for (i = 0; i < NLT_COUNT(bad_retry); i++) {
        fixed_hook h;
        char *key = unique_key("bad-retry");
        fixed_hook_init(&h, bad_retry[i]);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, fixed_hook_fn, &h), 0);
        r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 1}}", key);
        CHECK_KIND(r, "invalid_request");
        if (strcmp(error_kind(r), "invalid_request") != 0)
            nlt_note("RETRY reply %s was accepted (hook called %d time(s), attempts %d)", bad_retry[i],
                     h.calls, (int)jpath_num(r, "attempts", -1));
        json_decref(r);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, NULL, NULL), 0);
        fixed_hook_destroy(&h);
        free(key);
    }
    for (i = 0; i < NLT_COUNT(bad_resolve); i++) {
        fixed_hook h;
        fixed_hook_init(&h, bad_resolve[i]);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, fixed_hook_fn, &h), 0);
        r = request_json(c, "{\"path\": \"status/401\"}");
        CHECK_KIND(r, "invalid_request");
        if (strcmp(error_kind(r), "invalid_request") != 0)
            nlt_note("RESOLVE_ERROR reply %s was accepted", bad_resolve[i]);
        json_decref(r);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, NULL, NULL), 0);
        fixed_hook_destroy(&h);
    }
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

/* ---- token refresh (ADAPT + RETRY) -------------------------------------------------- */

#define TOKEN_MAP_SIZE 1024

typedef struct token_state {
    pthread_mutex_t m;
    char token[64];
    int refreshes;
    int retry_calls;
    int retry_in_hook;
    int retry_overlaps;
    int saw_401;
    int same_client_checked;
    char same_client_kind[64];
    nl_client *client;  /* the client the hooks belong to */
    nl_client *refresher; /* a separate client for /token/rotate */
    struct {
        uint64_t id;
        char token[64];
    } sent[TOKEN_MAP_SIZE];
    int nsent;
} token_state;

static void token_adapt(const char *event_json, nl_reply *reply, void *user_data)
{
    token_state *s = (token_state *)user_data;
    json_t *ev = nlt_parse(event_json, "ADAPT event");
    json_t *id = json_object_get(ev, "id");
    char tok[64];
    char *doc;
    int i;
    pthread_mutex_lock(&s->m);
    snprintf(tok, sizeof(tok), "%s", s->token);
    if (json_is_integer(id)) {
        uint64_t v = (uint64_t)json_integer_value(id);
        for (i = 0; i < s->nsent && s->sent[i].id != v; i++) {
        }
        if (i < TOKEN_MAP_SIZE) {
            s->sent[i].id = v;
            snprintf(s->sent[i].token, sizeof(s->sent[i].token), "%s", tok);
            if (i == s->nsent)
                s->nsent++;
        }
    } else {
        CHECK_MSG(0, "ADAPT event without an integer id: %s", event_json);
    }
    pthread_mutex_unlock(&s->m);
    json_decref(ev);
    doc = nlt_format("{\"headers\": {\"Authorization\": \"Bearer %s\"}}", tok);
    nl_reply_set(reply, doc);
    free(doc);
}

static void token_retry(const char *event_json, nl_reply *reply, void *user_data)
{
    token_state *s = (token_state *)user_data;
    json_t *ev = nlt_parse(event_json, "RETRY event");
    json_t *id = json_object_get(ev, "id");
    const char *sent = NULL;
    int i, overlap;
    int check_same = 0;

    pthread_mutex_lock(&s->m);
    overlap = s->retry_in_hook++ > 0;
    if (overlap)
        s->retry_overlaps++;
    s->retry_calls++;
    if (!s->same_client_checked) {
        s->same_client_checked = 1;
        check_same = 1;
    }
    pthread_mutex_unlock(&s->m);
    CHECK_MSG(!overlap, "two RETRY hook calls of one client ran at once");

    if (check_same) {
        /* a blocking call on the same client from inside its hook is refused */
        char *text = nl_request(s->client, "{\"path\": \"json\"}");
        json_t *r = nlt_parse(text, "nl_request from inside a hook");
        nl_free(text);
        pthread_mutex_lock(&s->m);
        snprintf(s->same_client_kind, sizeof(s->same_client_kind), "%s", r ? error_kind(r) : "(null)");
        pthread_mutex_unlock(&s->m);
        json_decref(r);
    }

    if (jpath_num(ev, "error.status", -1) == 401) {
        pthread_mutex_lock(&s->m);
        s->saw_401++;
        if (json_is_integer(id)) {
            uint64_t v = (uint64_t)json_integer_value(id);
            for (i = 0; i < s->nsent; i++)
                if (s->sent[i].id == v)
                    sent = s->sent[i].token;
        }
        CHECK_MSG(sent != NULL, "RETRY event id not seen by ADAPT: %s", event_json);
        if (sent != NULL && strcmp(sent, s->token) == 0) {
            /* the token that failed is still the current one: refresh it
             * (the lock is held so ADAPT hooks wait for the new token) */
            char *text = nl_request(s->refresher, "{\"path\": \"token/rotate\"}");
            json_t *r = nlt_parse(text, "token/rotate");
            nl_free(text);
            CHECK_OK(r);
            if (jpath_str(r, "value.token") != NULL)
                snprintf(s->token, sizeof(s->token), "%s", jpath_str(r, "value.token"));
            s->refreshes++;
            json_decref(r);
        }
        pthread_mutex_unlock(&s->m);
        nl_reply_set(reply, "{\"retry\": true}");
    }
    json_decref(ev);
    pthread_mutex_lock(&s->m);
    s->retry_in_hook--;
    pthread_mutex_unlock(&s->m);
}

static void test_token_refresh_happens_once_for_concurrent_401s(void)
{
    int n = slow_mode() ? 20 : 50;
    token_state *s = (token_state *)calloc(1, sizeof(token_state));
    char *key = unique_key("auth");
    nl_client *c, *refresher;
    char *docs, *text;
    size_t len = 0, cap;
    json_t *results;
    int i, ok = 0, retried = 0, shown = 0;
    long long total_attempts = 0;

    REQUIRE(s != NULL);
    pthread_mutex_init(&s->m, NULL);
    snprintf(s->token, sizeof(s->token), "stale-token");
    c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}");
    refresher = client_for(NULL);
    s->client = c;
    s->refresher = refresher;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, token_adapt, s), 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, token_retry, s), 0);

    cap = (size_t)n * (strlen(key) + 64) + 16;
    docs = (char *)malloc(cap);
    REQUIRE(docs != NULL);
    len += (size_t)snprintf(docs + len, cap - len, "[");
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(docs + len, cap - len, "%s{\"path\": \"auth/%s\"}", i ? "," : "", key);
    snprintf(docs + len, cap - len, "]");

    text = nl_request_batch(c, docs);
    results = nlt_parse(text, "nl_request_batch");
    nl_free(text);
    free(docs);
    CHECK(json_is_array(results) && json_array_size(results) == (size_t)n);
    for (i = 0; i < (int)json_array_size(results); i++) {
        json_t *r = json_array_get(results, (size_t)i);
        if (result_ok(r))
            ok++;
        else if (shown++ < 3)
            CHECK_OK(r);
        if (jpath_num(r, "attempts", 0) >= 2)
            retried++;
        total_attempts += (long long)jpath_num(r, "attempts", 0);
    }
    CHECK_INT_EQ(ok, n);
    CHECK_INT_EQ(s->refreshes, 1);
    CHECK_INT_EQ(s->retry_overlaps, 0);
    CHECK_MSG(s->saw_401 >= 1 && retried >= 1, "401s seen by the RETRY hook: %d, results retried: %d",
              s->saw_401, retried);
    CHECK_STR_EQ(s->same_client_kind, "invalid_request");
    CHECK_INT_EQ(server_hits(key), total_attempts);
    nlt_note("%d requests: %d retried after a 401, %d RETRY calls, %d refresh(es), %lld attempts",
             n, retried, s->retry_calls, s->refreshes, total_attempts);

    json_decref(results);
    nl_client_free(c);
    nl_client_free(refresher);
    pthread_mutex_destroy(&s->m);
    free(s);
    free(key);
}

/* ---- error resolver ----------------------------------------------------------------- */

static void test_error_resolver_rule_resolves_401_keeping_status_and_body(void)
{
    nl_client *c = client_for("\"errorResolver\": ["
                              "{\"status\": [401], \"code\": \"unauthorized\", \"message\": \"Sign in again\"}]");
    json_t *r = request_json(c, "{\"path\": \"status/401\"}");
    CHECK_KIND(r, "resolved");
    CHECK_STR_EQ(jpath_str(r, "error.code"), "unauthorized");
    CHECK_STR_EQ(error_message(r), "Sign in again");
    CHECK_INT_EQ(jpath_num(r, "error.status", -1), 401);
    CHECK_INT_EQ(result_status(r), 401);
    CHECK(jpath_str(r, "error.body") != NULL && strstr(jpath_str(r, "error.body"), "status 401") != NULL);
    json_decref(r);
    /* a status no rule names stays kind "status"; success is untouched */
    r = request_json(c, "{\"path\": \"status/404\"}");
    CHECK_KIND(r, "status");
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

static void test_error_resolver_range_rule_reads_message_at_key_path(void)
{
    nl_client *c = client_for("\"errorResolver\": ["
                              "{\"status\": [401], \"code\": \"unauthorized\", \"message\": \"Sign in again\"},"
                              "{\"status\": [[500, 599]], \"code\": \"server\", \"messageKeyPath\": \"error.message\","
                              " \"message\": \"fallback\"}]");
    json_t *r = request_json(c, "{\"path\": \"error-json/500\", \"query\": {\"message\": \"boom\"}}");
    CHECK_KIND(r, "resolved");
    CHECK_STR_EQ(jpath_str(r, "error.code"), "server");
    CHECK_STR_EQ(error_message(r), "boom");
    CHECK_INT_EQ(jpath_num(r, "error.status", -1), 500);
    CHECK(jpath_str(r, "error.body") != NULL && strstr(jpath_str(r, "error.body"), "boom") != NULL);
    json_decref(r);
    /* the key path is missing from a non-JSON-error body: the rule's message */
    r = request_json(c, "{\"path\": \"status/502\"}");
    CHECK_KIND(r, "resolved");
    CHECK_STR_EQ(jpath_str(r, "error.code"), "server");
    CHECK_STR_EQ(error_message(r), "fallback");
    json_decref(r);
    nl_client_free(c);
}

static void test_resolve_error_hook_reply_wins_over_rules(void)
{
    nl_client *c = client_for("\"errorResolver\": ["
                              "{\"status\": [401], \"code\": \"unauthorized\", \"message\": \"Sign in again\"}]");
    fixed_hook h;
    json_t *r;
    fixed_hook_init(&h, "{\"code\": \"c1\", \"message\": \"m1\"}");
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"status/401\"}");
    CHECK_KIND(r, "resolved");
    CHECK_STR_EQ(jpath_str(r, "error.code"), "c1");
    CHECK_STR_EQ(error_message(r), "m1");
    CHECK_INT_EQ(jpath_num(r, "error.status", -1), 401);
    CHECK(jpath_str(r, "error.body") != NULL);
    CHECK_INT_EQ(h.calls, 1);
    CHECK_STR_EQ(jpath_str(h.last_event, "kind"), "status");
    CHECK_INT_EQ(jpath_num(h.last_event, "status", -1), 401);
    CHECK(json_is_object(jpath(h.last_event, "headers")));
    json_decref(r);
    /* success never reaches the hook */
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(h.calls, 1);
    json_decref(r);
    nl_client_free(c);
    fixed_hook_destroy(&h);
}

static void test_resolve_error_hook_without_reply_falls_back_to_rules(void)
{
    nl_client *c = client_for("\"errorResolver\": ["
                              "{\"status\": [401], \"code\": \"unauthorized\", \"message\": \"Sign in again\"}]");
    fixed_hook h;
    json_t *r;
    fixed_hook_init(&h, NULL);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, fixed_hook_fn, &h), 0);
    r = request_json(c, "{\"path\": \"status/401\"}");
    CHECK_KIND(r, "resolved");
    CHECK_STR_EQ(jpath_str(r, "error.code"), "unauthorized");
    CHECK_INT_EQ(h.calls, 1);
    json_decref(r);
    nl_client_free(c);
    fixed_hook_destroy(&h);
}

/* ---- logging ------------------------------------------------------------------------ */

typedef struct log_state {
    pthread_mutex_t m;
    json_t *events;
    int raw_canary; /* raw event texts containing the canary */
    int not_json;
} log_state;

static void log_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    log_state *s = (log_state *)user_data;
    json_error_t err;
    json_t *ev = json_loads(event_json, 0, &err);
    (void)reply;
    pthread_mutex_lock(&s->m);
    if (strstr(event_json, CANARY) != NULL) {
        s->raw_canary++;
        CHECK_MSG(0, "log event leaks the secret: %.600s", event_json);
    }
    if (ev == NULL)
        s->not_json++;
    else
        json_array_append_new(s->events, ev);
    pthread_mutex_unlock(&s->m);
}

static void adapt_proxy_auth(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json;
    (void)user_data;
    nl_reply_set(reply, "{\"headers\": {\"Proxy-Authorization\": \"Basic " CANARY "\"}}");
}

/* Requests a document and checks the whole result text never shows the canary. */
static json_t *request_no_canary(nl_client *c, const char *doc)
{
    char *text = nl_request(c, doc);
    json_t *r = nlt_parse(text, "nl_request");
    CHECK_MSG(text == NULL || strstr(text, CANARY) == NULL, "result leaks the secret: %.800s", text);
    nl_free(text);
    return r;
}

static void test_log_events_redact_secrets_and_have_expected_fields(void)
{
    log_state s;
    char *base = base_url_with_userinfo();
    char *cfg = nlt_format("{\"baseURL\": \"%s\", \"headers\": {\"Authorization\": \"Bearer %s\"},"
                           " \"log\": {\"level\": \"debug\", \"redact\": [\"X-Secret\"]},"
                           " \"retry\": {\"maxAttempts\": 2, \"backoff\": 0.01}}", base, CANARY);
    char *cfg_refused = nlt_format("{\"baseURL\": \"http://user:%s@127.0.0.1:%d/\","
                                   " \"headers\": {\"Authorization\": \"Bearer %s\"},"
                                   " \"log\": {\"level\": \"debug\"}}", CANARY, closed_port(), CANARY);
    char *key = unique_key("log-flaky");
    char *doc;
    nl_client *c, *c2;
    json_t *r, *ev;
    size_t i;
    int n_request = 0, n_response = 0, n_error = 0, n_curl = 0, n_timeout = 0, n_refused = 0;
    int n_404 = 0, n_503 = 0, n_body = 0;

    pthread_mutex_init(&s.m, NULL);
    s.events = json_array();
    s.raw_canary = 0;
    s.not_json = 0;

    c = nl_client_new(cfg, NULL);
    REQUIRE(c != NULL);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, log_hook, &s), 0);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, adapt_proxy_auth, NULL), 0);

    /* success, with a Cookie and an extra redacted header on the endpoint */
    r = request_no_canary(c, "{\"path\": \"json\", \"headers\": {\"Cookie\": \"session=" CANARY "\","
                             " \"X-Secret\": \"" CANARY "\", \"X-Plain\": \"visible\"}}");
    CHECK_OK(r);
    json_decref(r);
    /* 404 */
    r = request_no_canary(c, "{\"path\": \"status/404\", \"headers\": {\"Cookie\": \"a=" CANARY "\"}}");
    CHECK_KIND(r, "status");
    json_decref(r);
    /* a retried 503 that fails twice */
    doc = nlt_format("{\"path\": \"flaky/%s\", \"query\": {\"fails\": 5}}", key);
    r = request_no_canary(c, doc);
    free(doc);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 2);
    json_decref(r);
    /* a timeout */
    r = request_no_canary(c, "{\"path\": \"delay/3000\", \"timeout\": 0.3, \"retry\": {\"maxAttempts\": 1}}");
    CHECK_KIND(r, "timeout");
    json_decref(r);

    /* connection refused, on a client with the secret in its URL and headers */
    c2 = nl_client_new(cfg_refused, NULL);
    REQUIRE(c2 != NULL);
    CHECK_INT_EQ(nl_client_set_hook(c2, NL_HOOK_LOG, log_hook, &s), 0);
    r = request_no_canary(c2, "{\"path\": \"json\", \"headers\": {\"Cookie\": \"k=" CANARY "\"}}");
    CHECK_KIND(r, "not_connected");
    json_decref(r);
    nl_client_free(c2);
    nl_client_free(c);

    CHECK_INT_EQ(s.raw_canary, 0);
    CHECK_INT_EQ(s.not_json, 0);
    for (i = 0; i < json_array_size(s.events); i++) {
        const char *event, *level;
        ev = json_array_get(s.events, i);
        event = jpath_str(ev, "event");
        level = jpath_str(ev, "level");
        CHECK_MSG(level != NULL && (strcmp(level, "error") == 0 || strcmp(level, "info") == 0 ||
                                    strcmp(level, "debug") == 0 || strcmp(level, "warning") == 0),
                  "level %s", level ? level : "(none)");
        CHECK(event != NULL);
        CHECK(json_is_integer(json_object_get(ev, "id")));
        CHECK(json_is_integer(json_object_get(ev, "attempt")));
        if (event == NULL)
            continue;
        if (strcmp(event, "request") == 0) {
            const char *url = jpath_str(ev, "url");
            const char *curl = jpath_str(ev, "curl");
            json_t *h = json_object_get(ev, "headers");
            n_request++;
            CHECK(jpath_str(ev, "method") != NULL);
            CHECK_MSG(url != NULL && strstr(url, "<redacted>") != NULL, "url %s", url ? url : "(none)");
            CHECK(json_is_object(h));
            CHECK_STR_EQ(nlt_header_value(h, "Authorization"), "<redacted>");
            if (nlt_header_value(h, "Cookie") != NULL)
                CHECK_STR_EQ(nlt_header_value(h, "Cookie"), "<redacted>");
            if (nlt_header_value(h, "X-Secret") != NULL)
                CHECK_STR_EQ(nlt_header_value(h, "X-Secret"), "<redacted>");
            if (nlt_header_value(h, "X-Plain") != NULL)
                CHECK_STR_EQ(nlt_header_value(h, "X-Plain"), "visible");
            if (nlt_header_value(h, "Proxy-Authorization") != NULL)
                CHECK_STR_EQ(nlt_header_value(h, "Proxy-Authorization"), "<redacted>");
            if (curl != NULL) {
                n_curl++;
                CHECK_MSG(strncmp(curl, "curl ", 5) == 0, "curl: %s", curl);
                CHECK(strstr(curl, "<redacted>") != NULL);
            }
        } else if (strcmp(event, "response") == 0) {
            long long st = (long long)jpath_num(ev, "status", -1);
            n_response++;
            CHECK(st >= 100);
            CHECK(json_is_object(json_object_get(ev, "headers")));
            CHECK(json_is_number(json_object_get(ev, "elapsedMs")));
            CHECK(json_is_integer(json_object_get(ev, "bodyBytes")));
            if (json_is_string(json_object_get(ev, "body")))
                n_body++;
            if (st == 404)
                n_404++;
            if (st == 503)
                n_503++;
        } else if (strcmp(event, "error") == 0) {
            const char *kind = jpath_str(ev, "kind");
            n_error++;
            CHECK(kind != NULL);
            CHECK(json_is_string(json_object_get(ev, "message")));
            if (kind != NULL && strcmp(kind, "status") == 0) {
                long long st = (long long)jpath_num(ev, "status", -1);
                CHECK(st >= 400);
                if (st == 404)
                    n_404++;
                if (st == 503)
                    n_503++;
            }
            if (kind != NULL && strcmp(kind, "timeout") == 0)
                n_timeout++;
            if (kind != NULL && strcmp(kind, "not_connected") == 0)
                n_refused++;
        }
    }
    /* 1 + 1 + 2 + 1 + 1 attempts */
    CHECK_MSG(n_request == 6, "request events: %d", n_request);
    CHECK_MSG(n_curl == n_request, "curl strings: %d of %d request events", n_curl, n_request);
    /* a status failure may be logged as a response event, an error event or both */
    CHECK_MSG(n_response >= 1, "response events: %d", n_response);
    CHECK_MSG(n_body >= 1, "response events with a body at debug: %d", n_body);
    CHECK_MSG(n_404 >= 1 && n_503 >= 2, "events with status 404: %d, with 503: %d", n_404, n_503);
    CHECK_MSG(n_error >= 3, "error events: %d", n_error);
    CHECK_MSG(n_timeout >= 1 && n_refused >= 1, "timeout errors %d, not_connected errors %d", n_timeout,
              n_refused);
    if (n_request != 6 || n_error < 3 || n_response < 1 || getenv("NLT_DUMP_EVENTS")) {
        for (i = 0; i < json_array_size(s.events); i++)
            nlt_dump("event", json_array_get(s.events, i));
    }

    json_decref(s.events);
    pthread_mutex_destroy(&s.m);
    free(base);
    free(cfg);
    free(cfg_refused);
    free(key);
}

static void test_log_level_error_reports_only_errors(void)
{
    log_state s;
    nl_client *c = client_for("\"log\": {\"level\": \"error\"}");
    json_t *r;
    size_t i;
    int n_error = 0;
    pthread_mutex_init(&s.m, NULL);
    s.events = json_array();
    s.raw_canary = 0;
    s.not_json = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, log_hook, &s), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"status/500\"}");
    CHECK_KIND(r, "status");
    json_decref(r);
    nl_client_free(c);
    for (i = 0; i < json_array_size(s.events); i++) {
        json_t *ev = json_array_get(s.events, i);
        CHECK_STR_EQ(jpath_str(ev, "level"), "error");
        if (jpath_str(ev, "event") && strcmp(jpath_str(ev, "event"), "error") == 0)
            n_error++;
    }
    CHECK_INT_EQ(n_error, 1);
    json_decref(s.events);
    pthread_mutex_destroy(&s.m);
}

/* A completion callback that waits (up to 3 s) for a lock its caller's thread holds
 * while making a blocking call: the call returns after its own LOG events, not after
 * the callback. LOG events have a thread of their own beside the delivery thread. */
static pthread_mutex_t g_app_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_callback_waited_ms = -1;

static void ignore_log_event(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json;
    (void)reply;
    (void)user_data;
}

static void callback_taking_the_app_lock(uint64_t id, const char *result_json, void *user_data)
{
    struct timespec until;
    double started = mono_s();
    (void)id;
    (void)result_json;
    (void)user_data;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    if (pthread_mutex_timedlock(&g_app_lock, &until) == 0)
        pthread_mutex_unlock(&g_app_lock);
    g_callback_waited_ms = (int)((mono_s() - started) * 1000);
}

/* Makes the blocking request `endpoint` on `c` while a completion callback of `c` waits
 * for a lock this thread holds; checks that it returned within 1 s and returns its
 * result (the caller frees it). */
static json_t *blocking_call_beside_a_waiting_callback(nl_client *c, const char *endpoint)
{
    json_t *r;
    double started;
    pthread_mutex_lock(&g_app_lock);
    CHECK(nl_request_async(c, "{\"path\": \"json\"}", callback_taking_the_app_lock, NULL) != 0);
    sleep_ms(300);  /* its callback now waits for the lock this thread holds */
    started = mono_s();
    r = request_json(c, endpoint);
    CHECK_MSG(mono_s() - started < 1.0, "the blocking call waited %.2f s for a completion callback",
              mono_s() - started);
    pthread_mutex_unlock(&g_app_lock);
    return r;
}

static void test_a_log_hook_does_not_make_a_blocking_call_wait_behind_a_completion_callback(void)
{
    nl_client *c = client_for("\"log\": {\"level\": \"info\"}");
    json_t *r;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, ignore_log_event, NULL), 0);
    r = blocking_call_beside_a_waiting_callback(c, "{\"path\": \"json\", \"timeout\": 2}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
    CHECK_MSG(g_callback_waited_ms >= 0 && g_callback_waited_ms < 2500, "the callback waited %d ms for the lock",
              g_callback_waited_ms);
}

/* A RESOLVE_ERROR hook is called for a blocking request's failure on the event thread,
 * not behind a completion callback that waits for a lock the caller holds: the call
 * returns within its timeout. */
static void resolve_with_code(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json;
    (void)user_data;
    nl_reply_set(reply, "{\"code\": \"E_RESOLVED\"}");
}

static void test_a_resolve_error_hook_does_not_make_a_blocking_call_wait_behind_a_completion_callback(void)
{
    nl_client *c = client_for(NULL);
    json_t *r;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, resolve_with_code, NULL), 0);
    r = blocking_call_beside_a_waiting_callback(c, "{\"path\": \"status/500\", \"timeout\": 2}");
    CHECK_STR_EQ(jpath_str(r, "error.kind"), "resolved");
    CHECK_STR_EQ(jpath_str(r, "error.code"), "E_RESOLVED");
    json_decref(r);
    nl_client_free(c);
}

/* A hook set while a blocking request is under way (its caller's thread drives it)
 * still runs on a library thread, where a blocking call of the same client returns
 * invalid_request instead of waiting for itself. */
typedef struct late_hook {
    nl_client *client;
    pthread_t caller;
    pthread_mutex_t m;
    int calls, on_caller;
    char nested_kind[32];
} late_hook;

static void late_adapt_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    late_hook *h = (late_hook *)user_data;
    int first;
    (void)event_json;
    (void)reply;
    pthread_mutex_lock(&h->m);
    first = h->calls++ == 0;
    if (pthread_equal(pthread_self(), h->caller))
        h->on_caller++;
    pthread_mutex_unlock(&h->m);
    if (first) {
        char *text = nl_request(h->client, "{\"path\": \"json\", \"timeout\": 1}");
        json_t *nested = nlt_parse(text, "nl_request inside a hook");
        const char *kind = jpath_str(nested, "error.kind");
        snprintf(h->nested_kind, sizeof(h->nested_kind), "%s", kind ? kind : "(none)");
        json_decref(nested);
        nl_free(text);
    }
}

static void *set_the_late_hook(void *arg)
{
    late_hook *h = (late_hook *)arg;
    sleep_ms(150);  /* the blocking request is in its back-off by now */
    nl_client_set_hook(h->client, NL_HOOK_ADAPT, late_adapt_hook, h);
    return NULL;
}

static void test_a_hook_set_during_a_blocking_request_runs_off_its_thread(void)
{
    late_hook h;
    pthread_t setter;
    json_t *r;
    double started;
    h.client = client_for("\"retry\": {\"maxAttempts\": 6, \"backoff\": 0.1, \"maxBackoff\": 0.1}");
    h.caller = pthread_self();
    pthread_mutex_init(&h.m, NULL);
    h.calls = 0;
    h.on_caller = 0;
    strcpy(h.nested_kind, "(not called)");
    REQUIRE(pthread_create(&setter, NULL, set_the_late_hook, &h) == 0);
    started = mono_s();
    r = request_json(h.client, "{\"path\": \"status/503\", \"timeout\": 5}");
    pthread_join(setter, NULL);
    CHECK_MSG(mono_s() - started < 4.0, "the request took %.2f s", mono_s() - started);
    CHECK_STR_EQ(jpath_str(r, "error.kind"), "status");
    CHECK_MSG(h.calls >= 1, "the hook set during the request was never called");
    CHECK_MSG(h.on_caller == 0, "%d of %d hook calls ran on the requesting thread", h.on_caller, h.calls);
    CHECK_STR_EQ(h.nested_kind, "invalid_request");
    json_decref(r);
    nl_client_free(h.client);
    pthread_mutex_destroy(&h.m);
}

/* Levels of the LOG events one request to `json` produces with `extra` config members
 * while NETLAYER_LOG is `env` (NULL: unset): "" when there are none, else the first
 * letter of each event's level, followed by '+' when it carries the debug level's
 * `curl` line. */
static void env_log_levels(const char *env, const char *extra, char *out, size_t size)
{
    log_state s;
    nl_client *c;
    json_t *r;
    size_t i, n = 0;
    if (env != NULL)
        setenv("NETLAYER_LOG", env, 1);
    else
        unsetenv("NETLAYER_LOG");
    c = client_for(extra);
    pthread_mutex_init(&s.m, NULL);
    s.events = json_array();
    s.raw_canary = 0;
    s.not_json = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, log_hook, &s), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
    for (i = 0; i < json_array_size(s.events) && n + 2 < size; i++) {
        const char *level = jpath_str(json_array_get(s.events, i), "level");
        out[n++] = level ? level[0] : '?';
        if (json_object_get(json_array_get(s.events, i), "curl") != NULL)
            out[n++] = '+';
    }
    out[n] = '\0';
    json_decref(s.events);
    pthread_mutex_destroy(&s.m);
}

static void test_netlayer_log_environment_sets_the_level_of_configs_without_one(void)
{
    char levels[16];
    env_log_levels("debug", NULL, levels, sizeof levels);
    CHECK_MSG(strcmp(levels, "i+i") == 0, "NETLAYER_LOG=debug: events %s, expected a request with its curl line and a response", levels);
    env_log_levels("Info", "\"log\": {\"redact\": [\"X-Key\"]}", levels, sizeof levels);
    CHECK_MSG(strcmp(levels, "ii") == 0, "NETLAYER_LOG=Info with a log key but no level: events %s", levels);
    env_log_levels("debug", "\"log\": {\"level\": \"off\"}", levels, sizeof levels);
    CHECK_MSG(strcmp(levels, "") == 0, "the config's log.level wins over NETLAYER_LOG: events %s", levels);
    env_log_levels("error", NULL, levels, sizeof levels);
    CHECK_MSG(strcmp(levels, "") == 0, "NETLAYER_LOG=error and a success: events %s", levels);
    env_log_levels("loud", NULL, levels, sizeof levels);
    CHECK_MSG(strcmp(levels, "") == 0, "an unknown NETLAYER_LOG is ignored: events %s", levels);
    env_log_levels(NULL, NULL, levels, sizeof levels);
    CHECK_MSG(strcmp(levels, "") == 0, "without NETLAYER_LOG: events %s", levels);
}

/* The child of the stderr test: requests at level debug with no LOG hook. */
static int log_child_main(void)
{
    char *base, *cfg, *cfg_refused;
    nl_client *c, *c2;
    char *text;
    const char *b = getenv("NETLAYER_TEST_URL");
    if (b == NULL || strncmp(b, "http://", 7) != 0)
        return 2;
    base = nlt_format("http://user:%s@%s", CANARY, b + 7);
    cfg = nlt_format("{\"baseURL\": \"%s\", \"headers\": {\"Authorization\": \"Bearer %s\"},"
                     " \"log\": {\"level\": \"debug\"}}", base, CANARY);
    cfg_refused = nlt_format("{\"baseURL\": \"http://user:%s@127.0.0.1:%d/\","
                             " \"log\": {\"level\": \"debug\"}}", CANARY, closed_port());
    c = nl_client_new(cfg, NULL);
    c2 = nl_client_new(cfg_refused, NULL);
    if (c == NULL || c2 == NULL)
        return 3;
    text = nl_request(c, "{\"path\": \"json\", \"headers\": {\"Cookie\": \"s=" CANARY "\"}}");
    nl_free(text);
    text = nl_request(c, "{\"path\": \"status/404\"}");
    nl_free(text);
    text = nl_request(c2, "{\"path\": \"json\"}");
    nl_free(text);
    nl_client_free(c2);
    nl_client_free(c);
    free(base);
    free(cfg);
    free(cfg_refused);
    return 0;
}

static void test_log_without_hook_writes_redacted_json_lines_to_stderr(void)
{
    int fds[2];
    pid_t pid;
    char *out = NULL;
    size_t len = 0, cap = 0;
    int status = 0, lines = 0, json_lines = 0, bad_lines = 0;
    char *line, *save = NULL;
    (void)base_url(); /* aborts when the server is not there */
    REQUIRE(g_argv0 != NULL);
    REQUIRE(pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int devnull;
        dup2(fds[1], STDERR_FILENO);
        devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(g_argv0, g_argv0, "--log-child", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        ssize_t got;
        if (len + 4097 > cap) {
            cap = cap ? cap * 2 : 8192;
            out = (char *)realloc(out, cap);
            REQUIRE(out != NULL);
        }
        got = read(fds[0], out + len, 4096);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fds[0]);
    out[len] = '\0';
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    CHECK_MSG(strstr(out, CANARY) == NULL, "stderr leaks the secret:\n%.3000s", out);
    CHECK(strstr(out, "<redacted>") != NULL);
    for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        json_t *j;
        lines++;
        if (line[0] != '{')
            continue;
        j = json_loads(line, 0, NULL);
        if (j != NULL && json_is_string(json_object_get(j, "event")))
            json_lines++;
        else
            bad_lines++;
        json_decref(j);
    }
    CHECK_MSG(json_lines >= 5, "JSON log lines on stderr: %d of %d lines", json_lines, lines);
    CHECK_INT_EQ(bad_lines, 0);
    free(out);
}

/* An ADAPT hook that signs: it reads the body (base64) and the URL from the event and
 * replies with a signature header, new query items, a new same-origin URL and a new
 * body; another origin is refused unless the config allows it. */
typedef struct { char *last_event; char *reply; } signing_hook;

static void signing_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    signing_hook *h = (signing_hook *)user_data;
    free(h->last_event);
    h->last_event = strdup(event_json);
    if (h->reply) nl_reply_set(reply, h->reply);
}

static void test_adapt_hook_can_sign_query_url_and_body(void)
{
    signing_hook h = { NULL, NULL };
    nl_client *c = client_for(NULL);
    json_t *r, *event;
    char *other;
    REQUIRE(nl_client_set_hook(c, NL_HOOK_ADAPT, signing_fn, &h) == 0);

    h.reply = "{\"headers\": {\"X-Signature\": \"sig-1\"}, \"query\": {\"page\": 2, \"sig\": \"a b\"},"
              " \"body\": \"c2lnbmVk\"}";  /* "signed" */
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"query\": {\"page\": 1}, \"bodyEncoding\": \"text\","
                        " \"body\": \"payload\"}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.query"), "page=2&sig=a%20b");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "signed");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-signature"), "sig-1");
    json_decref(r);
    event = json_loads(h.last_event, 0, NULL);
    REQUIRE(event != NULL);
    CHECK_STR_EQ(jpath_str(event, "body"), "cGF5bG9hZA==");  /* "payload": what a signature covers */
    CHECK_INT_EQ(jpath_num(event, "bodyBytes", -1), 7);
    json_decref(event);

    {
        char *reply = nlt_format("{\"url\": \"%secho/signed?x=1\"}", base_url());
        h.reply = reply;
        r = request_json(c, "{\"path\": \"echo\"}");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/signed");
        CHECK_STR_EQ(jpath_str(r, "value.query"), "x=1");
        json_decref(r);
        free(reply);
    }

    other = nlt_format("{\"url\": \"http://localhost:%d/echo\"}", atoi(strrchr(base_url(), ':') + 1));
    h.reply = other;  /* another origin (another host name) */
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK(strstr(error_message(r), "'url'") != NULL && strstr(error_message(r), "adaptMayChangeOrigin") != NULL);
    json_decref(r);
    h.reply = "{\"body\": \"eA==\"}";  /* a GET cannot carry one */
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    h.reply = "{\"body\": \"not base64!\"}";
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"body\": {}}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    h.reply = "{\"url\": \"file:///etc/passwd\"}";
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    nl_client_free(c);

    c = client_for("\"adaptMayChangeOrigin\": true");
    REQUIRE(nl_client_set_hook(c, NL_HOOK_ADAPT, signing_fn, &h) == 0);
    h.reply = other;
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    CHECK(strncmp(jpath_str(r, "value.headers.host") ? jpath_str(r, "value.headers.host") : "", "localhost:", 10) == 0);
    json_decref(r);
    nl_client_free(c);
    free(other);
    free(h.last_event);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_adapt_hook_adds_header_the_server_sees),
        NLT_TEST(test_netlayer_log_environment_sets_the_level_of_configs_without_one),
        NLT_TEST(test_adapt_hook_can_sign_query_url_and_body),
        NLT_TEST(test_adapt_hook_runs_before_every_attempt),
        NLT_TEST(test_hooks_never_run_on_the_calling_thread),
        NLT_TEST(test_adapt_cancel_yields_cancelled_and_sends_nothing),
        NLT_TEST(test_an_attempt_the_adapt_hook_cancels_is_not_counted),
        NLT_TEST(test_adapt_invalid_reply_is_invalid_request_and_next_request_works),
        NLT_TEST(test_hooks_set_and_removed_while_requests_in_flight_do_not_crash),
        NLT_TEST(test_removing_a_hook_waits_for_its_running_call),
        NLT_TEST(test_a_hook_removing_itself_while_another_thread_removes_it),
        NLT_TEST(test_a_fork_while_a_removal_waits_leaves_the_child_able_to_set_hooks),
        NLT_TEST(test_hooks_toggled_beside_a_log_hook_while_requests_complete),
        NLT_TEST(test_set_hook_rejects_bad_arguments),
        NLT_TEST(test_retry_503_twice_then_200_succeeds_on_third_attempt),
        NLT_TEST(test_retry_backoff_is_honoured_between_attempts),
        NLT_TEST(test_retry_after_seconds_delays_the_next_attempt),
        NLT_TEST(test_retry_after_is_capped_by_max_backoff),
        NLT_TEST(test_post_is_attempted_once_unless_retry_methods_lists_it),
        NLT_TEST(test_status_not_in_on_status_is_not_retried),
        NLT_TEST(test_connection_refused_is_retried_and_reports_attempts),
        NLT_TEST(test_deadline_bounds_all_attempts_and_backoff),
        NLT_TEST(test_deadline_clips_the_attempt_timeout),
        NLT_TEST(test_retry_hook_always_true_is_stopped_by_max_attempts),
        NLT_TEST(test_retry_hook_false_stops_retries_the_policy_would_make),
        NLT_TEST(test_retry_hook_without_reply_leaves_it_to_the_policy),
        NLT_TEST(test_malformed_retry_and_resolve_replies_fail_only_that_request),
        NLT_TEST(test_token_refresh_happens_once_for_concurrent_401s),
        NLT_TEST(test_error_resolver_rule_resolves_401_keeping_status_and_body),
        NLT_TEST(test_error_resolver_range_rule_reads_message_at_key_path),
        NLT_TEST(test_resolve_error_hook_reply_wins_over_rules),
        NLT_TEST(test_resolve_error_hook_without_reply_falls_back_to_rules),
        NLT_TEST(test_log_events_redact_secrets_and_have_expected_fields),
        NLT_TEST(test_log_level_error_reports_only_errors),
        NLT_TEST(test_log_without_hook_writes_redacted_json_lines_to_stderr),
        NLT_TEST(test_a_log_hook_does_not_make_a_blocking_call_wait_behind_a_completion_callback),
        NLT_TEST(test_a_resolve_error_hook_does_not_make_a_blocking_call_wait_behind_a_completion_callback),
        NLT_TEST(test_a_hook_set_during_a_blocking_request_runs_off_its_thread),
    };
    g_argv0 = argv[0];
    if (argc > 1 && strcmp(argv[1], "--log-child") == 0)
        return log_child_main();
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
