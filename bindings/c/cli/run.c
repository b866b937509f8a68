/* Runs one request: makes the client, starts the request with per-request
 * callbacks (progress bar), waits for it while Ctrl-C may cancel it, prints the
 * body (or the result document) and maps the result to an exit status. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <netlayer.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct pending {
    int done_pipe[2];   /* on_complete writes one byte when `result` is set */
    char *result;
    int bar_shown;
} pending;

static int g_signal_pipe[2] = { -1, -1 };

volatile sig_atomic_t g_interrupting_signal;

int exit_status_for_signal(void) {
    return g_interrupting_signal > 0 && g_interrupting_signal < 64 ? 128 + g_interrupting_signal : EXIT_INTERRUPTED;
}

static void on_signal(int sig) {
    unsigned char b = (unsigned char)sig;
    g_interrupting_signal = sig;
    ssize_t n = write(g_signal_pipe[1], &b, 1);
    (void)n;
}

static void on_complete(uint64_t id, const char *result_json, void *user_data) {
    pending *p = user_data;
    char b = 1;
    (void)id;
    p->result = strdup(result_json ? result_json : "");
    if (write(p->done_pipe[1], &b, 1) < 0) { /* the reader polls this pipe only */ }
}

static void human_size(char *out, size_t size, double bytes) {
    const char *units[] = { "B", "kB", "MB", "GB", "TB" };
    int u = 0;
    while (bytes >= 1000 && u < 4) { bytes /= 1000; u++; }
    snprintf(out, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* Draws the download progress bar on standard error (a terminal). */
static void on_progress(uint64_t id, const char *event_json, nl_reply *reply, void *user_data) {
    pending *p = user_data;
    char error[128], done_text[32], total_text[32], bar[31];
    jnode *event = json_parse(event_json, strlen(event_json), error, sizeof error);
    const char *direction = json_string(event, "direction");
    jnode *done = json_get(event, "done"), *total = json_get(event, "total");
    (void)id; (void)reply;
    if (event && direction && strcmp(direction, "download") == 0 && done && done->type == J_NUMBER) {
        double d = strtod(done->text, NULL), t = total && total->type == J_NUMBER ? strtod(total->text, NULL) : 0;
        human_size(done_text, sizeof done_text, d);
        if (t > 0) {
            int filled = (int)(30 * (d / t > 1 ? 1 : d / t)), i;
            for (i = 0; i < 30; i++) bar[i] = i < filled ? '#' : ' ';
            bar[30] = '\0';
            human_size(total_text, sizeof total_text, t);
            fprintf(stderr, "\r%3d%% [%s] %s / %s ", (int)(100 * (d / t > 1 ? 1 : d / t)), bar, done_text, total_text);
        } else fprintf(stderr, "\r%s ", done_text);
        p->bar_shown = 1;
    }
    json_free(event);
}

/* One header line ("> name: value"), escaped on a terminal; `value` (`n` bytes), when
 * given, stands for the member's text. */
static void put_field(FILE *out, const char *prefix, const jnode *member, const char *value, size_t n, int terminal) {
    fputs(prefix, out);
    put_string(out, member->key, terminal);
    fputs(": ", out);
    if (value) put_text(out, value, n, terminal);
    else if (member->type == J_STRING) put_text(out, member->text, member->len, terminal);
    fputc('\n', out);
}

/* One header line as the member holds it. */
static void put_header(FILE *out, const char *prefix, const jnode *member, int terminal) {
    put_field(out, prefix, member, NULL, 0, terminal);
}

/* Whether `latin1Headers` (a result's array) lists `name`. */
static int is_listed(const jnode *names, const char *name) {
    const jnode *n;
    for (n = names ? names->child : NULL; n; n = n->next)
        if (n->type == J_STRING && strcmp(n->text, name) == 0) return 1;
    return 0;
}

/* A header whose value a result holds as ISO-8859-1 text (its name in latin1Headers:
 * the server's bytes were not UTF-8): the bytes themselves, one per code point, so that
 * a pipe gets what the server sent and a terminal shows it escaped as any text. */
static void put_latin1_header(FILE *out, const jnode *member, int terminal) {
    const unsigned char *s = (const unsigned char *)member->text;
    char *bytes = malloc(member->len + 1);
    size_t i = 0, n = 0;
    if (!bytes) { put_header(out, "", member, terminal); return; }
    while (i < member->len) {  /* UTF-8 of code points below 256: one or two bytes each */
        if (s[i] < 0x80) bytes[n++] = (char)s[i++];
        else if (i + 1 < member->len && (s[i] & 0xFE) == 0xC2) { bytes[n++] = (char)(((s[i] & 0x03) << 6) | (s[i + 1] & 0x3F)); i += 2; }
        else bytes[n++] = (char)s[i++];  /* not what the library writes: kept as it is */
    }
    put_field(out, "", member, bytes, n, terminal);
    free(bytes);
}

/* -v: the request event of the transfer under way, kept until its response or error
 * says what was sent. Events of one transfer come one after another. */
static jnode *pending_request;

/* The request as the request event describes it: what the library built. */
static void put_request_event(const jnode *request, int terminal) {
    const jnode *h, *m;
    fputs("> ", stderr);
    put_string(stderr, json_string(request, "method") ? json_string(request, "method") : "?", terminal);
    fputc(' ', stderr);
    put_string(stderr, json_string(request, "url") ? json_string(request, "url") : "?", terminal);
    fputc('\n', stderr);
    if ((h = json_get(request, "headers")) != NULL)
        for (m = h->child; m; m = m->next) put_header(stderr, "> ", m, terminal);
    if ((m = json_get(request, "bodyBytes")) != NULL && m->type == J_NUMBER && strcmp(m->text, "0") != 0)
        fprintf(stderr, "> [%s bytes of body]\n", m->text);
}

/* What was sent, as curl -v shows it: the lines libcurl sent (the event's "sent",
 * redacted by the library), or the pending request event's when there are none (an
 * answer from the cache or a stub, a failure before anything was sent). */
static void put_sent(const jnode *event, int terminal) {
    const jnode *sent = json_get(event, "sent"), *m;
    if (sent && sent->type == J_ARRAY && sent->child) {
        for (m = sent->child; m; m = m->next) {
            if (m->type != J_STRING) continue;
            fputs("> ", stderr);
            put_text(stderr, m->text, m->len, terminal);
            fputc('\n', stderr);
        }
    } else if (pending_request) {
        put_request_event(pending_request, terminal);
    } else {
        return;
    }
    fputs(">\n", stderr);
    json_free(pending_request);
    pending_request = NULL;
}

/* -v: the library's debug log events, as curl -v shows a transfer. */
void print_log_event(const char *event_json, nl_reply *reply, void *user_data) {
    char error[128];
    jnode *event = json_parse(event_json, strlen(event_json), error, sizeof error), *h, *m;
    const char *kind = json_string(event, "event");
    int terminal = isatty(STDERR_FILENO);
    (void)reply; (void)user_data;
    if (!kind) { json_free(event); return; }
    if (strcmp(kind, "request") == 0) {
        fputs("* ", stderr);
        put_string(stderr, json_string(event, "method") ? json_string(event, "method") : "?", terminal);
        fputc(' ', stderr);
        put_string(stderr, json_string(event, "url") ? json_string(event, "url") : "?", terminal);
        fputc('\n', stderr);
        json_free(pending_request);
        pending_request = event;  /* shown with the response, or the error */
        return;
    } else if (strcmp(kind, "response") == 0) {
        jnode *status = json_get(event, "status"), *ms = json_get(event, "elapsedMs");
        put_sent(event, terminal);
        fprintf(stderr, "< HTTP %s\n", status && status->text ? status->text : "?");
        if ((h = json_get(event, "headers")) != NULL)
            for (m = h->child; m; m = m->next) put_header(stderr, "< ", m, terminal);
        fprintf(stderr, "<\n* %s ms\n", ms && ms->text ? ms->text : "?");
    } else if (strcmp(kind, "error") == 0 || strcmp(kind, "warning") == 0) {
        if (strcmp(kind, "error") == 0) put_sent(event, terminal);
        fputs("* ", stderr);
        put_string(stderr, json_string(event, "kind") ? json_string(event, "kind") : kind, terminal);
        fputs(": ", stderr);
        put_string(stderr, json_string(event, "message"), terminal);
        fputc('\n', stderr);
    }
    json_free(event);
}

/* "netlayer: WHAT: MESSAGE" on standard error; the message may quote a server. */
static void report(const char *what, const char *message) {
    fputs("netlayer: ", stderr);
    if (what) fprintf(stderr, "%s: ", what);
    put_string(stderr, message, isatty(STDERR_FILENO));
    fputc('\n', stderr);
}

static int contains_nocase(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (; haystack && *haystack; haystack++)
        if (strncasecmp(haystack, needle, n) == 0) return 1;
    return 0;
}

static int status_of(const jnode *result) {
    jnode *s = json_get(result, "status");
    return s && s->type == J_NUMBER ? atoi(s->text) : 0;
}

/* An empty body whose Content-Type says JSON: the library's decoder has nothing to
 * decode (`no_response`), but the response arrived whole, as httpie and curl see it. */
static int is_empty_response(const jnode *result) {
    const char *kind = json_string(json_get(result, "error"), "kind");
    return kind && strcmp(kind, "no_response") == 0 && status_of(result) > 0;
}

int exit_status_for(const jnode *result, int check_status) {
    jnode *ok = json_get(result, "ok"), *error = json_get(result, "error"), *code;
    const char *kind = json_string(error, "kind"), *message = json_string(error, "message");
    int status = status_of(result);
    if ((ok && ok->type == J_BOOL && strcmp(ok->text, "true") == 0) || is_empty_response(result))
        return check_status && status >= 400 ? (status >= 500 ? EXIT_HTTP_5XX : EXIT_HTTP_4XX) : EXIT_OK;
    if (!kind) return EXIT_FAILURE_OTHER;
    if (strcmp(kind, "status") == 0 || strcmp(kind, "resolved") == 0)
        return !check_status ? EXIT_OK : status >= 500 ? EXIT_HTTP_5XX : status >= 400 ? EXIT_HTTP_4XX : EXIT_FAILURE_OTHER;
    if (strcmp(kind, "invalid_request") == 0) return EXIT_USAGE;
    if (strcmp(kind, "url_generation") == 0) return EXIT_URL;
    if (strcmp(kind, "not_connected") == 0) return contains_nocase(message, "resolve") ? EXIT_DNS : EXIT_CONNECT;
    if (strcmp(kind, "timeout") == 0) return EXIT_TIMEOUT;
    if (strcmp(kind, "tls") == 0) return contains_nocase(message, "certificate") ? EXIT_CERTIFICATE : EXIT_TLS;
    if (strcmp(kind, "io") == 0) return EXIT_WRITE;
    if (strcmp(kind, "too_large") == 0) return EXIT_TOO_LARGE;
    if (strcmp(kind, "protocol") == 0) return EXIT_PROTOCOL;
    if (strcmp(kind, "cancelled") == 0) return exit_status_for_signal();
    code = json_get(error, "curlCode");
    if (strcmp(kind, "generic") == 0 && code && code->type == J_NUMBER && atoi(code->text) > 0 && atoi(code->text) < 100)
        return atoi(code->text);
    return EXIT_FAILURE_OTHER;
}

static int base64_value(int c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static void write_base64(const char *s, size_t n, FILE *out) {
    unsigned acc = 0;
    int bits = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        int v = base64_value((unsigned char)s[i]);
        if (v < 0) continue;
        acc = (acc << 6) | (unsigned)v;
        if ((bits += 6) >= 8) { bits -= 8; fputc((int)((acc >> bits) & 0xFF), out); }
    }
}

/* The response's status line and headers (HEAD, -i), escaped on a terminal. */
static void print_head(const jnode *result) {
    jnode *headers = json_get(result, "headers"), *latin1 = json_get(result, "latin1Headers"), *m;
    const char *version = json_string(result, "httpVersion");
    int terminal = isatty(STDOUT_FILENO);
    fputs("HTTP/", stdout);
    put_string(stdout, version ? version : "1.1", terminal);
    printf(" %d\n", status_of(result));
    for (m = headers ? headers->child : NULL; m; m = m->next) {
        if (m->type == J_STRING && is_listed(latin1, m->key)) put_latin1_header(stdout, m, terminal);
        else put_header(stdout, "", m, terminal);
    }
    putchar('\n');
}

/* The body: JSON as JSON (a JSON null too: `null`), text as it is (control characters
 * escaped on a terminal), bytes as bytes (a note on a terminal); nothing for the
 * decoder "none" (an empty body). */
static void print_body(const jnode *value, const char *decoder, int pretty) {
    buf out = { 0 };
    if (!value || (decoder && strcmp(decoder, "none") == 0)) return;
    if (value->type == J_STRING && decoder && strcmp(decoder, "base64") == 0) {
        if (isatty(STDOUT_FILENO)) printf("[binary body of about %zu bytes not shown on a terminal: use --download FILE or > FILE]\n", value->len / 4 * 3);
        else write_base64(value->text, value->len, stdout);
        return;
    }
    if (value->type == J_STRING && decoder && strcmp(decoder, "json") != 0) {
        put_text(stdout, value->text, value->len, isatty(STDOUT_FILENO));
        if (isatty(STDOUT_FILENO) && value->len && value->text[value->len - 1] != '\n') putchar('\n');
        return;
    }
    json_write(&out, value, pretty, 0);
    put_text(stdout, out.data, out.len, isatty(STDOUT_FILENO));   /* a byte that is not UTF-8 as \xHH */
    putchar('\n');
    free(out.data);
}

/* A response whose body could not be decoded as its type claims (JSON that does not
 * parse): the result still carries the body, which is printed as it came. */
static int is_undecoded_body(const char *kind, const jnode *error) {
    const jnode *body = json_get(error, "body");
    return kind && strcmp(kind, "parsing") == 0 && body && body->type == J_STRING && json_get(error, "status");
}

static void print_output(const jnode *result, const run_options *o) {
    jnode *ok = json_get(result, "ok"), *error = json_get(result, "error"), *value = json_get(result, "value");
    const char *kind = json_string(error, "kind");
    int success = ok && ok->type == J_BOOL && strcmp(ok->text, "true") == 0;
    int undecoded = !success && is_undecoded_body(kind, error);
    int empty = !success && is_empty_response(result);
    if (o->include_head && (success || undecoded || empty || (kind && (strcmp(kind, "status") == 0 || strcmp(kind, "resolved") == 0))))
        print_head(result);
    if (empty) {
        if (o->check_status && status_of(result) >= 400) fprintf(stderr, "netlayer: HTTP %d\n", status_of(result));
    } else if (undecoded) {
        print_body(json_get(error, "body"), "text", o->pretty);
        report(kind, json_string(error, "message") ? json_string(error, "message") : "(no message)");
    } else if (success && !o->download) {
        if (!(o->head_request && value && value->type == J_NULL))
            print_body(value, json_get(result, "decoder") ? json_string(result, "decoder") : "json", o->pretty);
        if (o->check_status && status_of(result) >= 400) fprintf(stderr, "netlayer: HTTP %d\n", status_of(result));
    } else if (success) {
        jnode *bytes = json_get(json_get(result, "value"), "bytes");
        if (isatty(STDERR_FILENO)) fprintf(stderr, "saved %s (%s bytes)\n", o->download, bytes && bytes->text ? bytes->text : "?");
    } else if (kind && (strcmp(kind, "status") == 0 || strcmp(kind, "resolved") == 0)) {
        /* The error body is printed also with --download, which saved nothing. */
        jnode *body = json_get(error, "body"), *json = NULL;
        char e[64];
        if (body && body->type == J_STRING && (json = json_parse(body->text, body->len, e, sizeof e)) != NULL)
            print_body(json, "json", o->pretty);
        else if (body && body->type == J_STRING) print_body(body, "text", o->pretty);
        json_free(json);
        if (o->check_status || o->download)
            report(NULL, json_string(error, "message") ? json_string(error, "message") : "HTTP error");
    } else {
        report(kind ? kind : "error", json_string(error, "message") ? json_string(error, "message") : "(no message)");
    }
}

/* Waits for the request; Ctrl-C cancels it (the result then says cancelled). */
static void wait_for(nl_client *client, uint64_t id, pending *p) {
    struct pollfd fds[2] = { { p->done_pipe[0], POLLIN, 0 }, { g_signal_pipe[0], POLLIN, 0 } };
    int interrupted = 0;
    while (poll(fds, 2, -1) >= 0 || errno == EINTR) {
        if (fds[0].revents) return;
        if (fds[1].revents && !interrupted) { interrupted = 1; nl_cancel(client, id); fds[1].fd = -1; }
    }
}

int run_request(const char *config_json, const char *endpoint_json, const char *call_name, const run_options *o) {
    nl_request_callbacks callbacks = NL_REQUEST_CALLBACKS_INIT;
    pending p = { { -1, -1 }, NULL, 0 };
    char *error = NULL, message[128];
    nl_client *client = nl_client_new(config_json, &error);
    jnode *result;
    uint64_t id;
    int status;
    struct sigaction sa, saved_pipe;

    if (!client) {
        jnode *doc = error ? json_parse(error, strlen(error), message, sizeof message) : NULL;
        if (o->result_document && error) puts(error);
        report("invalid config", json_string(json_get(doc, "error"), "message") ? json_string(json_get(doc, "error"), "message") : "?");
        json_free(doc);
        nl_free(error);
        return EXIT_USAGE;
    }
    if (o->verbose) nl_client_set_hook(client, NL_HOOK_LOG, print_log_event, NULL);
    if (pipe(p.done_pipe) != 0 || (g_signal_pipe[0] < 0 && pipe(g_signal_pipe) != 0)) {
        perror("netlayer: pipe");
        nl_client_free(client);
        return EXIT_FAILURE_OTHER;
    }
    /* Each signal that would end the program cancels the request instead, so that a
     * download leaves no partial file (a closed terminal's SIGHUP, a reader gone while
     * the progress bar draws), and the exit status is still 128 + the signal. SIGPIPE is
     * the default again once the request is over: output to a closed pipe ends quietly. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    sigaction(SIGPIPE, &sa, &saved_pipe);

    callbacks.on_complete = on_complete;
    callbacks.user_data = &p;
    if (o->download && isatty(STDERR_FILENO)) callbacks.on_progress = on_progress;
    id = call_name ? nl_call_start(client, call_name, endpoint_json, &callbacks)
                   : nl_request_start(client, endpoint_json, &callbacks);
    if (id) wait_for(client, id, &p);
    nl_client_free(client);
    sigaction(SIGPIPE, &saved_pipe, NULL);
    close(p.done_pipe[0]);
    close(p.done_pipe[1]);
    if (p.bar_shown) fputc('\n', stderr);
    if (!p.result) { fputs("netlayer: the request could not start\n", stderr); return EXIT_FAILURE_OTHER; }

    /* The response's value stays text: its tree would take dozens of bytes per byte. A
     * download's value is read ({"path", "bytes"}). */
    result = o->download ? json_parse(p.result, strlen(p.result), message, sizeof message)
                         : json_parse_result(p.result, strlen(p.result), message, sizeof message);
    if (!result) {
        fprintf(stderr, "netlayer: unreadable result (%s)\n", message);
        free(p.result);
        return EXIT_FAILURE_OTHER;
    }
    if (o->result_document) {
        buf out = { 0 };
        /* Rewritten for a terminal also when compact: the writer escapes DEL and C1
         * controls, put_text a byte that is not UTF-8. */
        int terminal = isatty(STDOUT_FILENO);
        if (o->pretty || terminal) json_write(&out, result, o->pretty, 0);
        if (o->pretty || terminal) put_text(stdout, out.data, out.len, terminal);
        else fputs(p.result, stdout);
        putchar('\n');
        free(out.data);
        if (json_get(result, "error") && exit_status_for(result, o->check_status) != EXIT_OK)
            report(NULL, json_string(json_get(result, "error"), "message") ? json_string(json_get(result, "error"), "message") : "error");
    } else print_output(result, o);
    status = exit_status_for(result, o->check_status || o->download);
    fflush(stdout);
    json_free(result);
    free(p.result);
    return status;
}
