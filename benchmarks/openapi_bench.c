/*
 * openapi_bench.c — what an OpenAPI document costs: the time nl_client_new takes to
 * load one (beside a client without it), and the time per call of an operation with
 * nl_call against the same request written as an endpoint document for nl_request.
 * Both clients answer from a stub transport, so only Netlayer's own work is timed:
 * reading the arguments, checking them against the document, building the request.
 *
 * usage: openapi_bench SPEC OPERATION ROUNDS CALLS
 *   SPEC       petstore (Tests/openapi/petstore-openapi.yaml) or openai (the 3.4 MB
 *              OpenAI description, unpacked by run_openapi.sh); the path comes from
 *              the environment: NETLAYER_SPEC_FILE
 * Prints one Markdown table row per measure, medians over ROUNDS interleaved rounds.
 */
#define _POSIX_C_SOURCE 200809L
#include <netlayer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, compare);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static nl_client *make_client(const char *spec, int with_openapi)
{
    char config[4096], *error = NULL;
    nl_client *c;
    snprintf(config, sizeof config,
             "{\"baseURL\": \"http://api.test/v1/\", \"stub\": [{\"path\": \"**\", \"body\": {\"ok\": true}}]%s%s%s}",
             with_openapi ? ", \"openapi\": {\"file\": \"" : "", with_openapi ? spec : "",
             with_openapi ? "\", \"credentials\": {\"api_key\": \"k\"}}" : "");
    if (strstr(spec, "openai") && with_openapi)
        snprintf(config, sizeof config,
                 "{\"baseURL\": \"http://api.test/v1/\", \"stub\": [{\"path\": \"**\", \"body\": {\"ok\": true}}],"
                 " \"openapi\": {\"file\": \"%s\", \"credentials\": {\"ApiKeyAuth\": \"k\"}}}", spec);
    c = nl_client_new(config, &error);
    if (!c) {
        fprintf(stderr, "openapi_bench: %s\n", error ? error : "nl_client_new failed");
        exit(1);
    }
    return c;
}

/* The overlay of call i and the equivalent endpoint document (distinct: i in them). */
static void documents(const char *operation, long i, char *overlay, char *endpoint, size_t size)
{
    if (strcmp(operation, "getPetById") == 0) {
        snprintf(overlay, size, "{\"params\": {\"petId\": %ld}}", i);
        snprintf(endpoint, size, "{\"path\": \"pet/%ld\", \"headers\": {\"api_key\": \"k\"}}", i);
    } else if (strcmp(operation, "findPetsByStatus") == 0) {
        snprintf(overlay, size, "{\"params\": {\"status\": \"sold\"}, \"query\": {\"page\": %ld}}", i);
        snprintf(endpoint, size, "{\"path\": \"pet/findByStatus\", \"query\": {\"status\": \"sold\", \"page\": %ld}}", i);
    } else {  /* createChatCompletion: a body checked against a large schema */
        const char *body = "{\"model\": \"gpt-4o\", \"temperature\": 0.5, \"messages\": [{\"role\": \"system\", \"content\": \"be brief\"},"
                           " {\"role\": \"user\", \"content\": \"question %ld\"}]}";
        char b[512];
        snprintf(b, sizeof b, body, i);
        snprintf(overlay, size, "{\"body\": %s}", b);
        snprintf(endpoint, size, "{\"method\": \"POST\", \"path\": \"chat/completions\", \"body\": %s,"
                                 " \"headers\": {\"Authorization\": \"Bearer k\"}}", b);
    }
}

/* Microseconds per request over `calls` calls; `distinct`: a new document each. */
static double per_call(nl_client *c, const char *operation, int by_name, int distinct, long calls)
{
    char overlay[1024], endpoint[1024];
    double t0 = now_us();
    long i;
    documents(operation, 7, overlay, endpoint, sizeof overlay);
    for (i = 0; i < calls; i++) {
        const char *result;
        if (distinct) documents(operation, i, overlay, endpoint, sizeof overlay);
        result = by_name ? nl_call_borrowed(c, operation, overlay) : nl_request_borrowed(c, endpoint);
        if (!result || strncmp(result, "{\"ok\":true", 10) != 0) {
            fprintf(stderr, "openapi_bench: %s failed: %.300s\n", by_name ? operation : endpoint, result ? result : "NULL");
            exit(1);
        }
    }
    return (now_us() - t0) / (double)calls;
}

int main(int argc, char **argv)
{
    const char *spec = getenv("NETLAYER_SPEC_FILE");
    const char *name = argc > 1 ? argv[1] : "petstore", *operation = argc > 2 ? argv[2] : "getPetById";
    int rounds = argc > 3 ? atoi(argv[3]) : 7, r, k;
    long calls = argc > 4 ? atol(argv[4]) : 20000;
    double load[64], bare[64], measures[4][64];
    nl_client *plain, *api;
    if (!spec || rounds < 1 || rounds > 64 || calls < 1) {
        fprintf(stderr, "usage: NETLAYER_SPEC_FILE=PATH openapi_bench NAME OPERATION ROUNDS CALLS\n");
        return 2;
    }
    plain = make_client(spec, 0);
    api = make_client(spec, 1);
    per_call(api, operation, 1, 1, calls / 10 + 1);  /* warm-up */
    per_call(plain, operation, 0, 1, calls / 10 + 1);
    for (r = 0; r < rounds; r++) {
        double t0 = now_us();
        nl_client_free(make_client(spec, 1));
        load[r] = (now_us() - t0) / 1000;
        t0 = now_us();
        nl_client_free(make_client(spec, 0));
        bare[r] = (now_us() - t0) / 1000;
        for (k = 0; k < 4; k++) {  /* call and request, distinct and repeated, interleaved */
            int by_name = k % 2 == 0, distinct = k < 2;
            measures[k][r] = per_call(by_name ? api : plain, operation, by_name, distinct, calls);
        }
    }
    nl_client_free(api);
    nl_client_free(plain);
    {
        double call_d = median(measures[0], rounds), req_d = median(measures[1], rounds);
        double call_r = median(measures[2], rounds), req_r = median(measures[3], rounds);
        printf("| %s | %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", name, operation,
               median(load, rounds), median(bare, rounds), call_r, req_r, call_r - req_r, call_d, req_d, call_d - req_d);
    }
    return 0;
}
