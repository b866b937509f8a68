/*
 * test_queue.c — completion queues: nl_queue_push as the callback of
 * asynchronous requests, the readable descriptor, taking results in batches,
 * cancellation and freeing the client with requests in flight.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <errno.h>
#include <poll.h>

/* Waits up to `timeout_ms` for the queue's descriptor to become readable. */
static int queue_readable(nl_queue *q, int timeout_ms)
{
    struct pollfd p;
    int n;
    p.fd = nl_queue_fd(q);
    p.events = POLLIN;
    p.revents = 0;
    do {
        n = poll(&p, 1, timeout_ms);
    } while (n < 0 && errno == EINTR);
    return n == 1 && (p.revents & POLLIN);
}

/* Takes the queue's results and parses them; fails the check when the text is not a
 * JSON array of {"id", "result"} objects. */
static json_t *take_array(nl_queue *q)
{
    char *text = nl_queue_take(q);
    json_t *arr = nlt_parse(text, "nl_queue_take");
    size_t i;
    CHECK_MSG(json_is_array(arr), "nl_queue_take returned %.300s", text ? text : "(null)");
    for (i = 0; json_is_array(arr) && i < json_array_size(arr); i++) {
        json_t *item = json_array_get(arr, i);
        CHECK_MSG(json_is_integer(json_object_get(item, "id")) && json_is_object(json_object_get(item, "result")),
                  "element %u: %.300s", (unsigned)i, text);
    }
    nl_free(text);
    return arr;
}

/* Collects results until `want` arrived or `timeout_ms` passed; appends each element
 * to `into` (a JSON array). Returns the number collected. */
static size_t collect(nl_queue *q, json_t *into, size_t want, int timeout_ms)
{
    double deadline = now_ms() + timeout_ms;
    while (json_array_size(into) < want) {
        double left = deadline - now_ms();
        json_t *arr;
        if (left <= 0 || !queue_readable(q, (int)left))
            break;
        arr = take_array(q);
        if (json_is_array(arr))
            json_array_extend(into, arr);
        json_decref(arr);
    }
    return json_array_size(into);
}

static json_t *find_id(json_t *items, uint64_t id)
{
    size_t i;
    for (i = 0; i < json_array_size(items); i++) {
        json_t *item = json_array_get(items, i);
        if ((uint64_t)json_integer_value(json_object_get(item, "id")) == id)
            return json_object_get(item, "result");
    }
    return NULL;
}

static void test_empty_queue_takes_empty_array_and_is_not_readable(void)
{
    nl_queue *q = nl_queue_new();
    char *text;
    REQUIRE(q != NULL);
    CHECK(nl_queue_fd(q) >= 0);
    CHECK(!queue_readable(q, 0));
    text = nl_queue_take(q);
    CHECK_STR_EQ(text, "[]");
    nl_free(text);
    nl_queue_free(q);
}

static void test_null_queue_arguments_are_harmless(void)
{
    CHECK_INT_EQ(nl_queue_fd(NULL), -1);
    CHECK(nl_queue_take(NULL) == NULL);
    nl_queue_push(1, "{}", NULL);
    nl_queue_free(NULL);
}

static void test_pushes_are_taken_in_order_in_one_array(void)
{
    nl_queue *q = nl_queue_new();
    json_t *arr;
    REQUIRE(q != NULL);
    nl_queue_push(7, "{\"ok\":true,\"n\":1}", q);
    CHECK(queue_readable(q, 0));
    nl_queue_push(18446744073709551615ull, "{\"ok\":false,\"n\":2}", q);
    nl_queue_push(9, NULL, q);
    CHECK(queue_readable(q, 0));
    {
        char *text = nl_queue_take(q);
        CHECK_STR_EQ(text, "[{\"id\":7,\"result\":{\"ok\":true,\"n\":1}},"
                           "{\"id\":18446744073709551615,\"result\":{\"ok\":false,\"n\":2}},"
                           "{\"id\":9,\"result\":null}]");
        nl_free(text);
    }
    CHECK_MSG(!queue_readable(q, 0), "the descriptor stays readable after the queue was emptied");
    arr = take_array(q);
    CHECK_INT_EQ(json_array_size(arr), 0);
    json_decref(arr);
    /* text that is not JSON is pushed as a failure document: the array stays JSON */
    nl_queue_push(11, "not json", q);
    nl_queue_push(12, "{\"a\": \"\\u00e9\", \"b\": 1.5e300}", q);  /* JSON the fast check leaves to the parser */
    arr = take_array(q);
    CHECK_INT_EQ(json_array_size(arr), 2);
    CHECK_STR_EQ(jpath_str(json_array_get(arr, 0), "result.error.kind"), "invalid_request");
    CHECK_MSG(strstr(jpath_str(json_array_get(arr, 0), "result.error.message"), "not a JSON document") != NULL, "%s",
              jpath_str(json_array_get(arr, 0), "result.error.message"));
    CHECK_STR_EQ(jpath_str(json_array_get(arr, 1), "result.a"), "\xc3\xa9");
    json_decref(arr);
    /* readable again after the next push */
    nl_queue_push(10, "{}", q);
    CHECK(queue_readable(q, 0));
    nl_queue_free(q); /* frees the result still in it */
}

static void test_async_requests_push_their_results(void)
{
    nl_client *c = client_for(NULL);
    nl_queue *q = nl_queue_new();
    json_t *items = json_array();
    uint64_t issued[100];
    int i;
    REQUIRE(q != NULL);
    for (i = 0; i < 100; i++) {
        char doc[128];
        snprintf(doc, sizeof(doc), "{\"path\": \"echo\", \"query\": {\"n\": %d}}", i);
        issued[i] = i % 2 ? nl_request_async(c, doc, nl_queue_push, q)
                          : nl_call_async(c, "missing", NULL, nl_queue_push, q);
        CHECK(issued[i] != 0);
    }
    CHECK_INT_EQ(collect(q, items, 100, 10000), 100);
    for (i = 0; i < 100; i++) {
        json_t *r = find_id(items, issued[i]);
        char want[16];
        REQUIRE_MSG(r != NULL, "no result for request %d (id %llu)", i, (unsigned long long)issued[i]);
        if (i % 2) {
            snprintf(want, sizeof(want), "%d", i);
            CHECK_OK(r);
            CHECK_STR_EQ(jpath_str(r, "value.args.n.0"), want);
        } else {
            CHECK_STR_EQ(error_kind(r), "invalid_request");
        }
    }
    CHECK(!queue_readable(q, 0));
    nl_client_free(c);
    nl_queue_free(q);
    json_decref(items);
}

static void test_cancelled_request_pushes_cancelled(void)
{
    nl_client *c = client_for(NULL);
    nl_queue *q = nl_queue_new();
    json_t *items = json_array();
    uint64_t id;
    REQUIRE(q != NULL);
    id = nl_request_async(c, "{\"path\": \"delay/3000\"}", nl_queue_push, q);
    REQUIRE(id != 0);
    sleep_ms(100);
    CHECK_INT_EQ(nl_cancel(c, id), 1);
    CHECK_INT_EQ(collect(q, items, 1, 2000), 1);
    CHECK_STR_EQ(error_kind(find_id(items, id)), "cancelled");
    nl_client_free(c);
    nl_queue_free(q);
    json_decref(items);
}

static void test_client_free_pushes_every_pending_result_before_returning(void)
{
    nl_client *c = client_for(NULL);
    nl_queue *q = nl_queue_new();
    json_t *arr;
    uint64_t issued[20];
    size_t i;
    REQUIRE(q != NULL);
    for (i = 0; i < 20; i++)
        issued[i] = nl_request_async(c, "{\"path\": \"delay/3000\"}", nl_queue_push, q);
    sleep_ms(50);
    nl_client_free(c);
    /* everything is in the queue now, without waiting */
    CHECK(queue_readable(q, 0));
    arr = take_array(q);
    CHECK_INT_EQ(json_array_size(arr), 20);
    for (i = 0; i < 20; i++)
        CHECK_STR_EQ(error_kind(find_id(arr, issued[i])), "cancelled");
    json_decref(arr);
    nl_queue_free(q);
}

/* Two clients and a producer thread push to one queue while the test thread takes. */
typedef struct producer {
    nl_queue *queue;
    int base;
} producer;

static void *producer_main(void *arg)
{
    producer *p = (producer *)arg;
    int i;
    for (i = 0; i < 2000; i++)
        nl_queue_push((uint64_t)(p->base + i), "{\"ok\":true}", p->queue);
    return NULL;
}

static void test_many_threads_and_clients_share_one_queue(void)
{
    nl_client *a = client_for(NULL);
    nl_client *b = client_for(NULL);
    nl_queue *q = nl_queue_new();
    json_t *items = json_array();
    pthread_t threads[2];
    producer producers[2];
    int i, seen[4000];
    size_t k;
    REQUIRE(q != NULL);
    for (i = 0; i < 2; i++) {
        producers[i].queue = q;
        producers[i].base = 1000000 + i * 2000;
        REQUIRE(pthread_create(&threads[i], NULL, producer_main, &producers[i]) == 0);
    }
    for (i = 0; i < 40; i++)
        CHECK(nl_request_async(i % 2 ? a : b, "{\"path\": \"json\"}", nl_queue_push, q) != 0);
    CHECK_INT_EQ(collect(q, items, 4040, 10000), 4040);
    /* The requests' ids are unique across the two clients: each result is told apart. */
    {
        json_int_t request_ids[40];
        size_t n = 0, x, y;
        for (k = 0; k < json_array_size(items); k++) {
            json_int_t id = json_integer_value(json_object_get(json_array_get(items, k), "id"));
            if (id < 1000000 && n < 40)
                request_ids[n++] = id;
        }
        CHECK_INT_EQ((int)n, 40);
        for (x = 0; x < n; x++)
            for (y = x + 1; y < n; y++)
                CHECK_MSG(request_ids[x] != request_ids[y], "two results of the shared queue carry the id %lld",
                          (long long)request_ids[x]);
    }
    for (i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    memset(seen, 0, sizeof(seen));
    for (k = 0; k < json_array_size(items); k++) {
        json_int_t id = json_integer_value(json_object_get(json_array_get(items, k), "id"));
        if (id >= 1000000 && id < 1004000)
            seen[id - 1000000]++;
    }
    for (i = 0; i < 4000; i++)
        if (seen[i] != 1) {
            CHECK_MSG(seen[i] == 1, "pushed id %d taken %d times", 1000000 + i, seen[i]);
            break;
        }
    nl_client_free(a);
    nl_client_free(b);
    nl_queue_free(q);
    json_decref(items);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_empty_queue_takes_empty_array_and_is_not_readable),
        NLT_TEST(test_null_queue_arguments_are_harmless),
        NLT_TEST(test_pushes_are_taken_in_order_in_one_array),
        NLT_TEST(test_async_requests_push_their_results),
        NLT_TEST(test_cancelled_request_pushes_cancelled),
        NLT_TEST(test_client_free_pushes_every_pending_result_before_returning),
        NLT_TEST(test_many_threads_and_clients_share_one_queue),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
