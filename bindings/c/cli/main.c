/*
 * netlayer — a command-line HTTP client over libnetlayer, with httpie's request
 * items and curl's exit statuses. See `netlayer --help` and docs/cli.md.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <netlayer.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const http_methods[] = { "get", "post", "put", "patch", "delete", "head", "options" };

static const char general_help[] =
    "usage: netlayer METHOD URL [ITEM...] [OPTIONS]     methods: get post put patch delete head options,\n"
    "                                                   or any method in capitals (PROPFIND)\n"
    "       netlayer URL [ITEM...] [OPTIONS]            GET, or POST when items give a body\n"
    "       netlayer call NAME [key=value...] [--body JSON] --config CONFIG.json [OPTIONS]\n"
    "       netlayer ops --config CONFIG.json [--result]   what call can call (named endpoints, OpenAPI)\n"
    "       netlayer request ENDPOINT.json [--config CONFIG.json] [OPTIONS]\n"
    "       netlayer ws URL [name==value...] [Header:value...] [--protocol NAME...] [OPTIONS]\n"
    "                                                   a WebSocket: stdin lines out, messages to stdout\n"
    "       netlayer COMMAND --help | --version\n"
    "\n"
    "Request items (httpie's syntax):\n"
    "  name==value     query parameter (repeat for a list)      name==@file    its value from a file\n"
    "  Header:value    header (repeat: one line, values joined) Header:@file   its value from a file\n"
    "  Header;         an empty header                          Header:        leave the header out\n"
    "  field=value     JSON string field (form field with -f)   field:=json    raw JSON field (2021, true, [1])\n"
    "  field=@file     string field from a file                 field:=@f.json raw JSON field from a file\n"
    "  a[b][c]=x       nested JSON: a[]=x appends, a[0]=x sets an element, []=x makes a top-level array\n"
    "  field@file      file part (field@file;type=MIME): the body is multipart/form-data\n"
    "  @file           the file is the body (streamed)          @-             standard input is the body\n"
    "  A backslash makes a separator text: a\\=b=c; in JSON names also \\[ \\] \\\\. A repeated form field\n"
    "  sends every value (-f a=1 a=2). For post, put and patch without fields, piped standard input\n"
    "  is the body (--ignore-stdin turns that off).\n"
    "\n"
    "Options:\n"
    "  --config FILE     a config document (baseURL, headers, auth, endpoints; docs/documents.md)\n"
    "  --result          print the whole result document instead of the body\n"
    "  -v, --verbose     print the lines sent and received on stderr (the library's debug log)\n"
    "  -i, --include     print the status line and headers before the body\n"
    "  --pretty          indent JSON (the default when stdout is a terminal); --no-pretty: compact\n"
    "  --download FILE   save the body to FILE (created 0666 & ~umask), with a progress bar on a terminal;\n"
    "                    also -o FILE. An HTTP error status saves nothing, prints the body, exits 4 or 5\n"
    "  --check-status    exit 4 for a 4xx status, 5 for a 5xx status (without it: print the body, exit 0)\n"
    "  -f, --form        send fields as application/x-www-form-urlencoded\n"
    "  -H, --header 'Name: value'  a header as curl writes it: the item Name:value ('Name;' is empty)\n"
    "  -a, --auth USER[:PASSWORD]  basic or digest credentials (no password: asked on the terminal);\n"
    "                    with --auth-type bearer, -a TOKEN\n"
    "  -A, --auth-type basic|digest|bearer   how -a authenticates (default basic)\n"
    "  --timeout SECONDS bound each attempt (default 30)\n"
    "  --verify yes|no|CA_FILE  check the server's certificate (yes, the default), not at all (no), or\n"
    "                    against the CA bundle CA_FILE (PEM); -k, --insecure is --verify=no\n"
    "  --cert FILE       a client certificate (PEM, which may hold its key); --cert-key FILE: its key\n"
    "  --body JSON       call: the request body (JSON text, or @file.json), checked by an OpenAPI operation\n"
    "  --ignore-stdin    never read standard input as the body (ws: send nothing, listen until closed)\n"
    "  --protocol NAME   ws: offer the subprotocol NAME (repeat for more, in order of preference)\n"
    "  --ping-interval SECONDS  ws: ping after that much silence from the server; no answer after as\n"
    "                    long again ends the connection (status 28)\n"
    "  An option's value may follow an = (--timeout=5, --header='X-A: 1'); flags may go together (-vi).\n"
    "\n"
    "Exit status:\n"
    "  0 success      1 other failure      2 usage or invalid input     3 malformed URL\n"
    "  4 HTTP 4xx and 5 HTTP 5xx (with --check-status or --download)\n"
    "  6 DNS failure  7 connection failed  8 HTTP protocol error        23 local file or stdout error\n"
    "  28 timeout     35 TLS handshake     60 certificate verification  63 response too large\n"
    "  130 interrupted (Ctrl-C; SIGTERM 143)\n"
    "\n"
    "Examples:\n"
    "  netlayer get http://127.0.0.1:8080/movies page==2 X-Trace:1\n"
    "  netlayer post http://127.0.0.1:8080/movies title=Dune year:=2021 'tags[]=sf' 'cast[lead]=Paul'\n"
    "  netlayer get http://127.0.0.1:8080/basic-auth/ann/pw -a ann:pw\n"
    "  netlayer get http://127.0.0.1:8080/bytes/4096 --download data.bin\n"
    "  netlayer call movie id=2 --config api.json\n"
    "  netlayer call getPetById petId:=7 --config petstore.json\n"
    "  echo hello | netlayer ws ws://127.0.0.1:8081/echo\n"
    "Environment: NETLAYER_LOG=debug|info|error|off sets the log level of configs without log.level.\n";

static const char *command_help(const char *command) {
    if (strcmp(command, "call") == 0)
        return "usage: netlayer call NAME [ITEM...] --config CONFIG.json [OPTIONS]\n"
               "Sends the config's named endpoint NAME. key=value and key:=json fill its {placeholders};\n"
               "name==value adds query parameters, Header:value headers, @file a body file.\n"
               "For an operation of the config's OpenAPI document, key=value and key:=json are its\n"
               "parameters and --body JSON (or --body @file.json) its body, checked before sending.\n"
               "Options as for every command (netlayer --help).\n"
               "Example:\n"
               "  netlayer call movie id=2 --config api.json\n"
               "  with api.json: {\"baseURL\": \"http://127.0.0.1:8080/\", \"endpoints\": {\"movie\": {\"path\": \"movies/{id}\"}}}\n";
    if (strcmp(command, "ops") == 0)
        return "usage: netlayer ops --config CONFIG.json [--result]\n"
               "Lists what `netlayer call` can call: the config's named endpoints, then the operations of\n"
               "its OpenAPI document (config key \"openapi\"), each with its parameters and body.\n"
               "--result prints the list as JSON (nl_client_operations).\n"
               "Example:\n"
               "  netlayer ops --config petstore.json\n"
               "  with petstore.json: {\"baseURL\": \"http://127.0.0.1:8080/\", \"openapi\": \"petstore.yaml\"}\n";
    if (strcmp(command, "ws") == 0)
        return "usage: netlayer ws URL [name==value...] [Header:value...] [--protocol NAME...] [OPTIONS]\n"
               "Opens a WebSocket (ws:// or wss://; a URL without a scheme gets ws://, and with --config a\n"
               "path is under its baseURL). Each line of standard input is sent as a text message; each\n"
               "message received is printed on a line of its own: text as it is, binary as\n"
               "\"[binary, N bytes, base64] DATA\". At the end of standard input it closes with 1000 and\n"
               "waits for the server's answer; --ignore-stdin sends nothing and prints until the server\n"
               "closes (or Ctrl-C). A close code other than 1000, 1001 or 1005 from the server exits 1.\n"
               "Items and options: Header:value and name==value items, -a/--auth, -A/--auth-type, --timeout (the\n"
               "handshake), -v (the handshake's request and response), --config, --protocol NAME,\n"
               "--ping-interval SECONDS (a ping after that much silence; no answer after as long again: status 28),\n"
               "-k/--verify, --cert and --cert-key (wss://).\n"
               "Example:\n"
               "  printf 'hello\\nworld\\n' | netlayer ws ws://127.0.0.1:8081/echo\n";
    if (strcmp(command, "request") == 0)
        return "usage: netlayer request ENDPOINT.json [--config CONFIG.json] [OPTIONS]\n"
               "Sends an endpoint document (docs/documents.md); - reads it from standard input.\n"
               "Options as for every command (netlayer --help).\n"
               "Example:\n"
               "  echo '{\"path\": \"http://127.0.0.1:8080/json\", \"isFullPath\": true}' | netlayer request -\n";
    return "usage: netlayer METHOD URL [ITEM...] [OPTIONS]\n"
           "Sends one request. Items: name==value query, Header:value header (Header; empty, Header: left out),\n"
           "field=value JSON string, field:=json raw JSON, a[b][]=x nested JSON, field=@file / field:=@file\n"
           "from a file, field@file multipart file part, @file body file, @- standard input.\n"
           "Options and exit statuses: netlayer --help.\n"
           "Examples:\n"
           "  netlayer get http://127.0.0.1:8080/movies page==2 Accept:application/json\n"
           "  netlayer post http://127.0.0.1:8080/movies title=Dune year:=2021 --check-status\n"
           "  netlayer put http://127.0.0.1:8080/echo @movie.json\n";
}

/* `fmt` holds one %s, where `arg` goes (escaped on a terminal: report_arg). */
static int usage_error(const char *fmt, const char *arg) {
    const char *at = strstr(fmt, "%s");
    fputs("netlayer: ", stderr);
    if (!at) {
        fputs(fmt, stderr);
    } else {
        fwrite(fmt, 1, (size_t)(at - fmt), stderr);
        report_arg("", arg, at + 2);
    }
    fputs(" (see netlayer --help)\n", stderr);
    return EXIT_USAGE;
}

/* Levenshtein distance, for "did you mean" on a mistyped command. */
static size_t distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), i, j, row[64];
    if (la >= 63 || lb >= 63) return 99;
    for (j = 0; j <= lb; j++) row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t above = row[j], best = diagonal + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (above + 1 < best) best = above + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diagonal = above;
            row[j] = best;
        }
    }
    return row[lb];
}

static int unknown_command(const char *command) {
    static const char *const commands[] = { "get", "post", "put", "patch", "delete", "head", "options", "call", "request", "ops",
                                            "ws" };
    size_t i;
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (distance(command, commands[i]) <= 2 && strlen(command) > 2) {
            report_arg("netlayer: unknown command '", command, "'");
            fprintf(stderr, " (did you mean '%s'?)\n", commands[i]);
            return EXIT_USAGE;
        }
    return usage_error("unknown command '%s'", command);
}

/* A method in capitals: an RFC 9110 token without lower-case letters. */
static int is_method_token(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!(isupper((unsigned char)*s) || isdigit((unsigned char)*s) || strchr("!#$%&'*+-.^_`|~", *s))) return 0;
    return 1;
}

static int option_value(int argc, char **argv, int *i, const char **out) {
    if (*i + 1 >= argc) return usage_error("%s needs a value", argv[*i]);
    *out = argv[++*i];
    return 0;
}

/* Checks -H 'Name: value' (curl's spelling) or 'Name;' (an empty header). The item is
   then read as curl reads it (items_to_members' `literal`): the spaces after the colon
   go, and nothing in the value is a separator or an escape, so '-H "X: @f"' sends "@f"
   and never the file f, and '-H "X: =1"' is a header, not a body field. */
static int header_option(const char *text) {
    const char *colon = strchr(text, ':');
    size_t name_length = colon ? (size_t)(colon - text) : strlen(text);
    int empty = !colon && name_length > 1 && text[name_length - 1] == ';';
    if (!colon && !empty) return usage_error("-H needs 'Name: value' (or 'Name;' for an empty header), not '%s'", text);
    if (empty) name_length--;
    if (name_length == 0 || strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                         "!#$%&'*+-.^_`|~") < name_length)
        return usage_error("-H '%s': the header name must be a token (RFC 9110) before the colon", text);
    return 0;
}

/* Whether `arg` is two or more one-letter flags together ("-vi"), each of `flags`. */
static int is_flag_cluster(const char *arg, const char *flags) {
    return arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' && arg[2] != '\0'
        && strspn(arg + 1, flags) == strlen(arg + 1);
}

/* The config file's text, or NULL without one; exits 2 when it cannot be read. */
static char *read_config(const char *path, size_t *size) {
    char *text, error[160];
    *size = 0;
    if (!path) return NULL;
    if (!(text = read_whole(path, size, error, sizeof error))) {
        report_arg("netlayer: cannot read config ", path, ": ");
        report_arg("", error, "\n");
        exit(EXIT_USAGE);
    }
    return text;
}

/* The config text to use (takes `text`): the file's, with what the command line
 * changes in it: log.level debug for -v, userAgent "" for `User-Agent:`, compression
 * false for `Accept-Encoding:`, the tls keys of -k, --verify, --cert and --cert-key.
 * A config that is not a JSON object goes as it is: the library names what is wrong
 * with it. */
static char *config_text(char *text, size_t size, const run_options *run, const request_spec *spec) {
    char error[160];
    jnode *doc, *tls;
    buf out = { 0 };
    if (!run->verbose && !spec->no_user_agent && !spec->no_compression && !run->verify && !run->cert && !run->cert_key)
        return text;
    doc = text ? json_parse(text, size, error, sizeof error) : json_parse("{}", 2, error, sizeof error);
    if (!doc || doc->type != J_OBJECT) { json_free(doc); return text; }
    if (run->verbose) json_set_string(json_object_member(doc, "log"), "level", "debug");
    if (run->verify || run->cert || run->cert_key) {
        /* The options replace what the config's tls says of the same thing; the
         * library checks the files (a FIFO, a device, a missing file: status 2). */
        tls = json_object_member(doc, "tls");
        if (run->verify && strcmp(run->verify, "no") == 0) {
            json_set(tls, "verify", J_BOOL, "false");
        } else if (run->verify) {   /* yes (verify_value wrote it so), or a CA bundle's path */
            json_set(tls, "verify", J_BOOL, "true");
            if (strcmp(run->verify, "yes") != 0) json_set_string(tls, "caFile", run->verify);
        }
        if (run->cert) json_set_string(tls, "certFile", run->cert);
        if (run->cert_key) json_set_string(tls, "keyFile", run->cert_key);
    }
    if (spec->no_user_agent) json_set_string(doc, "userAgent", "");
    if (spec->no_compression) json_set(doc, "compression", J_BOOL, "false");
    json_write(&out, doc, 0, 0);
    json_free(doc);
    free(text);
    return out.data;
}

/* "@host[:port]" of a URL argument, for the password prompt. */
static void prompt_place(buf *out, const char *target, int mode_http) {
    const char *host = strstr(target, "://"), *end;
    if (!mode_http) { buf_printf(out, " (%s)", target); return; }
    host = host ? host + 3 : target;
    if (host[0] == ':') buf_puts(out, "@localhost");
    else buf_puts(out, "@");
    end = host + strcspn(host, "/?#");
    buf_add(out, host, (size_t)(end - host));
}

/* --verify's value as httpie reads it: yes or no (true, false; any case), else the
 * path of a CA bundle. An empty one is refused: it would be neither. */
static int verify_value(const char **value) {
    static const char *const words[][2] = { { "yes", "yes" }, { "true", "yes" }, { "no", "no" }, { "false", "no" } };
    size_t k;
    if (!**value) return usage_error("--verify needs yes, no or the path of a CA bundle%s", "");
    for (k = 0; k < sizeof words / sizeof words[0]; k++)
        if (strcasecmp(*value, words[k][0]) == 0) { *value = words[k][1]; return 0; }
    return 0;
}

/* 0 when `value`, given to `option` (`--timeout 2.5`), is a positive number of seconds
 * written as a JSON number, since it goes into a document as it is; else `inf`, `0x10`,
 * `.5`, `1e999` or `-1` end the command with status 2 naming the option. */
static int check_seconds(const char *option, const char *value) {
    const char *p = value;
    char *end, format[64];
    double seconds = strtod(value, &end);
    int ok = isdigit((unsigned char)p[0]) && !(p[0] == '0' && isdigit((unsigned char)p[1]));  /* no leading zeros */
    while (isdigit((unsigned char)*p)) p++;
    if (ok && *p == '.') {
        ok = isdigit((unsigned char)*++p);
        while (isdigit((unsigned char)*p)) p++;
    }
    if (ok && (*p == 'e' || *p == 'E')) {
        if (*++p == '+' || *p == '-') p++;
        ok = isdigit((unsigned char)*p);
        while (isdigit((unsigned char)*p)) p++;
    }
    if (ok && !*p && !*end && seconds > 0 && isfinite(seconds)) return 0;
    /* `option` is one of this file's literals: it holds no '%'. */
    snprintf(format, sizeof format, "%s needs a positive number of seconds, not '%%s'", option);
    return usage_error(format, value);
}

/* `netlayer ws`: the websocket document from the URL, the items (query and headers
 * only), -a, --timeout, --protocol and --ping-interval; then the session (ws.c). */
static int websocket_command(const char *target, char **items, const unsigned char *literal, int count,
                             const char **protocols, int protocol_count,
                             const char *request_only, const char *config_path, const char *credentials,
                             const char *auth_type, const char *timeout, const char *ping_interval, int ignore_stdin,
                             const run_options *run) {
    request_spec spec = { 0 };
    buf document = { 0 }, auth = { 0 }, url = { 0 }, place = { 0 };
    char *config = NULL, error[160];
    jnode *config_doc = NULL;
    size_t config_size = 0;
    int first = 1, status = 0, i, relative;
    if (request_only)
        return usage_error("ws: %s is for requests (a WebSocket takes -H/items, -a, -A, --timeout, -v, --config, "
                           "--protocol, --ping-interval, --ignore-stdin, -k/--verify, --cert, --cert-key)", request_only);
    if (!target) return usage_error("%s needs a URL", "ws");
    for (i = 0; i < count; i++)
        if (items[i][0] == '@')
            return usage_error("ws: item '%s' would be a body; a WebSocket sends the lines of standard input", items[i]);
    config = read_config(config_path, &config_size);
    if (config) config_doc = json_parse(config, config_size, error, sizeof error);
    spec.config = config_doc;
    spec.has_auth = credentials != NULL;
    buf_add(&document, "{", 1);
    status = items_to_members(&document, &first, items, count, &spec, 0, 0, literal);
    if (status == 0 && spec.has_body)
        status = usage_error("ws: name=value, name:=json and name@file items make a body; a WebSocket sends the lines "
                             "of standard input%s", "");
    if (status == 0 && credentials) {
        prompt_place(&place, target, 1);
        status = auth_document(&auth, credentials, auth_type, place.data, !ignore_stdin);
        buf_puts(&document, first ? "\"auth\":" : ",\"auth\":");
        buf_add(&document, auth.data ? auth.data : "", auth.len);
        first = 0;
    }
    json_free(config_doc);
    if (status == 0) {
        relative = !strstr(target, "://") && target[0] != ':' && config_path;
        if (target[0] == ':') buf_puts(&url, "ws://localhost");   /* httpie's :8080/path */
        else if (!relative && !strstr(target, "://")) buf_puts(&url, "ws://");
        buf_puts(&url, target);
        buf_puts(&document, first ? "\"path\":" : ",\"path\":");
        buf_json_string(&document, url.data, url.len);
        if (!relative) buf_puts(&document, ",\"isFullPath\":true");
        if (timeout) buf_printf(&document, ",\"timeout\":%s", timeout);
        if (ping_interval) buf_printf(&document, ",\"pingInterval\":%s", ping_interval);
        if (protocol_count) {
            buf_puts(&document, ",\"protocols\":[");
            for (i = 0; i < protocol_count; i++) {
                if (i) buf_add(&document, ",", 1);
                buf_json_string(&document, protocols[i], strlen(protocols[i]));
            }
            buf_add(&document, "]", 1);
        }
        buf_add(&document, "}", 1);
        config = config_text(config, config_size, run, &spec);
        status = run_websocket(config ? config : "{}", document.data, run, !ignore_stdin);
    }
    if (auth.data) memset(auth.data, 0, auth.len);   /* the document holds the secret too */
    if (document.data) memset(document.data, 0, document.len);
    free(auth.data);
    free(document.data);
    free(url.data);
    free(place.data);
    free(config);
    return status;
}

/* Whether an endpoint document's method is HEAD (its response has no body). */
static int is_head(const char *method) { return method && strcasecmp(method, "HEAD") == 0; }

/* call --body TEXT or --body @FILE: adds "body" to the endpoint document being
 * written. The text goes into the document as it is written (numbers exact), so it
 * must be exactly one JSON value: anything after it (`{},"path":...`) would add
 * endpoint keys of its own. 0, or EXIT_USAGE after saying why. */
static int add_body_member(buf *endpoint, int *first, const char *body) {
    char error[160];
    size_t size = strlen(body);
    char *text = body[0] == '@' ? read_whole(body + 1, &size, error, sizeof error) : NULL;
    const char *value = text ? text : body;
    jnode *parsed;
    if (body[0] == '@' && !text) {
        report_arg("netlayer: cannot read ", body + 1, ": ");
        report_arg("", error, "\n");
        return EXIT_USAGE;
    }
    if ((parsed = json_parse(value, size, error, sizeof error)) == NULL) {
        fprintf(stderr, "netlayer: --body%s%s is not one JSON value: %s\n", text ? " " : "", text ? body : "", error);
        free(text);
        return EXIT_USAGE;
    }
    json_free(parsed);
    buf_printf(endpoint, "%s\"body\":", *first ? "" : ",");
    buf_add(endpoint, value, size);
    *first = 0;
    free(text);
    return 0;
}

static int run_command(int argc, char **argv) {
    enum { MODE_HTTP, MODE_CALL, MODE_REQUEST, MODE_OPS, MODE_WS } mode = MODE_HTTP;
    run_options run = { 0, 0, -1, 0, 0, NULL, 0, NULL, NULL, NULL };
    request_spec spec = { 0 };
    const char *config_path = NULL, *target = NULL, *timeout = NULL, *body = NULL, *command = argc > 1 ? argv[1] : "";
    const char *credentials = NULL, *auth_type = NULL, *ping_interval = NULL;
    char **items = calloc((size_t)argc + 1, sizeof *items), *config = NULL, upper[32], error[160];
    unsigned char *literal = calloc((size_t)argc + 1, 1);
    const char **protocols = calloc((size_t)argc + 1, sizeof *protocols), *request_only = NULL;
    int count = 0, i, first = 1, ignore_stdin = 0, only_items = 0, status, help = 0, protocol_count = 0;
    buf endpoint = { 0 }, auth = { 0 };
    size_t k, config_size = 0;
    jnode *config_doc = NULL;

    if (argc < 2) { fputs(general_help, stderr); return EXIT_USAGE; }
    if (strcmp(command, "--version") == 0) { printf("netlayer %s (ABI %d)\n", nl_version(), nl_abi_version()); return 0; }
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0) {
        fputs(argc > 2 ? command_help(argv[2]) : general_help, stdout);
        return 0;
    }
    if (strcmp(command, "call") == 0) mode = MODE_CALL;
    else if (strcmp(command, "request") == 0) mode = MODE_REQUEST;
    else if (strcmp(command, "ops") == 0) mode = MODE_OPS;
    else if (strcmp(command, "ws") == 0) mode = MODE_WS;
    /* A URL, with or without its scheme (`localhost:8080/x`, `example.com/x`): no
     * method holds ':' or '/', nor a '.' beside lower-case letters. */
    else if (command[0] != '-' && (strchr(command, ':') || strchr(command, '/')
                                   || (strchr(command, '.') && !is_method_token(command)))) { target = command; }
    else {
        for (k = 0; k < sizeof http_methods / sizeof http_methods[0]; k++)
            if (strcmp(command, http_methods[k]) == 0) break;
        /* An option is no method: options follow the command (`netlayer -X POST URL` is curl's order). */
        if (command[0] == '-' || (k == sizeof http_methods / sizeof http_methods[0] && !is_method_token(command)))
            return unknown_command(command);
        if (strlen(command) >= sizeof upper)
            return usage_error("the method '%s' is longer than the 31 characters a method may have here", command);
        for (k = 0; command[k]; k++) upper[k] = (char)toupper((unsigned char)command[k]);
        upper[k] = '\0';
        spec.method = upper;
    }

    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        status = 0;
        if (only_items || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!target) target = a;
            else items[count++] = argv[i];
        } else if (strcmp(a, "--") == 0) only_items = 1;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) help = 1;
        else if (strcmp(a, "--config") == 0) status = option_value(argc, argv, &i, &config_path);
        else if (strncmp(a, "--config=", 9) == 0) config_path = a + 9;
        else if (strcmp(a, "--protocol") == 0 && mode == MODE_WS) status = option_value(argc, argv, &i, &protocols[protocol_count++]);
        else if (strncmp(a, "--protocol=", 11) == 0 && mode == MODE_WS) protocols[protocol_count++] = a + 11;
        else if (strcmp(a, "--result") == 0) run.result_document = 1;
        else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) run.verbose = 1;
        else if (strcmp(a, "-i") == 0 || strcmp(a, "--include") == 0) run.include_head = 1;
        else if (strcmp(a, "--pretty") == 0) run.pretty = 1;
        else if (strcmp(a, "--no-pretty") == 0) run.pretty = 0;
        else if (strcmp(a, "--check-status") == 0) run.check_status = 1;
        else if (strcmp(a, "-f") == 0 || strcmp(a, "--form") == 0) spec.form = 1;
        else if (strcmp(a, "--ignore-stdin") == 0) ignore_stdin = 1;
        else if (strcmp(a, "-H") == 0 || strcmp(a, "--header") == 0) {
            const char *header;
            if ((status = option_value(argc, argv, &i, &header)) == 0 && (status = header_option(header)) == 0) {
                literal[count] = 1;
                items[count++] = argv[i];
            }
        }
        else if (strncmp(a, "--header=", 9) == 0) {
            if ((status = header_option(a + 9)) == 0) {
                literal[count] = 1;
                items[count++] = argv[i] + 9;
            }
        }
        else if (is_flag_cluster(a, "vifhk")) {
            /* -vi: flags that take no value, together, as getopt (curl) and argparse
             * (httpie) read them. */
            const char *flag;
            for (flag = a + 1; *flag; flag++) {
                if (*flag == 'v') run.verbose = 1;
                else if (*flag == 'i') run.include_head = 1;
                else if (*flag == 'f') spec.form = 1;
                else if (*flag == 'k') run.verify = "no";
                else help = 1;
            }
        }
        else if (strcmp(a, "-a") == 0 || strcmp(a, "--auth") == 0) status = option_value(argc, argv, &i, &credentials);
        else if (strncmp(a, "--auth=", 7) == 0) credentials = a + 7;
        else if (strcmp(a, "-A") == 0 || strcmp(a, "--auth-type") == 0) status = option_value(argc, argv, &i, &auth_type);
        else if (strncmp(a, "--auth-type=", 12) == 0) auth_type = a + 12;
        else if (strcmp(a, "--body") == 0 && mode == MODE_CALL) status = option_value(argc, argv, &i, &body);
        else if (strncmp(a, "--body=", 7) == 0 && mode == MODE_CALL) body = a + 7;
        else if (strcmp(a, "--download") == 0 || strcmp(a, "-o") == 0) {
            /* `-o -` is curl's standard output: the body goes there without the option. */
            if ((status = option_value(argc, argv, &i, &run.download)) == 0 && strcmp(run.download, "-") == 0)
                run.download = NULL;
        } else if (strncmp(a, "--download=", 11) == 0) run.download = strcmp(a + 11, "-") == 0 ? NULL : a + 11;
        else if (strcmp(a, "-k") == 0 || strcmp(a, "--insecure") == 0) run.verify = "no";
        else if (strcmp(a, "--verify") == 0) {
            if ((status = option_value(argc, argv, &i, &run.verify)) == 0) status = verify_value(&run.verify);
        } else if (strncmp(a, "--verify=", 9) == 0) {
            run.verify = a + 9;
            status = verify_value(&run.verify);
        }
        else if (strcmp(a, "--cert") == 0) status = option_value(argc, argv, &i, &run.cert);
        else if (strncmp(a, "--cert=", 7) == 0) run.cert = a + 7;
        else if (strcmp(a, "--cert-key") == 0) status = option_value(argc, argv, &i, &run.cert_key);
        else if (strncmp(a, "--cert-key=", 11) == 0) run.cert_key = a + 11;
        else if (strcmp(a, "--timeout") == 0) {
            if ((status = option_value(argc, argv, &i, &timeout)) == 0) status = check_seconds("--timeout", timeout);
        } else if (strncmp(a, "--timeout=", 10) == 0) status = check_seconds("--timeout", timeout = a + 10);
        else if (strcmp(a, "--ping-interval") == 0 && mode == MODE_WS) {
            if ((status = option_value(argc, argv, &i, &ping_interval)) == 0)
                status = check_seconds("--ping-interval", ping_interval);
        } else if (strncmp(a, "--ping-interval=", 16) == 0 && mode == MODE_WS)
            status = check_seconds("--ping-interval", ping_interval = a + 16);
        else status = usage_error("unknown option %s", a);
        if (status) return status;
        if (mode == MODE_WS && !request_only && a[0] == '-' && strcmp(a, "-") != 0 && !only_items
            && strcmp(a, "--") != 0 && strcmp(a, "--config") != 0 && strncmp(a, "--config=", 9) != 0
            && strcmp(a, "-v") != 0 && strcmp(a, "--verbose") != 0 && strcmp(a, "--ignore-stdin") != 0
            && strcmp(a, "-H") != 0 && strcmp(a, "--header") != 0 && strncmp(a, "--header=", 9) != 0
            && !is_flag_cluster(a, "vhk") && strcmp(a, "-k") != 0 && strcmp(a, "--insecure") != 0
            && strncmp(a, "--verify", 8) != 0 && strncmp(a, "--cert", 6) != 0
            && strncmp(a, "-a", 2) != 0 && strncmp(a, "--auth", 6) != 0 && strcmp(a, "-A") != 0
            && strncmp(a, "--timeout", 9) != 0 && strncmp(a, "--protocol", 10) != 0 && strcmp(a, "--help") != 0
            && strncmp(a, "--ping-interval", 15) != 0
            && strcmp(a, "-h") != 0)
            request_only = a;
    }
    if (help) { fputs(mode == MODE_HTTP ? command_help("") : command_help(command), stdout); return 0; }
    if (run.pretty < 0) run.pretty = isatty(STDOUT_FILENO);
    if (spec.method && strcmp(spec.method, "HEAD") == 0) run.include_head = run.head_request = 1;
    if (auth_type && !credentials) return usage_error("--auth-type %s needs -a/--auth with the credentials", auth_type);
    if (run.cert_key && !run.cert) return usage_error("--cert-key %s needs --cert with the certificate", run.cert_key);
    if (mode == MODE_OPS) {
        if (target) return usage_error("ops takes no arguments, not '%s'", target);
        if (!config_path) return usage_error("%s needs --config CONFIG.json", command);
        if (credentials) return usage_error("%s sends no request: -a/--auth is for get, call and request", command);
        config = read_config(config_path, &config_size);
        config = config_text(config, config_size, &run, &spec);
        status = list_operations(config, &run);
        free(config);
        free(items); free(literal);
        return status;
    }
    if (mode == MODE_WS) {
        status = websocket_command(target, items, literal, count, protocols, protocol_count, request_only, config_path,
                                   credentials, auth_type, timeout, ping_interval, ignore_stdin, &run);
        free(items); free(literal);
        free(protocols);
        return status;
    }
    free(protocols);
    if (!target) return usage_error("%s needs a URL, a name or a document", mode == MODE_HTTP ? "the request" : command);
    if (mode == MODE_CALL && !config_path) return usage_error("call needs --config CONFIG.json (it holds %s)", target);
    if (mode == MODE_REQUEST && count) return usage_error("request takes one document, not '%s'", items[0]);

    config = read_config(config_path, &config_size);
    if (config) config_doc = json_parse(config, config_size, error, sizeof error);
    spec.config = config_doc;
    spec.call_name = mode == MODE_CALL ? target : NULL;
    if (mode == MODE_CALL) run.head_request = is_head(json_string(json_get(json_get(config_doc, "endpoints"), target), "method"));
    spec.has_auth = credentials != NULL;
    buf_add(&endpoint, "{", 1);
    if (mode == MODE_REQUEST) {
        size_t size = 0;
        char *text = read_whole(target, &size, error, sizeof error);
        jnode *doc;
        if (!text) {
            report_arg("netlayer: cannot open ", target, ": ");
            report_arg("", error, "\n");
            return EXIT_USAGE;
        }
        doc = json_parse(text, size, error, sizeof error);
        run.head_request = is_head(json_string(doc, "method"));
        if (doc && doc->type == J_OBJECT && (run.download || timeout || credentials)) {
            if (run.download) json_set_string(doc, "downloadTo", run.download);
            if (run.download && isatty(STDERR_FILENO)) json_set(doc, "progress", J_BOOL, "true");
            if (timeout) json_set(doc, "timeout", J_NUMBER, timeout);
            if (credentials) {
                jnode *value;
                buf place = { 0 };
                const char *path = json_string(doc, "path");
                prompt_place(&place, path ? path : target, path && strstr(path, "://"));
                status = auth_document(&auth, credentials, auth_type, place.data ? place.data : "", !ignore_stdin);
                free(place.data);
                if (status) { json_free(doc); free(text); free(config); json_free(config_doc); free(endpoint.data); free(items); free(literal); return status; }
                value = json_parse(auth.data, auth.len, error, sizeof error);
                json_set_node(doc, "auth", value);
            }
            endpoint.len = 0;
            json_write(&endpoint, doc, 0, 0);
            free(text);
        } else { free(endpoint.data); endpoint.data = text; }   /* the library reports what is wrong */
        json_free(doc);
    } else {
        struct stat st;
        int method_has_body = spec.method && (!strcmp(spec.method, "POST") || !strcmp(spec.method, "PUT") || !strcmp(spec.method, "PATCH"));
        int piped = fstat(STDIN_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode));
        spec.ignore_stdin = ignore_stdin;
        status = items_to_members(&endpoint, &first, items, count, &spec, !ignore_stdin && method_has_body && piped,
                                  mode == MODE_CALL, literal);
        if (status == 0 && credentials) {
            buf place = { 0 };
            prompt_place(&place, target, mode == MODE_HTTP);
            status = auth_document(&auth, credentials, auth_type, place.data, !ignore_stdin);
            free(place.data);
            buf_puts(&endpoint, first ? "\"auth\":" : ",\"auth\":");
            buf_add(&endpoint, auth.data ? auth.data : "", auth.len);
            first = 0;
        }
        if (status) { free(config); json_free(config_doc); free(endpoint.data); free(auth.data); free(items); free(literal); return status; }
        if (mode == MODE_HTTP) {
            const char *method = spec.method ? spec.method : spec.has_body ? "POST" : "GET";
            int relative = !strstr(target, "://") && target[0] != ':' && config_path;
            buf_printf(&endpoint, "%s\"method\":", first ? "" : ",");
            buf_json_string(&endpoint, method, strlen(method));
            buf url = { 0 };
            if (target[0] == ':') buf_puts(&url, "http://localhost");   /* httpie's :8080/path */
            else if (!relative && !strstr(target, "://")) buf_puts(&url, "http://");
            buf_puts(&url, target);
            buf_puts(&endpoint, ",\"path\":");
            buf_json_string(&endpoint, url.data, url.len);
            if (!relative) buf_puts(&endpoint, ",\"isFullPath\":true");
            free(url.data);
            first = 0;
        }
    }
    json_free(config_doc);
    config = config_text(config, config_size, &run, &spec);
    if (auth.data) {   /* the endpoint document holds the secret too: both are wiped below */
        memset(auth.data, 0, auth.len);
        free(auth.data);
    }
    if (mode != MODE_REQUEST) {
        if (run.download) {
            buf_puts(&endpoint, first ? "\"downloadTo\":" : ",\"downloadTo\":");
            buf_json_string(&endpoint, run.download, strlen(run.download));
            if (isatty(STDERR_FILENO)) buf_puts(&endpoint, ",\"progress\":true");
            first = 0;
        } else if (mode == MODE_HTTP) buf_puts(&endpoint, ",\"acceptableStatus\":[[100,599]]");   /* --check-status decides */
        if (timeout) { buf_printf(&endpoint, "%s\"timeout\":%s", first ? "" : ",", timeout); first = 0; }
        if (body && (status = add_body_member(&endpoint, &first, body)) != 0) {
            free(config); free(endpoint.data); free(items); free(literal);
            return status;
        }
        buf_add(&endpoint, "}", 1);
    }
    status = run_request(config, endpoint.data, mode == MODE_CALL ? target : NULL, &run);
    free(config);
    memset(endpoint.data, 0, endpoint.len);
    free(endpoint.data);
    free(items); free(literal);
    return status;
}

/* Opens /dev/null on a standard descriptor that is closed, read-only: a file the
 * library opens later must not become standard output, and writes to a closed
 * standard output must fail (and be reported) rather than vanish. */
static void keep_standard_descriptors(void) {
    int fd;
    for (fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) != fd) return;
}

/* What could not be written to standard output fails the command as a local file
 * that could not be written does (curl's 23), unless it already failed otherwise. */
static int finish_output(int status) {
    int failed = fflush(stdout) != 0 || ferror(stdout);
    int error = errno;
    if (fclose(stdout) != 0 && !failed) { failed = 1; error = errno; }
    if (!failed) return status;
    fprintf(stderr, "netlayer: cannot write to standard output: %s\n", strerror(error));
    return status == EXIT_OK ? EXIT_WRITE : status;
}

int main(int argc, char **argv) {
    keep_standard_descriptors();
    return finish_output(run_command(argc, argv));
}
