/*
 * test_borrowed.c — nl_request_borrowed and nl_call_borrowed: the result documents
 * the library lends to the calling thread (same documents as nl_request/nl_call,
 * valid until the thread's next borrowed call, one buffer per thread, freed with
 * the thread; valgrind checks the lifetimes). Lent documents are parsed, never freed.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

static void test_borrowed_result_is_the_document_nl_request_returns(void)
{
    nl_client *c = client_for(NULL);
    const char *lent = nl_request_borrowed(c, "{\"path\": \"json\"}");
    char *owned = nl_request(c, "{\"path\": \"json\"}");
    json_t *a = nlt_parse(lent, "nl_request_borrowed");
    json_t *b = nlt_parse(owned, "nl_request");
    CHECK_OK(a);
    CHECK_OK(b);
    CHECK_INT_EQ(result_status(a), 200);
    CHECK_STR_EQ(jpath_str(a, "value.title"), "Dune");
    /* the same document but for the values that change per request */
    json_object_del(a, "timing");
    json_object_del(b, "timing");
    json_object_del(json_object_get(a, "headers"), "date");
    json_object_del(json_object_get(b, "headers"), "date");
    CHECK_MSG(json_equal(a, b), "borrowed and owned results differ");
    json_decref(a);
    json_decref(b);
    nl_free(owned);
    nl_client_free(c);
}

static void test_lent_document_stays_valid_until_the_next_borrowed_call(void)
{
    nl_client *c = client_for(NULL);
    const char *first = nl_request_borrowed(c, "{\"path\": \"echo/first\"}");
    char *copy;
    char *owned;
    json_t *r;
    REQUIRE(first != NULL);
    copy = nlt_format("%s", first);
    REQUIRE(copy != NULL);

    /* other calls on this thread (owned results, another client) leave it alone */
    owned = nl_request(c, "{\"path\": \"echo/owned\"}");
    nl_free(owned);
    owned = nl_call(c, "nosuchendpoint", NULL);
    nl_free(owned);
    CHECK_STR_EQ(first, copy);
    r = nlt_parse(first, "nl_request_borrowed");
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/first");
    json_decref(r);

    /* the next borrowed call lends the new document */
    r = nlt_parse(nl_request_borrowed(c, "{\"path\": \"echo/second\"}"), "nl_request_borrowed");
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/second");
    json_decref(r);
    free(copy);
    nl_client_free(c);
}

static void test_large_then_small_documents_are_lent_whole(void)
{
    nl_client *c = client_for(NULL);
    size_t n = 300 * 1024;
    char *body = (char *)malloc(n + 1);
    char *endpoint;
    json_t *r;
    int round;
    REQUIRE(body != NULL);
    memset(body, 'x', n);
    body[n] = '\0';
    endpoint = nlt_format("{\"path\": \"echo\", \"method\": \"POST\", \"body\": \"%s\", "
                          "\"bodyEncoding\": \"text\"}", body);
    REQUIRE(endpoint != NULL);
    /* grows past the kept size, gives it back, grows again: each document whole */
    for (round = 0; round < 2; round++) {
        r = nlt_parse(nl_request_borrowed(c, endpoint), "nl_request_borrowed (large)");
        CHECK_OK(r);
        CHECK_INT_EQ((long long)jpath_num(r, "value.bodyLength", -1), (long long)n);
        CHECK_INT_EQ((long long)strlen(jpath_str(r, "value.body")), (long long)n);
        json_decref(r);
        r = nlt_parse(nl_request_borrowed(c, "{\"path\": \"json\"}"), "nl_request_borrowed (small)");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");
        json_decref(r);
    }
    free(endpoint);
    free(body);
    nl_client_free(c);
}

static void test_borrowed_calls_report_bad_input_as_documents(void)
{
    nl_client *c = client_for(
        "\"endpoints\": {\"movie\": {\"path\": \"movies/{id}\", \"response\": {\"keyPath\": \"data\"}}}");
    json_t *r;

    r = nlt_parse(nl_request_borrowed(NULL, "{\"path\": \"json\"}"), "nl_request_borrowed(NULL client)");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "client") != NULL, "message: %s", error_message(r));
    json_decref(r);

    r = nlt_parse(nl_request_borrowed(c, NULL), "nl_request_borrowed(NULL endpoint)");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);

    r = nlt_parse(nl_request_borrowed(c, "{\"path\": \"json\", \"nosuchkey\": 1}"), "nl_request_borrowed");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "nosuchkey") != NULL, "message: %s", error_message(r));
    json_decref(r);

    r = nlt_parse(nl_call_borrowed(c, "movie", "{\"params\": {\"id\": 2}}"), "nl_call_borrowed");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Arrival");
    json_decref(r);

    r = nlt_parse(nl_call_borrowed(c, "nosuchendpoint", NULL), "nl_call_borrowed");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "nosuchendpoint") != NULL, "message: %s", error_message(r));
    json_decref(r);

    r = nlt_parse(nl_call_borrowed(c, NULL, NULL), "nl_call_borrowed(NULL name)");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);

    r = nlt_parse(nl_call_borrowed(NULL, "movie", NULL), "nl_call_borrowed(NULL client)");
    CHECK_KIND(r, "invalid_request");
    json_decref(r);
    nl_client_free(c);
}

/* ---- one buffer per thread ----------------------------------------------------------- */

#define THREADS 6
#define ROUNDS 40

typedef struct worker {
    nl_client *client;
    int index;
    int mismatches;
    int failures;
} worker;

static void *borrowing_worker(void *arg)
{
    worker *w = (worker *)arg;
    char *endpoint = nlt_format("{\"path\": \"echo/thread-%d\"}", w->index);
    char *expected = nlt_format("/echo/thread-%d", w->index);
    int i;
    if (endpoint == NULL || expected == NULL) {
        w->failures++;
    } else {
        for (i = 0; i < ROUNDS; i++) {
            const char *lent = nl_request_borrowed(w->client, endpoint);
            json_t *r = lent ? json_loads(lent, 0, NULL) : NULL;
            const char *path = r ? jpath_str(r, "value.path") : NULL;
            if (r == NULL || !result_ok(r))
                w->failures++;
            else if (path == NULL || strcmp(path, expected) != 0)
                w->mismatches++;
            json_decref(r);
        }
    }
    free(endpoint);
    free(expected);
    return NULL; /* the thread's buffer is freed as it exits (valgrind: no leak) */
}

static void test_each_thread_borrows_its_own_buffer(void)
{
    nl_client *c = client_for("\"maxConcurrent\": 8");
    pthread_t threads[THREADS];
    worker workers[THREADS];
    int i;
    for (i = 0; i < THREADS; i++) {
        workers[i].client = c;
        workers[i].index = i;
        workers[i].mismatches = 0;
        workers[i].failures = 0;
        REQUIRE(pthread_create(&threads[i], NULL, borrowing_worker, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK_INT_EQ(workers[i].failures, 0);
        CHECK_MSG(workers[i].mismatches == 0, "thread %d read another thread's document %d times", i,
                  workers[i].mismatches);
    }
    nl_client_free(c);
}

/* ---- inside a callback --------------------------------------------------------------- */

typedef struct reentry {
    nl_client *client;
    pthread_mutex_t lock;
    int done;
    char kind[64];
    char message[512];
} reentry;

static void reentry_cb(uint64_t id, const char *result_json, void *user_data)
{
    reentry *re = (reentry *)user_data;
    json_t *outer = json_loads(result_json, 0, NULL);
    json_t *r = json_loads(nl_request_borrowed(re->client, "{\"path\": \"json\"}"), 0, NULL);
    (void)id;
    pthread_mutex_lock(&re->lock);
    snprintf(re->kind, sizeof(re->kind), "%s", r ? error_kind(r) : "(unparsable)");
    snprintf(re->message, sizeof(re->message), "%s", r ? error_message(r) : "(unparsable)");
    re->done = outer != NULL ? 1 : -1;
    pthread_mutex_unlock(&re->lock);
    json_decref(r);
    json_decref(outer);
}

static void test_borrowed_call_inside_a_callback_is_invalid_request(void)
{
    nl_client *c = client_for(NULL);
    reentry re;
    double deadline = now_ms() + 10000;
    memset(&re, 0, sizeof(re));
    re.client = c;
    pthread_mutex_init(&re.lock, NULL);
    CHECK(nl_request_async(c, "{\"path\": \"json\"}", reentry_cb, &re) != 0);
    pthread_mutex_lock(&re.lock);
    while (!re.done && now_ms() < deadline) {
        pthread_mutex_unlock(&re.lock);
        sleep_ms(5);
        pthread_mutex_lock(&re.lock);
    }
    pthread_mutex_unlock(&re.lock);
    REQUIRE_MSG(re.done != 0, "the callback did not finish (deadlock?)");
    nl_client_free(c);
    CHECK_STR_EQ(re.kind, "invalid_request");
    CHECK_MSG(strstr(re.message, "nl_request_borrowed") != NULL, "message: %s", re.message);
    CHECK_INT_EQ(re.done, 1);
    pthread_mutex_destroy(&re.lock);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_borrowed_result_is_the_document_nl_request_returns),
        NLT_TEST(test_lent_document_stays_valid_until_the_next_borrowed_call),
        NLT_TEST(test_large_then_small_documents_are_lent_whole),
        NLT_TEST(test_borrowed_calls_report_bad_input_as_documents),
        NLT_TEST(test_each_thread_borrows_its_own_buffer),
        NLT_TEST(test_borrowed_call_inside_a_callback_is_invalid_request),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
