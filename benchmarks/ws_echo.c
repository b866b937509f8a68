/*
 * ws_echo.c — the echo run of benchmarks/websocket.py through the C ABI: COUNT text
 * messages of SIZE bytes to URL, at most WINDOW unanswered, every echo read (after 200
 * warm-up messages). Prints {"seconds": S, "cpu": C} (C: the process's user + system
 * CPU over the measured part, every thread).
 *
 *     ws_echo URL COUNT SIZE WINDOW COMPRESSION(0|1)
 *
 * With `idle N` instead, the idle run: opens N connections to URL/silent (the
 * library's defaults), waits until all are open, and prints {"before": B, "after": A,
 * "open": N}: the process's resident memory (VmRSS) before (after one connection was
 * opened and closed) and with the N open.
 *
 *     ws_echo URL idle N
 */
#include <netlayer.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct counter {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long received;
    size_t expected_length;
    int bad, closed, opened;
} counter;

static void on_open(nl_websocket *ws, const char *open_json, void *user_data)
{
    counter *c = user_data;
    (void)ws;
    (void)open_json;
    pthread_mutex_lock(&c->lock);
    c->opened++;
    pthread_cond_signal(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

static void on_message(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data)
{
    counter *c = user_data;
    (void)ws;
    (void)data;
    pthread_mutex_lock(&c->lock);
    c->received++;
    c->bad += kind != NL_WS_TEXT || length != c->expected_length;
    pthread_cond_signal(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

static void on_close(nl_websocket *ws, int code, const char *reason, void *user_data)
{
    counter *c = user_data;
    (void)ws;
    (void)code;
    (void)reason;
    pthread_mutex_lock(&c->lock);
    c->closed = 1;
    pthread_cond_signal(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sends `count` messages, at most `window` ahead of the echoes; 0 when all came back. */
static int run(nl_websocket *ws, counter *c, const char *payload, size_t size, long count, long window)
{
    long sent = 0, start;
    pthread_mutex_lock(&c->lock);
    start = c->received;
    while (c->received - start < count && !c->closed) {
        while (sent < count && sent - (c->received - start) < window) {
            pthread_mutex_unlock(&c->lock);
            if (nl_websocket_send(ws, NL_WS_TEXT, payload, size, NULL) != 0)
                return -1;
            sent++;
            pthread_mutex_lock(&c->lock);
        }
        if (c->received - start < count && !c->closed)
            pthread_cond_wait(&c->changed, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return c->closed || c->bad ? -1 : 0;
}

static long rss_bytes(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib * 1024;
}

/* Opens `n` connections to /silent (NULL `held`: one, closed again); how many opened. */
static int open_idle(nl_client *client, counter *c, nl_websocket **held, int n)
{
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    nl_websocket *one = NULL;
    int i, opened;
    cb.on_open = on_open;
    cb.user_data = c;
    for (i = 0; i < n; i++) {
        nl_websocket *ws = nl_websocket_open(client, "{\"path\": \"silent\"}", &cb, NULL);
        if (held)
            held[i] = ws;
        else
            one = ws;
    }
    pthread_mutex_lock(&c->lock);
    while (c->opened < n)   /* on_open counts here */
        pthread_cond_wait(&c->changed, &c->lock);
    opened = c->opened;
    c->opened = 0;
    pthread_mutex_unlock(&c->lock);
    if (one)
        nl_websocket_free(one);
    return opened;
}

static int idle_run(const char *url, int n)
{
    char config[512];
    counter c;
    nl_websocket **held = calloc((size_t)n, sizeof *held);
    nl_client *client;
    long before;
    int opened;
    snprintf(config, sizeof config, "{\"baseURL\": \"%s\", \"timeout\": 30}", url);
    if (!(client = nl_client_new(config, NULL)))
        return 1;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.changed, NULL);
    open_idle(client, &c, NULL, 1);
    before = rss_bytes();
    opened = open_idle(client, &c, held, n);
    {
        struct timespec pause = { 0, 500000000L };
        nanosleep(&pause, NULL);
    }
    printf("{\"before\": %ld, \"after\": %ld, \"open\": %d}\n", before, rss_bytes(), opened);
    fflush(stdout);
    _exit(0);   /* the connections go with the process; closing them is not measured */
}

int main(int argc, char **argv)
{
    nl_websocket_callbacks cb = NL_WEBSOCKET_CALLBACKS_INIT;
    counter c;
    char config[512], document[256], *error = NULL, *payload;
    nl_client *client;
    nl_websocket *ws;
    long count, window;
    size_t size;
    double cpu, wall;
    if (argc == 4 && strcmp(argv[2], "idle") == 0)
        return idle_run(argv[1], atoi(argv[3]));
    if (argc != 6) {
        fprintf(stderr, "usage: ws_echo URL COUNT SIZE WINDOW COMPRESSION\n");
        return 2;
    }
    count = atol(argv[2]);
    size = (size_t)atol(argv[3]);
    window = atol(argv[4]);
    snprintf(config, sizeof config, "{\"baseURL\": \"%s\", \"timeout\": 30}", argv[1]);
    snprintf(document, sizeof document, "{\"path\": \"echo\", \"compression\": %s}",
             atoi(argv[5]) ? "true" : "false");
    if (!(client = nl_client_new(config, &error))) {
        fprintf(stderr, "nl_client_new: %s\n", error);
        return 1;
    }
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.changed, NULL);
    c.expected_length = size;
    cb.on_open = on_open;
    cb.on_message = on_message;
    cb.on_close = on_close;
    cb.user_data = &c;
    if (!(ws = nl_websocket_open(client, document, &cb, &error))) {
        fprintf(stderr, "nl_websocket_open: %s\n", error);
        return 1;
    }
    payload = malloc(size);
    memset(payload, 'x', size);
    if (run(ws, &c, payload, size, 200, window) != 0) {
        fprintf(stderr, "the warm-up failed\n");
        return 1;
    }
    cpu = cpu_seconds();
    wall = wall_seconds();
    if (run(ws, &c, payload, size, count, window) != 0) {
        fprintf(stderr, "the run failed\n");
        return 1;
    }
    wall = wall_seconds() - wall;
    cpu = cpu_seconds() - cpu;
    printf("{\"seconds\": %.6f, \"cpu\": %.6f}\n", wall, cpu);
    nl_websocket_close(ws, 1000, NULL, NULL);
    pthread_mutex_lock(&c.lock);
    while (!c.closed)
        pthread_cond_wait(&c.changed, &c.lock);
    pthread_mutex_unlock(&c.lock);
    nl_websocket_free(ws);
    nl_client_free(client);
    free(payload);
    return 0;
}
