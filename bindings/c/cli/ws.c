/*
 * ws.c — `netlayer ws URL`: a WebSocket (nl_websocket_*) between standard input and
 * standard output. Each line read is sent as a text message; each message received
 * is printed on a line of its own (text as it is, binary as a base64 note). Standard
 * input's end closes the connection with 1000 and waits for the server's answer
 * (the library bounds the wait: closeTimeout). Ctrl-C ends it at once (1001).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <netlayer.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the connection's callbacks (on the library's thread) tell the main loop. */
typedef struct ws_session {
    pthread_mutex_t lock;
    int wake[2];          /* a byte when the connection opens or ends */
    int opened, closed, code;
    char *error_json;     /* on_error's document */
    char *reason;
    int terminal;         /* standard output is a terminal */
    int verbose;
} ws_session;

static int g_ws_signal_pipe[2] = { -1, -1 };

static void on_ws_signal(int sig) {
    unsigned char b = (unsigned char)sig;
    g_interrupting_signal = sig;
    ssize_t n = write(g_ws_signal_pipe[1], &b, 1);
    (void)n;
}

static void wake(ws_session *s) {
    char b = 1;
    if (write(s->wake[1], &b, 1) < 0) { /* the pipe is non-blocking: a full one wakes anyway */ }
}

static void on_open(nl_websocket *ws, const char *open_json, void *user_data) {
    ws_session *s = user_data;
    (void)ws;
    (void)open_json;   /* -v shows the 101 answer through the log hook */
    pthread_mutex_lock(&s->lock);
    s->opened = 1;
    pthread_mutex_unlock(&s->lock);
    wake(s);
}

/* One message on a line of standard output: text as it is (escaped on a terminal),
 * binary as "[binary, N bytes, base64] DATA". */
static void on_message(nl_websocket *ws, int kind, const char *data, size_t length, void *user_data) {
    ws_session *s = user_data;
    (void)ws;
    flockfile(stdout);
    if (kind == NL_WS_TEXT) {
        put_text(stdout, data, length, s->terminal);
    } else {
        buf encoded = { 0 };
        buf_base64(&encoded, (const unsigned char *)data, length);
        printf("[binary, %zu bytes, base64] ", length);
        if (encoded.len) fwrite(encoded.data, 1, encoded.len, stdout);
        free(encoded.data);
    }
    putc_unlocked('\n', stdout);
    fflush(stdout);
    funlockfile(stdout);
}

static void on_error(nl_websocket *ws, const char *error_json, void *user_data) {
    ws_session *s = user_data;
    (void)ws;
    pthread_mutex_lock(&s->lock);
    if (!s->error_json) s->error_json = strdup(error_json);
    pthread_mutex_unlock(&s->lock);
}

static void on_close(nl_websocket *ws, int code, const char *reason, void *user_data) {
    ws_session *s = user_data;
    (void)ws;
    pthread_mutex_lock(&s->lock);
    s->closed = 1;
    s->code = code;
    s->reason = strdup(reason ? reason : "");
    pthread_mutex_unlock(&s->lock);
    wake(s);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "netlayer: WHAT: MESSAGE" on standard error; the message may quote a server. */
static void report(const char *what, const char *message) {
    fputs("netlayer: ", stderr);
    if (what) fprintf(stderr, "%s: ", what);
    put_string(stderr, message ? message : "(no message)", isatty(STDERR_FILENO));
    fputc('\n', stderr);
}

/* The error kind of a send's error document ("" when unreadable); reports it when
 * `what` is set. */
static void send_error_kind(const char *error_json, char *kind, size_t size, const char *what) {
    char e[64];
    jnode *doc = error_json ? json_parse(error_json, strlen(error_json), e, sizeof e) : NULL;
    const char *k = json_string(json_get(doc, "error"), "kind");
    snprintf(kind, size, "%s", k ? k : "");
    if (what) report(what, json_string(json_get(doc, "error"), "message"));
    json_free(doc);
}

/* Sends the complete lines at the start of `in` (dropping them from it). Returns 0,
 * 1 when the connection's send queue is full (the rest waits for a retry), 2 when the
 * connection no longer takes messages, or EXIT_USAGE after reporting a bad line. */
static int send_lines(nl_websocket *ws, buf *in, long *line_number) {
    size_t start = 0;
    int outcome = 0;
    while (start < in->len) {
        char *newline = memchr(in->data + start, '\n', in->len - start);
        size_t end, length;
        char *error = NULL, kind[32];
        if (!newline) break;
        end = (size_t)(newline - in->data);
        length = end - start;
        if (length && in->data[end - 1] == '\r') length--;   /* a CRLF line */
        if (nl_websocket_send(ws, NL_WS_TEXT, in->data + start, length, &error) != 0) {
            send_error_kind(error, kind, sizeof kind, NULL);
            if (strcmp(kind, "too_large") == 0) outcome = 1;
            else if (strcmp(kind, "invalid_request") == 0) {
                char what[64];
                snprintf(what, sizeof what, "line %ld of standard input", *line_number + 1);
                send_error_kind(error, kind, sizeof kind, what);
                outcome = EXIT_USAGE;
            } else outcome = 2;
            nl_free(error);
            break;
        }
        (*line_number)++;
        start = end + 1;
    }
    memmove(in->data, in->data + start, in->len - start);
    in->len -= start;
    return outcome;
}

int run_websocket(const char *config_json, const char *document_json, const run_options *o, int read_input) {
    nl_websocket_callbacks callbacks = NL_WEBSOCKET_CALLBACKS_INIT;
    ws_session s;
    char *error = NULL, message[128];
    nl_client *client = nl_client_new(config_json, &error);
    nl_websocket *ws;
    buf in = { 0 };
    long line_number = 0;
    int status = EXIT_OK, input_open = read_input, closing = 0, interrupted = 0, retry = 0;
    double close_deadline = 0;
    struct sigaction sa;

    if (!client) {
        jnode *doc = error ? json_parse(error, strlen(error), message, sizeof message) : NULL;
        report("invalid config", json_string(json_get(doc, "error"), "message"));
        json_free(doc);
        nl_free(error);
        return EXIT_USAGE;
    }
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.lock, NULL);
    s.terminal = isatty(STDOUT_FILENO);
    s.verbose = o->verbose;
    if (pipe(s.wake) != 0 || (g_ws_signal_pipe[0] < 0 && pipe(g_ws_signal_pipe) != 0)) {
        perror("netlayer: pipe");
        nl_client_free(client);
        return EXIT_FAILURE_OTHER;
    }
    fcntl(s.wake[1], F_SETFL, fcntl(s.wake[1], F_GETFL) | O_NONBLOCK);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_ws_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (o->verbose) nl_client_set_hook(client, NL_HOOK_LOG, print_log_event, NULL);

    callbacks.on_open = on_open;
    callbacks.on_message = on_message;
    callbacks.on_error = on_error;
    callbacks.on_close = on_close;
    callbacks.user_data = &s;
    ws = nl_websocket_open(client, document_json, &callbacks, &error);
    if (!ws) {
        jnode *doc = error ? json_parse(error, strlen(error), message, sizeof message) : NULL;
        report(json_string(json_get(doc, "error"), "kind"), json_string(json_get(doc, "error"), "message"));
        status = doc ? exit_status_for(doc, 1) : EXIT_FAILURE_OTHER;
        json_free(doc);
        nl_free(error);
        nl_client_free(client);
        close(s.wake[0]);
        close(s.wake[1]);
        return status == EXIT_OK ? EXIT_FAILURE_OTHER : status;
    }

    for (;;) {
        struct pollfd fds[3] = { { s.wake[0], POLLIN, 0 }, { g_ws_signal_pipe[0], POLLIN, 0 },
                                 { input_open && !retry ? STDIN_FILENO : -1, POLLIN, 0 } };
        int timeout = retry ? 50 : -1, ended;
        if (closing) {
            double left = close_deadline - now_seconds();
            if (left <= 0) break;   /* the library's closeTimeout ends it first; this is a backstop */
            timeout = (int)(left * 1000) + 1;
        }
        if (poll(fds, 3, timeout) < 0 && errno != EINTR) break;
        if (fds[0].revents) {
            char drain[64];
            if (read(s.wake[0], drain, sizeof drain) < 0) { /* nothing to drain */ }
        }
        pthread_mutex_lock(&s.lock);
        ended = s.closed;
        pthread_mutex_unlock(&s.lock);
        if (ended) break;
        if (fds[1].revents) { interrupted = 1; break; }
        if (retry || (fds[2].fd >= 0 && fds[2].revents)) {
            int outcome;
            if (!retry) {
                ssize_t n;
                char chunk[65536];
                if (in.len >= CLI_READ_LIMIT) {
                    fprintf(stderr, "netlayer: line %ld of standard input is longer than %zu bytes\n", line_number + 1,
                            (size_t)CLI_READ_LIMIT);
                    status = EXIT_USAGE;
                    input_open = 0;
                } else if ((n = read(STDIN_FILENO, chunk, sizeof chunk)) > 0) {
                    buf_add(&in, chunk, (size_t)n);
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    if (in.len) buf_add(&in, "\n", 1);   /* the last line without its newline */
                    input_open = 0;
                }
            }
            outcome = send_lines(ws, &in, &line_number);
            retry = outcome == 1;   /* the server is not reading: try again soon, stdin waits */
            if (outcome == EXIT_USAGE) status = EXIT_USAGE;
            if (outcome == EXIT_USAGE || outcome == 2) input_open = 0;
            if (!input_open && !retry && !closing) {
                nl_websocket_close(ws, 1000, NULL, NULL);
                closing = 1;
                close_deadline = now_seconds() + 60;
            }
        }
    }

    nl_websocket_free(ws);   /* still open (Ctrl-C): a close frame with 1001 */
    pthread_mutex_lock(&s.lock);
    if (interrupted) {
        status = exit_status_for_signal();
    } else if (s.error_json) {
        jnode *doc = json_parse(s.error_json, strlen(s.error_json), message, sizeof message);
        report(json_string(json_get(doc, "error"), "kind"), json_string(json_get(doc, "error"), "message"));
        if (status == EXIT_OK) status = doc ? exit_status_for(doc, 1) : EXIT_FAILURE_OTHER;
        if (status == EXIT_OK) status = EXIT_FAILURE_OTHER;
        json_free(doc);
    } else if (s.closed && s.code != 1000 && s.code != 1001 && s.code != 1005) {
        char what[64];
        snprintf(what, sizeof what, "the server closed the WebSocket with %d", s.code);
        report(what, s.reason && *s.reason ? s.reason : "(no reason)");
        if (status == EXIT_OK) status = EXIT_FAILURE_OTHER;
    } else if (!s.closed && status == EXIT_OK) {
        fputs("netlayer: the WebSocket did not close in time\n", stderr);
        status = EXIT_TIMEOUT;
    }
    if (o->verbose && s.closed) {
        fprintf(stderr, "* WebSocket closed: %d ", s.code);
        put_string(stderr, s.reason, isatty(STDERR_FILENO));
        fputc('\n', stderr);
    }
    pthread_mutex_unlock(&s.lock);
    nl_client_free(client);
    free(s.error_json);
    free(s.reason);
    free(in.data);
    close(s.wake[0]);
    close(s.wake[1]);
    pthread_mutex_destroy(&s.lock);
    return status;
}
