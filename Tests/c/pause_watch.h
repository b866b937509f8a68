/*
 * pause_watch.h — a chunks stream whose reader pauses it with nl_pause, for the C
 * tests of nl_pause: start_pause_watch starts the request (pausing from the callback
 * on the event `pause_at`, 0: never), the watch counts events and body bytes, and
 * finish_pause_watch waits for the result and checks every byte arrived. Include
 * after harness.h.
 */
#ifndef NETLAYER_TEST_PAUSE_WATCH_H
#define NETLAYER_TEST_PAUSE_WATCH_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A chunks stream whose reader pauses it: counts events and body bytes. */
typedef struct {
    nl_client *client;
    atomic_int events, completions, pause_at;  /* pause_at: nl_pause from the callback on this event */
    atomic_long bytes;
    char *result;
} pause_watch;

static inline long base64_length(const char *text)
{
    size_t n = strlen(text);
    long padding = (n > 0 && text[n - 1] == '=') + (n > 1 && text[n - 2] == '=');
    return (long)(n / 4 * 3) - padding;
}

static inline void pause_watch_stream(uint64_t id, const char *event_json, nl_reply *reply, void *user_data)
{
    pause_watch *w = user_data;
    json_t *ev = json_loads(event_json, 0, NULL);
    int n = atomic_fetch_add(&w->events, 1) + 1;
    (void)reply;
    if (ev && json_is_string(json_object_get(ev, "chunk")))
        atomic_fetch_add(&w->bytes, base64_length(json_string_value(json_object_get(ev, "chunk"))));
    json_decref(ev);
    if (n == atomic_load(&w->pause_at))
        CHECK_INT_EQ(nl_pause(w->client, id, 1), 1);
}

static inline void pause_watch_complete(uint64_t id, const char *result_json, void *user_data)
{
    pause_watch *w = user_data;
    (void)id;
    w->result = strdup(result_json);
    atomic_fetch_add(&w->completions, 1);
}

static inline uint64_t start_pause_watch(pause_watch *w, nl_client *c, const char *endpoint_json, int pause_at)
{
    nl_request_callbacks cb = NL_REQUEST_CALLBACKS_INIT;
    memset(w, 0, sizeof *w);
    w->client = c;
    atomic_store(&w->pause_at, pause_at);
    cb.on_complete = pause_watch_complete;
    cb.on_stream = pause_watch_stream;
    cb.user_data = w;
    return nl_request_start(c, endpoint_json, &cb);
}

/* Waits up to 30 s for the result: its text (the caller frees it), or NULL. */
static inline char *pause_watch_take_result(pause_watch *w)
{
    int waited;
    char *text;
    for (waited = 0; atomic_load(&w->completions) == 0 && waited < 30000; waited += 5) sleep_ms(5);
    text = w->result;
    w->result = NULL;
    return text;
}

/* The result, parsed (the caller frees it), or NULL after 30 s. */
static inline json_t *pause_watch_result(pause_watch *w, const char *what)
{
    char *text = pause_watch_take_result(w);
    json_t *r = text ? nlt_parse(text, what) : NULL;
    free(text);
    return r;
}

/* The result, checked: ok, and `expected_bytes` of body in the events. The caller
 * frees it. */
static inline json_t *finish_pause_watch(pause_watch *w, const char *what, long expected_bytes)
{
    char *text = pause_watch_take_result(w);
    json_t *r;
    REQUIRE(text != NULL);
    r = nlt_parse(text, what);
    CHECK_MSG(json_is_true(json_object_get(r, "ok")), "%s: %.300s", what, text);
    CHECK_MSG(atomic_load(&w->bytes) == expected_bytes, "%s: %ld bytes of %ld", what,
              atomic_load(&w->bytes), expected_bytes);
    free(text);
    return r;
}

#endif /* NETLAYER_TEST_PAUSE_WATCH_H */
