/*
 * netlayer — a small command-line client over libnetlayer.
 *
 *   netlayer request ENDPOINT.json [--config CONFIG.json] [--pretty]
 *   netlayer call NAME [key=value ...] --config CONFIG.json [--pretty]
 *
 * Files may be "-" for standard input. Prints the result document.
 * Exit status: 0 when the result is ok, 1 for an HTTP or transport error,
 * 2 for bad input (usage, unreadable files, kind "invalid_request").
 */
#include <netlayer.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fputs("usage: netlayer request ENDPOINT.json [--config CONFIG.json] [--pretty]\n"
          "       netlayer call NAME [key=value ...] --config CONFIG.json [--pretty]\n"
          "       netlayer --version\n"
          "Prints the result document; exit 0 when ok, 1 on an HTTP or transport error, 2 on bad input.\n",
          out);
}

/* Reads a whole file ("-" is stdin) into a NUL-terminated buffer the caller frees. */
static char *read_file(const char *path) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *data = NULL;
    size_t size = 0, cap = 0, n;
    if (!f) {
        fprintf(stderr, "netlayer: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    do {
        if (cap - size < 4096) {
            char *grown = realloc(data, cap = cap * 2 + 8192);
            if (!grown) { free(data); data = NULL; break; }
            data = grown;
        }
        n = fread(data + size, 1, cap - size - 1, f);
        size += n;
    } while (n > 0);
    if (f != stdin) fclose(f);
    if (data) data[size] = '\0';
    return data;
}

/* Appends `s` to `out` as a JSON string literal. */
static void append_json_string(char **out, size_t *len, size_t *cap, const char *s) {
    size_t need = strlen(s) * 6 + 3;
    const char *hex = "0123456789abcdef";
    if (*len + need >= *cap) {
        *cap = (*len + need) * 2;
        *out = realloc(*out, *cap);
        if (!*out) exit(2);
    }
    (*out)[(*len)++] = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { (*out)[(*len)++] = '\\'; (*out)[(*len)++] = (char)c; }
        else if (c < 0x20) {
            memcpy(*out + *len, "\\u00", 4); *len += 4;
            (*out)[(*len)++] = hex[c >> 4]; (*out)[(*len)++] = hex[c & 15];
        } else (*out)[(*len)++] = (char)c;
    }
    (*out)[(*len)++] = '"';
    (*out)[*len] = '\0';
}

/* Prints compact JSON with two-space indentation. */
static void print_pretty(const char *json) {
    int depth = 0, in_string = 0, i;
    const char *p;
    for (p = json; *p; p++) {
        char c = *p;
        if (in_string) {
            putchar(c);
            if (c == '\\' && p[1]) putchar(*++p);
            else if (c == '"') in_string = 0;
            continue;
        }
        switch (c) {
        case '"': in_string = 1; putchar(c); break;
        case '{': case '[':
            putchar(c);
            if (p[1] == '}' || p[1] == ']') { putchar(*++p); break; }
            depth++; putchar('\n'); for (i = 0; i < depth; i++) fputs("  ", stdout);
            break;
        case '}': case ']':
            depth--; putchar('\n'); for (i = 0; i < depth; i++) fputs("  ", stdout); putchar(c);
            break;
        case ',':
            putchar(c); putchar('\n'); for (i = 0; i < depth; i++) fputs("  ", stdout);
            break;
        case ':': fputs(": ", stdout); break;
        default: putchar(c);
        }
    }
    putchar('\n');
}

int main(int argc, char **argv) {
    const char *config_path = NULL, *endpoint_path = NULL, *name = NULL;
    char *config = NULL, *endpoint = NULL, *overlay = NULL, *error = NULL, *result;
    size_t len = 0, cap = 0;
    int pretty = 0, status, i, params = 0;
    nl_client *client;

    if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
        printf("netlayer %s (ABI %d)\n", nl_version(), nl_abi_version());
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) { usage(stdout); return 0; }
    if (argc < 3 || (strcmp(argv[1], "request") != 0 && strcmp(argv[1], "call") != 0)) { usage(stderr); return 2; }

    overlay = malloc(cap = 256);
    if (!overlay) return 2;
    strcpy(overlay, "{\"params\":{");
    len = strlen(overlay);
    for (i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--pretty") == 0) pretty = 1;
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_path = argv[++i];
        else if (strncmp(argv[i], "--", 2) == 0) { fprintf(stderr, "netlayer: unknown option %s\n", argv[i]); usage(stderr); free(overlay); return 2; }
        else if (strcmp(argv[1], "request") == 0 && !endpoint_path) endpoint_path = argv[i];
        else if (strcmp(argv[1], "call") == 0 && !name) name = argv[i];
        else if (strcmp(argv[1], "call") == 0 && strchr(argv[i], '=')) {
            char *eq = strchr(argv[i], '=');
            *eq = '\0';
            if (params++) { overlay[len++] = ','; overlay[len] = '\0'; }
            append_json_string(&overlay, &len, &cap, argv[i]);
            overlay[len++] = ':'; overlay[len] = '\0';
            append_json_string(&overlay, &len, &cap, eq + 1);
        } else { fprintf(stderr, "netlayer: unexpected argument %s\n", argv[i]); usage(stderr); free(overlay); return 2; }
    }
    if (len + 3 >= cap) { char *grown = realloc(overlay, cap = len + 4); if (!grown) { free(overlay); return 2; } overlay = grown; }
    strcat(overlay, "}}");
    if ((strcmp(argv[1], "request") == 0 && !endpoint_path) || (strcmp(argv[1], "call") == 0 && (!name || !config_path))) {
        usage(stderr);
        free(overlay);
        return 2;
    }
    if (config_path && !(config = read_file(config_path))) { free(overlay); return 2; }
    if (endpoint_path && !(endpoint = read_file(endpoint_path))) { free(config); free(overlay); return 2; }

    client = nl_client_new(config, &error);
    free(config);
    if (!client) {
        if (pretty) print_pretty(error); else puts(error);
        nl_free(error);
        free(endpoint);
        free(overlay);
        return 2;
    }
    result = endpoint ? nl_request(client, endpoint) : nl_call(client, name, overlay);
    free(endpoint);
    free(overlay);
    if (!result) { nl_client_free(client); return 2; }
    if (pretty) print_pretty(result); else puts(result);
    status = strstr(result, "\"ok\":true") == result + 1 ? 0
           : strstr(result, "\"kind\":\"invalid_request\"") ? 2 : 1;
    nl_free(result);
    nl_client_free(client);
    return status;
}
