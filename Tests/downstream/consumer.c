/* A downstream program: links netlayer::netlayer and makes one request. */
#include <netlayer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    const char *base = getenv("NETLAYER_TEST_URL");
    char config[512];
    char *error = NULL;
    nl_client *client;
    char *result;
    int ok;

    if (nl_abi_version() != NL_ABI_VERSION || strcmp(nl_version(), NL_VERSION_STRING) != 0) {
        fprintf(stderr, "header/library mismatch: %s vs %s\n", nl_version(), NL_VERSION_STRING);
        return 1;
    }
    if (!base) { fprintf(stderr, "NETLAYER_TEST_URL is not set\n"); return 1; }
    snprintf(config, sizeof config, "{\"baseURL\": \"%s\"}", base);
    client = nl_client_new(config, &error);
    if (!client) { fprintf(stderr, "nl_client_new: %s\n", error); nl_free(error); return 1; }
    result = nl_request(client, "{\"path\": \"json\", \"response\": {\"keyPath\": \"title\"}}");
    ok = result && strstr(result, "\"ok\":true") && strstr(result, "\"value\":\"Dune\"");
    printf("downstream result: %s\n", result ? result : "(null)");
    nl_free(result);
    nl_client_free(client);
    return ok ? 0 : 1;
}
