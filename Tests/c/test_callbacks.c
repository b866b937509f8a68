/*
 * test_callbacks.c — per-request callbacks (nl_request_start, nl_call_start) and
 * hooks that fail their request (nl_reply_fail), through the public header.
 * Endpoints: /sse, /lines, /bytes/<n>, /stream-bytes/<n>, /json, /status/<code>, /flaky/<key>.
 */
#include "harness.h"
#include "pause_watch.h"

#include <dirent.h>
#include <stdatomic.h>

/* ---- one request's own state -------------------------------------------------------- */

typedef struct request_state {
    pthread_mutex_t m;
    pthread_cond_t done_cv;
    json_t *events;          /* every event, in arrival order */
    json_t *result;          /* the result document, once complete */
    uint64_t event_ids[64];  /* the id argument of each event */
    int completions;
    int events_after_completion;
    int cancel_after;        /* reply {"cancel": true} on this event (1-based); 0 never */
    int fail_after;          /* nl_reply_fail on this event; 0 never */
    const char *fail_kind;
    const char *fail_message;
    int user_data_mismatch;
} request_state;

static void state_init(request_state *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    s->events = json_array();
}

static void state_destroy(request_state *s)
{
    json_decref(s->events);
    if (s->result)
        json_decref(s->result);
    pthread_cond_destroy(&s->done_cv);
    pthread_mutex_destroy(&s->m);
}

static void on_event(uint64_t id, const char *event_json, nl_reply *reply, void *user_data)
{
    request_state *s = (request_state *)user_data;
    json_t *ev = json_loads(event_json, JSON_ALLOW_NUL, NULL);
    size_t n;
    CHECK_MSG(ev != NULL, "event is not JSON: %.200s", event_json);
    pthread_mutex_lock(&s->m);
    if (s->completions)
        s->events_after_completion++;
    if (ev)
        json_array_append_new(s->events, ev);
    n = json_array_size(s->events);
    if (n <= NLT_COUNT(s->event_ids))
        s->event_ids[n - 1] = id;
    pthread_mutex_unlock(&s->m);
    if (s->fail_after > 0 && (int)n == s->fail_after)
        nl_reply_fail(reply, s->fail_kind, s->fail_message);
    else if (s->cancel_after > 0 && (int)n >= s->cancel_after)
        nl_reply_set(reply, "{\"cancel\": true}");
}

static void on_complete(uint64_t id, const char *result_json, void *user_data)
{
    request_state *s = (request_state *)user_data;
    (void)id;
    pthread_mutex_lock(&s->m);
    s->completions++;
    if (!s->result)
        s->result = nlt_parse(result_json, "result");
    pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->m);
}

static void wait_done(request_state *s)
{
    pthread_mutex_lock(&s->m);
    while (!s->completions)
        pthread_cond_wait(&s->done_cv, &s->m);
    pthread_mutex_unlock(&s->m);
}

static nl_request_callbacks callbacks_for(request_state *s, int progress, int stream)
{
    nl_request_callbacks cb = NL_REQUEST_CALLBACKS_INIT;
    cb.on_complete = on_complete;
    cb.on_progress = progress ? on_event : NULL;
    cb.on_stream = stream ? on_event : NULL;
    cb.user_data = s;
    return cb;
}

/* A client-wide hook that must not be called: counts its calls. */
static int hook_calls;
static void counting_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json; (void)reply; (void)user_data;
    __atomic_add_fetch(&hook_calls, 1, __ATOMIC_SEQ_CST);
}

/* ---- per-request callbacks ---------------------------------------------------------- */

static void test_stream_events_go_to_the_request_not_the_client_hook(void)
{
    nl_client *c = client_for(NULL);
    request_state s;
    nl_request_callbacks cb;
    uint64_t id;
    size_t i;
    state_init(&s);
    cb = callbacks_for(&s, 0, 1);
    hook_calls = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, counting_hook, NULL), 0);
    id = nl_request_start(c, "{\"path\": \"sse\", \"stream\": \"sse\"}", &cb);
    CHECK(id != 0);
    wait_done(&s);
    CHECK_OK(s.result);
    CHECK_INT_EQ(json_array_size(s.events), 3);  /* the unterminated last event is discarded */
    CHECK_INT_EQ(jpath_num(s.result, "events", -1), 3);
    CHECK_STR_EQ(jpath_str(s.events, "0.event"), "tick");
    CHECK_STR_EQ(jpath_str(s.events, "1.data"), "two\nlines");
    for (i = 0; i < json_array_size(s.events); i++) {
        CHECK_MSG(s.event_ids[i] == id, "event %d has id %llu, the request %llu", (int)i,
                  (unsigned long long)s.event_ids[i], (unsigned long long)id);
        CHECK_INT_EQ(jpath_num(json_array_get(s.events, i), "id", -1), (double)id);
    }
    CHECK_INT_EQ(s.completions, 1);
    CHECK_INT_EQ(s.events_after_completion, 0);
    CHECK_INT_EQ(__atomic_load_n(&hook_calls, __ATOMIC_SEQ_CST), 0);
    nl_client_free(c);
    CHECK_INT_EQ(s.completions, 1);
    state_destroy(&s);
}

static void test_concurrent_streams_each_get_only_their_own_events(void)
{
    enum { N = 8 };
    nl_client *c = client_for(NULL);
    request_state s[N];
    uint64_t ids[N];
    int i;
    for (i = 0; i < N; i++) {
        nl_request_callbacks cb;
        state_init(&s[i]);
        cb = callbacks_for(&s[i], 0, 1);
        /* even: lines, odd: sse; the kinds of events tell them apart */
        ids[i] = nl_request_start(c, i % 2 ? "{\"path\": \"sse\", \"stream\": \"sse\"}"
                                           : "{\"path\": \"lines\", \"stream\": \"lines\"}", &cb);
        CHECK(ids[i] != 0);
    }
    for (i = 0; i < N; i++) {
        size_t k;
        wait_done(&s[i]);
        CHECK_OK(s[i].result);
        CHECK_INT_EQ(json_array_size(s[i].events), i % 2 ? 3 : 5);
        for (k = 0; k < json_array_size(s[i].events); k++) {
            json_t *ev = json_array_get(s[i].events, k);
            CHECK(s[i].event_ids[k] == ids[i]);
            CHECK(json_object_get(ev, i % 2 ? "data" : "line") != NULL);
        }
    }
    nl_client_free(c);
    for (i = 0; i < N; i++) {
        CHECK_INT_EQ(s[i].completions, 1);
        state_destroy(&s[i]);
    }
}

static void test_progress_events_go_to_the_request_and_end_with_the_total(void)
{
    nl_client *c = client_for(NULL);
    request_state s;
    nl_request_callbacks cb;
    json_t *last;
    uint64_t id;
    state_init(&s);
    cb = callbacks_for(&s, 1, 0);
    hook_calls = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_PROGRESS, counting_hook, NULL), 0);
    id = nl_request_start(c, "{\"path\": \"bytes/300000\", \"progress\": true, \"response\": {\"decoder\": \"none\"}}",
                          &cb);
    CHECK(id != 0);
    wait_done(&s);
    CHECK_OK(s.result);
    REQUIRE(json_array_size(s.events) >= 1);
    last = json_array_get(s.events, json_array_size(s.events) - 1);
    CHECK_STR_EQ(jpath_str(last, "direction"), "download");
    CHECK_INT_EQ(jpath_num(last, "done", -1), 300000);
    CHECK_INT_EQ(jpath_num(last, "id", -1), (double)id);
    CHECK_INT_EQ(__atomic_load_n(&hook_calls, __ATOMIC_SEQ_CST), 0);
    CHECK_INT_EQ(s.events_after_completion, 0);
    nl_client_free(c);
    state_destroy(&s);
}

static void test_without_an_event_callback_the_client_hook_gets_the_events(void)
{
    nl_client *c = client_for(NULL);
    request_state s;
    nl_request_callbacks cb;
    state_init(&s);
    cb = callbacks_for(&s, 0, 0);
    hook_calls = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, counting_hook, NULL), 0);
    CHECK(nl_request_start(c, "{\"path\": \"lines\", \"stream\": \"lines\"}", &cb) != 0);
    wait_done(&s);
    CHECK_OK(s.result);
    CHECK_INT_EQ(__atomic_load_n(&hook_calls, __ATOMIC_SEQ_CST), 5);
    CHECK_INT_EQ(json_array_size(s.events), 0);
    nl_client_free(c);
    state_destroy(&s);
}

static void test_a_plain_request_completes_through_its_callback(void)
{
    nl_client *c = client_for("\"endpoints\": {\"one\": {\"path\": \"echo/{name}\"}}");
    request_state a, b;
    nl_request_callbacks cb;
    state_init(&a);
    state_init(&b);
    cb = callbacks_for(&a, 1, 1);
    CHECK(nl_request_start(c, "{\"path\": \"json\"}", &cb) != 0);
    cb = callbacks_for(&b, 1, 1);
    CHECK(nl_call_start(c, "one", "{\"params\": {\"name\": \"x y\"}}", &cb) != 0);
    wait_done(&a);
    wait_done(&b);
    CHECK_OK(a.result);
    CHECK_OK(b.result);
    CHECK_STR_EQ(jpath_str(b.result, "value.path"), "/echo/x%20y");
    CHECK_INT_EQ(json_array_size(a.events), 0);
    nl_client_free(c);
    CHECK_INT_EQ(a.completions, 1);
    CHECK_INT_EQ(b.completions, 1);
    state_destroy(&a);
    state_destroy(&b);
}

static void test_bad_arguments_start_nothing_or_complete_with_invalid_request(void)
{
    nl_client *c = client_for(NULL);
    request_state s;
    nl_request_callbacks cb;
    state_init(&s);
    cb = callbacks_for(&s, 0, 0);
    CHECK(nl_request_start(NULL, "{}", &cb) == 0);
    CHECK(nl_request_start(c, "{}", NULL) == 0);
    CHECK(nl_call_start(c, "x", NULL, NULL) == 0);
    cb.on_complete = NULL;
    CHECK(nl_request_start(c, "{}", &cb) == 0);
    cb = callbacks_for(&s, 0, 0);
    cb.version = 99;
    CHECK(nl_request_start(c, "{}", &cb) == 0);
    cb.version = 0;
    CHECK(nl_request_start(c, "{}", &cb) == 0);
    CHECK_INT_EQ(s.completions, 0);

    cb = callbacks_for(&s, 0, 0);
    CHECK(nl_request_start(c, NULL, &cb) != 0);
    wait_done(&s);
    CHECK_KIND(s.result, "invalid_request");
    state_destroy(&s);

    state_init(&s);
    cb = callbacks_for(&s, 0, 0);
    CHECK(nl_call_start(c, "nope", NULL, &cb) != 0);
    wait_done(&s);
    CHECK_KIND(s.result, "invalid_request");
    CHECK(nlt_stristr(error_message(s.result), "nope") != NULL);
    state_destroy(&s);

    state_init(&s);
    cb = callbacks_for(&s, 0, 1);
    CHECK(nl_request_start(c, "{\"path\": \"json\", \"strem\": \"sse\"}", &cb) != 0);
    wait_done(&s);
    CHECK_KIND(s.result, "invalid_request");
    CHECK(nlt_stristr(error_message(s.result), "strem") != NULL);
    state_destroy(&s);
    nl_client_free(c);
}

/* A cancelled stream delivers no more events: not the rest of what libcurl read, nor
 * what inflates from it (a fast server sends thousands of events per read). */
typedef struct {
    atomic_int events, after_cancel, cancelled, completions;
    char *result;
} cancel_watch;

static void cancel_watch_stream(uint64_t id, const char *event_json, nl_reply *reply, void *user_data)
{
    cancel_watch *w = user_data;
    (void)id; (void)event_json; (void)reply;
    atomic_fetch_add(&w->events, 1);
    if (atomic_load(&w->cancelled)) atomic_fetch_add(&w->after_cancel, 1);
}

static void cancel_watch_complete(uint64_t id, const char *result_json, void *user_data)
{
    cancel_watch *w = user_data;
    (void)id;
    w->result = strdup(result_json);
    atomic_fetch_add(&w->completions, 1);
}

static void test_a_cancelled_stream_delivers_no_more_events(void)
{
    nl_client *c = client_for(NULL);
    cancel_watch w;
    nl_request_callbacks cb = NL_REQUEST_CALLBACKS_INIT;
    uint64_t id;
    int waited;
    json_t *r;
    memset(&w, 0, sizeof w);
    cb.on_complete = cancel_watch_complete;
    cb.on_stream = cancel_watch_stream;
    cb.user_data = &w;
    id = nl_request_start(c, "{\"path\": \"sse-slow\", \"query\": {\"count\": 400000, \"interval_ms\": 0},"
                             " \"stream\": \"sse\", \"timeout\": 60}", &cb);
    REQUIRE(id != 0);
    for (waited = 0; atomic_load(&w.events) < 6 && waited < 10000; waited += 5) sleep_ms(5);
    CHECK_INT_EQ(nl_cancel(c, id), 1);
    atomic_store(&w.cancelled, 1);
    for (waited = 0; atomic_load(&w.completions) == 0 && waited < 20000; waited += 5) sleep_ms(5);
    REQUIRE(w.result != NULL);
    r = nlt_parse(w.result, "cancelled stream");
    CHECK_KIND(r, "cancelled");
    /* The one event a callback may have been in when nl_cancel returned, at most. */
    CHECK_MSG(atomic_load(&w.after_cancel) <= 1, "%d events after nl_cancel returned (of %d)",
              atomic_load(&w.after_cancel), atomic_load(&w.events));
    json_decref(r);
    free(w.result);
    nl_client_free(c);
}

static void test_an_event_callback_can_cancel_or_fail_its_request(void)
{
    nl_client *c = client_for(NULL);
    request_state s;
    nl_request_callbacks cb;

    state_init(&s);
    s.cancel_after = 2;
    cb = callbacks_for(&s, 0, 1);
    CHECK(nl_request_start(c, "{\"path\": \"lines\", \"stream\": \"lines\"}", &cb) != 0);
    wait_done(&s);
    CHECK_KIND(s.result, "cancelled");
    CHECK_INT_EQ(json_array_size(s.events), 2);
    state_destroy(&s);

    state_init(&s);
    s.fail_after = 1;
    s.fail_kind = "io";
    s.fail_message = "disk full while saving event 1";
    cb = callbacks_for(&s, 0, 1);
    CHECK(nl_request_start(c, "{\"path\": \"lines\", \"stream\": \"lines\"}", &cb) != 0);
    wait_done(&s);
    CHECK_KIND(s.result, "io");
    CHECK_STR_EQ(error_message(s.result), "disk full while saving event 1");
    CHECK(json_object_get(json_object_get(s.result, "error"), "curlCode") == NULL);
    CHECK_INT_EQ(json_array_size(s.events), 1);
    state_destroy(&s);

    state_init(&s);
    s.fail_after = 1;
    cb = callbacks_for(&s, 1, 0);
    CHECK(nl_request_start(c, "{\"path\": \"bytes/1000\", \"progress\": true, \"response\": {\"decoder\": \"none\"}}",
                           &cb) != 0);
    wait_done(&s);
    CHECK_KIND(s.result, "invalid_request");
    CHECK_STR_EQ(error_message(s.result), "failed by on_progress");
    state_destroy(&s);

    /* the client still works */
    {
        json_t *r = request_json(c, "{\"path\": \"json\"}");
        CHECK_OK(r);
        json_decref(r);
    }
    nl_client_free(c);
}

/* ---- nl_reply_fail from the client's hooks ----------------------------------------- */

typedef struct fail_spec {
    const char *kind;
    const char *message;
    const char *also_set; /* an nl_reply_set answer given before the fail, or NULL */
    int calls;
} fail_spec;

static void failing_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    fail_spec *f = (fail_spec *)user_data;
    (void)event_json;
    __atomic_add_fetch(&f->calls, 1, __ATOMIC_SEQ_CST);
    if (f->also_set)
        nl_reply_set(reply, f->also_set);
    nl_reply_fail(reply, f->kind, f->message);
}

static void test_an_adapt_hook_fails_the_request_with_its_kind_and_message(void)
{
    nl_client *c = client_for(NULL);
    fail_spec f = {"not_connected", "no token available offline", "{\"headers\": {\"X-A\": \"1\"}}", 0};
    json_t *r;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, failing_hook, &f), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "not_connected");
    CHECK_STR_EQ(error_message(r), "no token available offline");
    CHECK_INT_EQ(f.calls, 1);
    json_decref(r);

    f.kind = NULL;
    f.message = NULL;
    f.also_set = NULL;
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK_STR_EQ(error_message(r), "failed by NL_HOOK_ADAPT");
    json_decref(r);

    f.kind = "cancelled";
    f.message = "the user signed out";
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "cancelled");
    CHECK_STR_EQ(error_message(r), "the user signed out");
    json_decref(r);

    f.kind = "status";
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK(nlt_stristr(error_message(r), "'status'") != NULL);
    json_decref(r);

    f.kind = "no such kind";
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK(nlt_stristr(error_message(r), "'no such kind'") != NULL);
    json_decref(r);

    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, NULL, NULL), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

static void test_retry_and_resolve_error_hooks_fail_with_their_message(void)
{
    nl_client *c = client_for("\"retry\": {\"maxAttempts\": 3, \"backoff\": 0}");
    fail_spec f = {"generic", "refresh failed", NULL, 0};
    char *key = unique_key("fail-retry");
    json_t *r;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, failing_hook, &f), 0);
    r = request_json(c, "{\"path\": \"flaky/%s\", \"query\": {\"fails\": 5}}", key);
    CHECK_KIND(r, "generic");
    CHECK_STR_EQ(error_message(r), "refresh failed");
    CHECK_INT_EQ(f.calls, 1);
    json_decref(r);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RETRY, NULL, NULL), 0);

    f.kind = "protocol";
    f.message = "the API said 404 means the account is gone";
    f.also_set = "{\"code\": \"x\", \"message\": \"y\"}";
    f.calls = 0;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_RESOLVE_ERROR, failing_hook, &f), 0);
    r = request_json(c, "{\"path\": \"status/404\"}");
    CHECK_KIND(r, "protocol");
    CHECK_STR_EQ(error_message(r), "the API said 404 means the account is gone");
    CHECK_INT_EQ(f.calls, 1);
    json_decref(r);
    free(key);
    nl_client_free(c);
}

static void test_a_stream_hook_fails_and_a_log_hook_fail_is_ignored(void)
{
    nl_client *c = client_for("\"log\": {\"level\": \"debug\"}");
    fail_spec stream = {"too_large", "event larger than the app allows", NULL, 0};
    fail_spec log = {"generic", "ignored", NULL, 0};
    json_t *r;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, failing_hook, &log), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK(log.calls >= 1);
    json_decref(r);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_STREAM, failing_hook, &stream), 0);
    r = request_json(c, "{\"path\": \"sse\", \"stream\": \"sse\"}");
    CHECK_KIND(r, "too_large");
    CHECK_STR_EQ(error_message(r), "event larger than the app allows");
    CHECK_INT_EQ(stream.calls, 1);
    json_decref(r);
    nl_reply_fail(NULL, "io", "nothing happens");  /* NULL reply: a no-op */
    nl_client_free(c);
}

/* ---- a slow completion callback and the loop ----------------------------------------- */

typedef struct slow_completion {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int entered;
    int done;
    double ended_ms;  /* when the callback returned */
} slow_completion;

static void on_complete_slowly(uint64_t id, const char *result_json, void *user_data)
{
    slow_completion *s = (slow_completion *)user_data;
    (void)id;
    (void)result_json;
    pthread_mutex_lock(&s->m);
    s->entered = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    sleep_ms(400);
    pthread_mutex_lock(&s->m);
    s->ended_ms = now_ms();
    s->done = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
}

static double last_event_ms;  /* guarded by the request_state's mutex */
static void on_event_timed(uint64_t id, const char *event_json, nl_reply *reply, void *user_data)
{
    request_state *s = (request_state *)user_data;
    on_event(id, event_json, reply, user_data);
    pthread_mutex_lock(&s->m);
    last_event_ms = now_ms();
    pthread_mutex_unlock(&s->m);
}

/* Completions run on a thread of their own beside the event loop: while one callback
 * takes its time, other requests' transfers and their events go on. */
static void test_a_slow_completion_callback_does_not_hold_up_other_transfers(void)
{
    nl_client *c = client_for(NULL);
    slow_completion slow;
    request_state b;
    nl_request_callbacks cb = NL_REQUEST_CALLBACKS_INIT;
    double last;
    memset(&slow, 0, sizeof slow);
    pthread_mutex_init(&slow.m, NULL);
    pthread_cond_init(&slow.cv, NULL);
    state_init(&b);
    cb.on_complete = on_complete_slowly;
    cb.user_data = &slow;
    CHECK(nl_request_start(c, "{\"path\": \"json\"}", &cb) != 0);
    pthread_mutex_lock(&slow.m);
    while (!slow.entered)
        pthread_cond_wait(&slow.cv, &slow.m);
    pthread_mutex_unlock(&slow.m);

    cb = callbacks_for(&b, 1, 0);
    cb.on_progress = on_event_timed;
    CHECK(nl_request_start(c, "{\"path\": \"bytes/300000\", \"progress\": true, \"response\": {\"decoder\": \"none\"}}",
                           &cb) != 0);
    wait_done(&b);
    CHECK_OK(b.result);
    REQUIRE(json_array_size(b.events) >= 1);
    CHECK_INT_EQ(jpath_num(json_array_get(b.events, json_array_size(b.events) - 1), "done", -1), 300000);
    pthread_mutex_lock(&b.m);
    last = last_event_ms;
    pthread_mutex_unlock(&b.m);
    pthread_mutex_lock(&slow.m);
    while (!slow.done)
        pthread_cond_wait(&slow.cv, &slow.m);
    CHECK_MSG(last < slow.ended_ms,
              "the other request's events waited for the slow callback (last event %.0f ms after it ended)",
              last - slow.ended_ms);
    pthread_mutex_unlock(&slow.m);
    nl_client_free(c);
    state_destroy(&b);
    pthread_cond_destroy(&slow.cv);
    pthread_mutex_destroy(&slow.m);
}

/* Threads of this process now (Linux: /proc/self/task). */
static int thread_count(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* The thread count once it has settled: a thread another test's client joined may
 * still be listed for a moment (pthread_join returns when the kernel clears its id, a
 * little before the task leaves /proc). */
static int settled_thread_count(void)
{
    int n = thread_count(), same = 0, waited;
    for (waited = 0; same < 3 && waited < 1000; waited += 5) {
        int now;
        sleep_ms(5);
        now = thread_count();
        same = now == n ? same + 1 : 0;
        n = now;
    }
    return n;
}

/* The thread count, once it is `expected` (threads that were just joined leave /proc
 * a moment later), or after two seconds. */
static int thread_count_becomes(int expected)
{
    int n = thread_count(), waited;
    for (waited = 0; n != expected && waited < 2000; waited += 5) {
        sleep_ms(5);
        n = thread_count();
    }
    return n;
}

/* Descriptors open in this process now (Linux: /proc/self/fd). */
static int descriptor_count(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* An idle client holds no thread and no descriptor; one that only makes blocking
 * requests has no thread of its own either. The first asynchronous request starts the
 * event loop's thread, and its completion the delivery thread. */
static void test_library_threads_and_descriptors_start_with_the_first_asynchronous_request(void)
{
    int before = settled_thread_count(), fds = descriptor_count(), i;
    nl_client *idle[20];
    nl_client *c;
    request_state s;
    nl_request_callbacks cb;
    json_t *r;
    REQUIRE(before > 0 && fds > 0);
    for (i = 0; i < 20; i++)
        idle[i] = client_for(NULL);
    CHECK_INT_EQ(thread_count_becomes(before), before);
    CHECK_INT_EQ(descriptor_count(), fds);
    for (i = 0; i < 20; i++)
        nl_client_free(idle[i]);

    c = client_for(NULL);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    CHECK_INT_EQ(thread_count_becomes(before), before);
    state_init(&s);
    cb = callbacks_for(&s, 0, 0);
    CHECK(nl_request_start(c, "{\"path\": \"json\"}", &cb) != 0);
    wait_done(&s);
    CHECK_OK(s.result);
    CHECK_INT_EQ(thread_count_becomes(before + 2), before + 2);
    nl_client_free(c);
    CHECK_INT_EQ(thread_count_becomes(before), before);
    CHECK_INT_EQ(descriptor_count(), fds);
    state_destroy(&s);
}

/* One connection pool per client: a blocking request, an asynchronous one and another
 * blocking one to the same server go over one connection (the test server numbers its
 * connections in /echo's "connection"). */
static void test_blocking_and_asynchronous_requests_share_one_connection(void)
{
    nl_client *c = client_for(NULL);
    request_state s;
    nl_request_callbacks cb;
    json_t *first, *last;
    long long connection;
    first = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(first);
    connection = (long long)jpath_num(first, "value.connection", -1);
    CHECK(connection > 0);
    state_init(&s);
    cb = callbacks_for(&s, 0, 0);
    CHECK(nl_request_start(c, "{\"path\": \"echo\"}", &cb) != 0);
    wait_done(&s);
    CHECK_OK(s.result);
    CHECK_INT_EQ((long long)jpath_num(s.result, "value.connection", -2), connection);
    last = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(last);
    CHECK_INT_EQ((long long)jpath_num(last, "value.connection", -3), connection);
    json_decref(first);
    json_decref(last);
    state_destroy(&s);
    nl_client_free(c);
}

/* Counts LOG hook calls, and those made on the thread that called nl_request. */
typedef struct log_probe {
    pthread_t caller;
    int calls;
    int on_caller;
} log_probe;

static void log_probe_fn(const char *event_json, nl_reply *reply, void *user_data)
{
    log_probe *p = (log_probe *)user_data;
    (void)event_json;
    (void)reply;
    __atomic_add_fetch(&p->calls, 1, __ATOMIC_SEQ_CST);
    if (pthread_equal(pthread_self(), p->caller))
        __atomic_add_fetch(&p->on_caller, 1, __ATOMIC_SEQ_CST);
}

/* A LOG hook runs on a library thread, the delivery thread, and leaves a blocking
 * request on its caller's thread: no event-loop thread starts for it. Its events have
 * all been delivered when nl_request returns. Hooks that run while a request is on its
 * way (here ADAPT) do move requests to the event loop's thread. */
static void test_a_log_hook_leaves_a_blocking_request_on_the_callers_thread(void)
{
    int before = settled_thread_count();
    nl_client *c = client_for("\"log\": {\"level\": \"info\"}");
    log_probe p;
    json_t *r;
    memset(&p, 0, sizeof p);
    p.caller = pthread_self();
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, log_probe_fn, &p), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    CHECK_MSG(__atomic_load_n(&p.calls, __ATOMIC_SEQ_CST) >= 2, "%d LOG events when nl_request returned", p.calls);
    CHECK_INT_EQ(__atomic_load_n(&p.on_caller, __ATOMIC_SEQ_CST), 0);
    CHECK_INT_EQ(thread_count_becomes(before + 1), before + 1);  /* the delivery thread, no event loop */
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, counting_hook, NULL), 0);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    CHECK_INT_EQ(thread_count_becomes(before + 2), before + 2);  /* with an ADAPT hook, the event loop's too */
    nl_client_free(c);
    CHECK_INT_EQ(thread_count_becomes(before), before);
    CHECK_INT_EQ(__atomic_load_n(&p.on_caller, __ATOMIC_SEQ_CST), 0);
}

/* ---- nl_pause ------------------------------------------------------------------------- */

static void test_a_stream_paused_from_its_callback_reads_nothing_until_resumed(void)
{
    nl_client *c = client_for(NULL);
    pause_watch w;
    int at_pause, waited;
    /* 8 MB that the server writes as fast as the client reads. */
    uint64_t id = start_pause_watch(&w, c, "{\"path\": \"stream-bytes/8000000\", \"stream\": \"chunks\"}", 1);
    REQUIRE(id != 0);
    for (waited = 0; atomic_load(&w.events) == 0 && waited < 10000; waited += 5) sleep_ms(5);
    sleep_ms(100);
    at_pause = atomic_load(&w.events);
    sleep_ms(400);
    /* Paused inside the first event: at most the other events of that read follow. */
    CHECK_MSG(at_pause <= 2, "%d events arrived after a pause made in the first", at_pause - 1);
    CHECK_INT_EQ(atomic_load(&w.events), at_pause);
    CHECK_INT_EQ(atomic_load(&w.completions), 0);
    CHECK_INT_EQ(nl_pause(c, id, 0), 1);
    json_decref(finish_pause_watch(&w, "resumed stream", 8000000));
    CHECK_INT_EQ(nl_pause(c, id, 1), 0);  /* completed */
    CHECK_INT_EQ(nl_pause(c, 999999, 1), 0);
    CHECK_INT_EQ(nl_pause(NULL, id, 1), 0);
    nl_client_free(c);
}

static void test_a_stream_paused_from_another_thread_and_before_it_starts(void)
{
    nl_client *c = client_for(NULL);
    pause_watch w;
    int held, waited;
    /* Paused at once, from this thread: before the transfer runs, or just after, and
     * before the server answers (it waits 0.5 s: a thread starved under valgrind must
     * not find every byte read already). */
    uint64_t id = start_pause_watch(&w, c, "{\"path\": \"stream-bytes/4000000\", \"query\": {\"wait_ms\": 500}, \"stream\": \"chunks\"}", 0);
    REQUIRE(id != 0);
    CHECK_INT_EQ(nl_pause(c, id, 1), 1);
    sleep_ms(150);
    held = atomic_load(&w.events);
    sleep_ms(350);
    CHECK_INT_EQ(atomic_load(&w.events), held);
    CHECK_MSG(atomic_load(&w.bytes) < 4000000, "%ld bytes read while paused", atomic_load(&w.bytes));
    CHECK_INT_EQ(nl_pause(c, id, 0), 1);
    json_decref(finish_pause_watch(&w, "stream paused before it ran", 4000000));

    /* Pause and resume many times from this thread while it runs: every byte, in the end. */
    id = start_pause_watch(&w, c, "{\"path\": \"stream-bytes/4000000\", \"query\": {\"chunk\": 4096}, \"stream\": \"chunks\"}", 0);
    REQUIRE(id != 0);
    for (waited = 0; waited < 200 && atomic_load(&w.completions) == 0; waited++) {
        nl_pause(c, id, waited % 2 == 0);
        sleep_ms(1);
    }
    nl_pause(c, id, 0);
    json_decref(finish_pause_watch(&w, "stream paused and resumed 200 times", 4000000));
    nl_client_free(c);
}

static void test_a_paused_stream_is_not_silent_past_its_timeout(void)
{
    nl_client *c = client_for(NULL);
    pause_watch w;
    /* timeout bounds the server's silences; a pause of 2.5 times as long is the reader's
     * (under valgrind a first response can take longer than 0.3 s). */
    int slow = getenv("NETLAYER_TEST_SLOW") != NULL, waited;
    uint64_t id = start_pause_watch(&w, c, slow ? "{\"path\": \"stream-bytes/2000000\", \"stream\": \"chunks\", \"timeout\": 3}"
                                                : "{\"path\": \"stream-bytes/2000000\", \"stream\": \"chunks\", \"timeout\": 0.3}", 1);
    REQUIRE(id != 0);
    for (waited = 0; atomic_load(&w.events) == 0 && waited < 10000; waited += 5) sleep_ms(5);
    sleep_ms(slow ? 7500 : 800);
    CHECK_INT_EQ(atomic_load(&w.completions), 0);
    CHECK_INT_EQ(nl_pause(c, id, 0), 1);
    json_decref(finish_pause_watch(&w, "stream paused past its timeout", 2000000));

    /* Paused before it starts: its silence is the reader's from the first byte on.
     * The server waits a sixth of the timeout before it answers, so that the pause
     * surely comes first (under valgrind a starved thread may otherwise call nl_pause
     * after every byte was read). */
    id = start_pause_watch(&w, c, slow ? "{\"path\": \"stream-bytes/2000000\", \"query\": {\"wait_ms\": 500}, \"stream\": \"chunks\", \"timeout\": 3}"
                                       : "{\"path\": \"stream-bytes/2000000\", \"query\": {\"wait_ms\": 50}, \"stream\": \"chunks\", \"timeout\": 0.3}", 0);
    REQUIRE(id != 0);
    CHECK_INT_EQ(nl_pause(c, id, 1), 1);
    sleep_ms(slow ? 7500 : 800);
    CHECK_INT_EQ(atomic_load(&w.completions), 0);
    CHECK_INT_EQ(nl_pause(c, id, 0), 1);
    json_decref(finish_pause_watch(&w, "stream paused before it started, past its timeout", 2000000));

    /* The deadline still counts. */
    id = start_pause_watch(&w, c, "{\"path\": \"stream-bytes/2000000\", \"stream\": \"chunks\", \"deadline\": 0.5}", 1);
    REQUIRE(id != 0);
    {
        json_t *r = pause_watch_result(&w, "paused past its deadline");
        REQUIRE(r != NULL);
        CHECK_KIND(r, "timeout");
        json_decref(r);
    }
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_stream_events_go_to_the_request_not_the_client_hook),
        NLT_TEST(test_concurrent_streams_each_get_only_their_own_events),
        NLT_TEST(test_progress_events_go_to_the_request_and_end_with_the_total),
        NLT_TEST(test_without_an_event_callback_the_client_hook_gets_the_events),
        NLT_TEST(test_a_plain_request_completes_through_its_callback),
        NLT_TEST(test_bad_arguments_start_nothing_or_complete_with_invalid_request),
        NLT_TEST(test_an_event_callback_can_cancel_or_fail_its_request),
        NLT_TEST(test_a_cancelled_stream_delivers_no_more_events),
        NLT_TEST(test_an_adapt_hook_fails_the_request_with_its_kind_and_message),
        NLT_TEST(test_retry_and_resolve_error_hooks_fail_with_their_message),
        NLT_TEST(test_a_stream_hook_fails_and_a_log_hook_fail_is_ignored),
        NLT_TEST(test_a_slow_completion_callback_does_not_hold_up_other_transfers),
        NLT_TEST(test_library_threads_and_descriptors_start_with_the_first_asynchronous_request),
        NLT_TEST(test_blocking_and_asynchronous_requests_share_one_connection),
        NLT_TEST(test_a_log_hook_leaves_a_blocking_request_on_the_callers_thread),
        NLT_TEST(test_a_stream_paused_from_its_callback_reads_nothing_until_resumed),
        NLT_TEST(test_a_stream_paused_from_another_thread_and_before_it_starts),
        NLT_TEST(test_a_paused_stream_is_not_silent_past_its_timeout),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
