/*
 * A movie-catalogue client in C: config with named endpoints, a call with
 * parameters, and error handling by kind.
 *
 *   ./netlayer_example_movies http://127.0.0.1:8080/
 */
#include <netlayer.h>
#include <stdio.h>
#include <string.h>

static int show(const char *what, char *result) {
    int ok = result != NULL && strstr(result, "\"ok\":true") != NULL;
    printf("%-14s %s\n", what, result ? result : "(out of memory)");
    nl_free(result); /* every string the library returns is ours to free */
    return ok;
}

int main(int argc, char **argv) {
    char config[1024];
    char *error = NULL;
    nl_client *client;
    int ok = 1;

    if (argc < 2) {
        fprintf(stderr, "usage: %s BASE_URL\n", argv[0]);
        return 2;
    }
    snprintf(config, sizeof config,
             "{\"baseURL\": \"%s\", \"timeout\": 5,"
             " \"headers\": {\"Accept\": \"application/json\"},"
             " \"endpoints\": {"
             "   \"popular\": {\"path\": \"movies\", \"response\": {\"keyPath\": \"results\"}},"
             "   \"movie\":   {\"path\": \"movies/{id}\", \"response\": {\"keyPath\": \"data\"}},"
             "   \"add\":     {\"path\": \"movies\", \"method\": \"POST\"}}}",
             argv[1]);
    client = nl_client_new(config, &error);
    if (!client) {
        fprintf(stderr, "bad config: %s\n", error);
        nl_free(error);
        return 2;
    }
    ok &= show("popular", nl_call(client, "popular", NULL));
    ok &= show("movie 2", nl_call(client, "movie", "{\"params\": {\"id\": 2}}"));
    ok &= show("add", nl_call(client, "add", "{\"body\": {\"title\": \"Solaris\"}}"));
    /* A 404 is an error of kind "status", with the server's body kept. */
    ok &= !show("movie 99", nl_call(client, "movie", "{\"params\": {\"id\": 99}}"));
    /* A typo is caught before anything is sent. */
    ok &= !show("typo", nl_request(client, "{\"pathh\": \"movies\"}"));
    nl_client_free(client);
    return ok ? 0 : 1;
}
