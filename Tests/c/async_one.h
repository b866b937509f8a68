/*
 * async_one.h — one asynchronous request's result, for C tests that start requests
 * with nl_request_async and wait for them: init, pass async_one_cb and the struct,
 * wait, then destroy. Include after harness.h.
 */
#ifndef NETLAYER_TEST_ASYNC_ONE_H
#define NETLAYER_TEST_ASYNC_ONE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

typedef struct async_one {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int calls;
    json_t *result;
} async_one;

static inline double async_one_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1.0e9;
}

static inline void async_one_init(async_one *a)
{
    pthread_mutex_init(&a->m, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->calls = 0;
    a->result = NULL;
}

static inline void async_one_destroy(async_one *a)
{
    json_decref(a->result);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->m);
}

/* The completion callback: keeps the first result, counts every call. */
static inline void async_one_cb(uint64_t id, const char *result_json, void *user_data)
{
    async_one *a = (async_one *)user_data;
    json_t *j = nlt_parse(result_json, "async callback");
    (void)id;
    pthread_mutex_lock(&a->m);
    a->calls++;
    if (a->result == NULL)
        a->result = j;
    else
        json_decref(j);
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->m);
}

/* Waits up to `seconds` for the callback; whether it came. */
static inline int async_one_wait(async_one *a, double seconds)
{
    double end = async_one_now() + seconds;
    int done;
    pthread_mutex_lock(&a->m);
    while (a->calls == 0 && async_one_now() < end) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&a->cv, &a->m, &ts);
    }
    done = a->calls > 0;
    pthread_mutex_unlock(&a->m);
    return done;
}

/* Whether the callback came (without waiting). */
static inline int async_one_done(async_one *a)
{
    int done;
    pthread_mutex_lock(&a->m);
    done = a->calls > 0;
    pthread_mutex_unlock(&a->m);
    return done;
}

#endif /* NETLAYER_TEST_ASYNC_ONE_H */
