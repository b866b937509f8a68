/*
 * test_threads.c — a client whose library threads cannot start (pthread_create fails,
 * as it does in a container at its pids limit): a request that needs one fails once,
 * saying why, and none runs twice once threads start again; a WebSocket is refused
 * by nl_websocket_open itself.
 * pthread_create is interposed in this file. Under a sanitizer, whose runtime
 * intercepts pthread_create itself, the tests are skipped.
 * Endpoints: /json, /echo, /hits/<key>.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "async_one.h"

#include <dlfcn.h>
#include <errno.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NLT_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NLT_SANITIZED 1
#endif

/* Whether pthread_create fails with EAGAIN (atomic), and how many calls it refused. */
static int refuse_threads;
static int refused;

#ifndef NLT_SANITIZED
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    static create_fn real;
    if (__atomic_load_n(&refuse_threads, __ATOMIC_SEQ_CST)) {
        __atomic_add_fetch(&refused, 1, __ATOMIC_SEQ_CST);
        return EAGAIN;
    }
    if (real == NULL) {
        void *found = dlsym(RTLD_NEXT, "pthread_create");
        memcpy(&real, &found, sizeof real);  /* POSIX: a function's address fits a void * */
    }
    return real(thread, attr, start, arg);
}
#endif

static void refuse(int on)
{
    __atomic_store_n(&refuse_threads, on, __ATOMIC_SEQ_CST);
}

static int skipped(void)
{
#ifdef NLT_SANITIZED
    nlt_note("skipped: the sanitizer's runtime intercepts pthread_create");
    return 1;
#else
    return 0;
#endif
}

static void counting_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json;
    (void)reply;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

/* The server's count of requests for /flaky/<key> (and /hits/<key> itself not). */
static long long hits(nl_client *c, const char *key)
{
    json_t *r = request_json(c, "{\"path\": \"hits/%s\"}", key);
    long long n = (long long)jpath_num(r, "value.hits", -1);
    json_decref(r);
    return n;
}

/* Starts an asynchronous request to /flaky/<key> while no thread can start, and
 * waits for its result: kind generic, saying the thread could not start. */
static void start_with_no_thread(nl_client *c, const char *key, async_one *a)
{
    char *endpoint = nlt_format("{\"path\": \"flaky/%s\", \"query\": {\"fails\": 0}}", key);
    refuse(1);
    CHECK(nl_request_async(c, endpoint, async_one_cb, a) != 0);
    refuse(0);
    free(endpoint);
    REQUIRE(async_one_wait(a, 10));
    CHECK_KIND(a->result, "generic");
    CHECK_MSG(nlt_stristr(error_message(a->result), "could not start") != NULL, "message '%s'", error_message(a->result));
}

/* An asynchronous request with no thread to run it fails once, naming the thread;
 * once threads start again the client works, and the failed request is not sent
 * after all. */
static void test_an_asynchronous_request_fails_once_when_no_thread_can_start(void)
{
    nl_client *c;
    async_one a;
    json_t *r;
    if (skipped()) return;
    c = client_for(NULL);
    async_one_init(&a);
    start_with_no_thread(c, "no-thread", &a);
    CHECK(__atomic_load_n(&refused, __ATOMIC_SEQ_CST) > 0);

    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    sleep_ms(300);
    CHECK_INT_EQ(a.calls, 1);
    CHECK_INT_EQ(hits(c, "no-thread"), 0);
    nl_client_free(c);
    CHECK_INT_EQ(a.calls, 1);
    async_one_destroy(&a);
}

/* With an ADAPT hook a request starts on the event loop's thread: when that thread
 * cannot start, the request runs no further than that, and runs once. */
static void test_a_hooked_request_with_no_thread_runs_once(void)
{
    nl_client *c;
    async_one a, b;
    int adapted = 0;
    if (skipped()) return;
    c = client_for(NULL);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, counting_hook, &adapted), 0);
    async_one_init(&a);
    async_one_init(&b);
    start_with_no_thread(c, "hooked-no-thread", &a);

    /* The next request starts the thread; whatever the first left queued must not run. */
    CHECK(nl_request_async(c, "{\"path\": \"json\"}", async_one_cb, &b) != 0);
    REQUIRE(async_one_wait(&b, 10));
    CHECK_OK(b.result);
    sleep_ms(300);
    CHECK_INT_EQ(a.calls, 1);
    CHECK_INT_EQ(b.calls, 1);
    CHECK_INT_EQ(hits(c, "hooked-no-thread"), 0);
    nl_client_free(c);
    CHECK_INT_EQ(a.calls, 1);
    async_one_destroy(&a);
    async_one_destroy(&b);
}

static void ws_counting_open(nl_websocket *ws, const char *open_json, void *user_data)
{
    (void)ws;
    (void)open_json;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

static void ws_counting_error(nl_websocket *ws, const char *error_json, void *user_data)
{
    (void)ws;
    (void)error_json;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

/* Frees its handle, as a callback may. */
static void ws_freeing_close(nl_websocket *ws, int code, const char *reason, void *user_data)
{
    (void)code;
    (void)reason;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
    nl_websocket_free(ws);
}

/* A WebSocket that no thread can open is refused by nl_websocket_open itself: NULL,
 * the error in error_json, and no callback, so that none runs (and frees the handle)
 * inside the call. */
static void test_a_websocket_no_thread_can_open_is_refused_at_once(void)
{
    nl_client *c;
    nl_websocket *ws;
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    char *err = NULL;
    int calls = 0;
    if (skipped()) return;
    c = client_for(NULL);
    cb.on_open = ws_counting_open;
    cb.on_error = ws_counting_error;
    cb.on_close = ws_freeing_close;
    cb.user_data = &calls;
    refuse(1);
    ws = nl_websocket_open(c, "{\"path\": \"ws\"}", &cb, &err);
    refuse(0);
    CHECK(ws == NULL);
    CHECK_MSG(err != NULL && nlt_stristr(err, "could not start the event-loop thread") != NULL, "error %s",
              err ? err : "(none)");
    CHECK_INT_EQ(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 0);
    nl_free(err);
    nl_client_free(c);
    CHECK_INT_EQ(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 0);
}

/* A blocking request needs no thread of the library: it runs on its caller's. */
static void test_a_blocking_request_needs_no_thread(void)
{
    nl_client *c;
    json_t *r;
    if (skipped()) return;
    c = client_for(NULL);
    refuse(1);
    r = request_json(c, "{\"path\": \"json\"}");
    refuse(0);
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_an_asynchronous_request_fails_once_when_no_thread_can_start),
        NLT_TEST(test_a_hooked_request_with_no_thread_runs_once),
        NLT_TEST(test_a_blocking_request_needs_no_thread),
        NLT_TEST(test_a_websocket_no_thread_can_open_is_refused_at_once),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
