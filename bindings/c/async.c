/*
 * Asynchronous requests in C: start several at once, get each result in a
 * callback on a library thread, cancel one, and wait for all.
 *
 *   ./netlayer_example_async http://127.0.0.1:8080/
 */
#include <netlayer.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t done;
    int pending;
    int ok;
} tally;

/* Runs once per request, on a library thread; result_json is only valid here. */
static void on_result(uint64_t id, const char *result_json, void *user_data) {
    tally *t = (tally *)user_data;
    int ok = strstr(result_json, "\"ok\":true") != NULL;
    printf("request %llu: %.120s%s\n", (unsigned long long)id, result_json, strlen(result_json) > 120 ? "..." : "");
    pthread_mutex_lock(&t->lock);
    t->ok += ok;
    if (--t->pending == 0) pthread_cond_signal(&t->done);
    pthread_mutex_unlock(&t->lock);
}

int main(int argc, char **argv) {
    char config[512];
    char *error = NULL;
    nl_client *client;
    tally t;
    uint64_t slow;
    int i;

    if (argc < 2) {
        fprintf(stderr, "usage: %s BASE_URL\n", argv[0]);
        return 2;
    }
    snprintf(config, sizeof config, "{\"baseURL\": \"%s\", \"maxConcurrent\": 16}", argv[1]);
    client = nl_client_new(config, &error);
    if (!client) {
        fprintf(stderr, "bad config: %s\n", error);
        nl_free(error);
        return 2;
    }
    pthread_mutex_init(&t.lock, NULL);
    pthread_cond_init(&t.done, NULL);
    t.pending = 6;
    t.ok = 0;

    /* Five movies at once: they share the client's connections. */
    for (i = 1; i <= 5; i++) {
        char endpoint[128];
        snprintf(endpoint, sizeof endpoint, "{\"path\": \"movies/%d\", \"response\": {\"keyPath\": \"data.title\"}}", i);
        nl_request_async(client, endpoint, on_result, &t);
    }
    /* A slow one we give up on: its callback reports kind "cancelled". */
    slow = nl_request_async(client, "{\"path\": \"delay/5000\"}", on_result, &t);
    printf("cancel(%llu) -> %d\n", (unsigned long long)slow, nl_cancel(client, slow));

    pthread_mutex_lock(&t.lock);
    while (t.pending > 0) pthread_cond_wait(&t.done, &t.lock);
    pthread_mutex_unlock(&t.lock);
    printf("%d of 6 succeeded (movies 4 and 5 do not exist, one was cancelled)\n", t.ok);

    nl_client_free(client); /* returns once no callback can run any more */
    pthread_cond_destroy(&t.done);
    pthread_mutex_destroy(&t.lock);
    return t.ok == 3 ? 0 : 1;
}
