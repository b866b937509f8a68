/*
 * The netlayer command-line client: shared declarations.
 *
 * main.c     arguments, commands and --help
 * items.c    httpie-style request items (a==1, H:v, H;, f=v, f:=1, f@file, @file) -> endpoint document
 * nested.c   httpie's nested JSON paths (a[b][]=1) -> the body's JSON value
 * auth.c     -a/--auth and --auth-type -> the endpoint's auth; the password prompt
 * run.c      the request: client, -v log lines, progress bar, interrupt, output, exit status
 * ws.c       `netlayer ws`: a WebSocket between standard input and standard output
 * json.c     a small JSON reader and writer: the CLI reads result documents without a JSON library
 * files.c    local files read whole (regular, bounded, never blocking) or checked for streaming
 * terminal.c server bytes on a terminal: control characters shown escaped
 */
#ifndef NETLAYER_CLI_H
#define NETLAYER_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include <netlayer.h>

/* Exit statuses (listed in --help and docs/cli.md). */
enum {
    EXIT_OK = 0, EXIT_FAILURE_OTHER = 1, EXIT_USAGE = 2, EXIT_URL = 3, EXIT_HTTP_4XX = 4, EXIT_HTTP_5XX = 5,
    EXIT_DNS = 6, EXIT_CONNECT = 7, EXIT_PROTOCOL = 8, EXIT_WRITE = 23, EXIT_TIMEOUT = 28, EXIT_TLS = 35,
    EXIT_CERTIFICATE = 60, EXIT_TOO_LARGE = 63, EXIT_INTERRUPTED = 130
};

/* ---- growing strings ---------------------------------------------------------- */

typedef struct buf { char *data; size_t len, cap; } buf;

void buf_add(buf *b, const char *s, size_t n);
void buf_puts(buf *b, const char *s);
void buf_printf(buf *b, const char *fmt, ...);
/* Appends `n` bytes of `s` as a JSON string literal. */
void buf_json_string(buf *b, const char *s, size_t n);
/* Appends `n` bytes of `s` in base64 (RFC 4648, with padding). */
void buf_base64(buf *b, const unsigned char *s, size_t n);

/* ---- local files (files.c) ---------------------------------------------------- */

/* The most bytes the CLI reads into memory from one file or standard input. */
#define CLI_READ_LIMIT ((size_t)16 << 20)

/* Reads a whole regular file of at most CLI_READ_LIMIT bytes ("-": standard input,
 * any kind, as bounded); opening never blocks. NULL on failure, with the reason
 * ("it is a directory", the system's message) in `why` (size `why_size`). */
char *read_whole(const char *path, size_t *size, char *why, size_t why_size);

/* Checks that the library can stream `path` (uploadFrom, a multipart file part):
 * readable, and a regular file, or also a FIFO or character device unless
 * `regular_only`. Opens nothing. 0, or -1 with the reason in `why`. */
int check_streamed_file(const char *path, int regular_only, char *why, size_t why_size);

/* ---- server text on a terminal (terminal.c) ------------------------------------ */

/* Writes `n` bytes of text from a server to `out`. When `terminal` is set (the stream
 * is a terminal), control characters do not reach it raw: C0 controls but TAB, LF
 * and CR, DEL and bytes that are not UTF-8 show as \xHH, C1 controls (U+0080 to
 * U+009F) as \u0080 to \u009f. Otherwise the bytes go out unchanged. */
void put_text(FILE *out, const char *text, size_t n, int terminal);
/* put_text of a NUL-terminated string (NULL: nothing). */
void put_string(FILE *out, const char *text, int terminal);
/* A message about the command line on standard error: `before`, then `arg` (what the
 * user typed, or a file name: escaped as put_text does when standard error is a
 * terminal, so that an argument cannot send the terminal escape sequences), then
 * `after`. */
void report_arg(const char *before, const char *arg, const char *after);

/* ---- JSON --------------------------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT, J_RAW } jtype;

/* A parsed value. Strings are unescaped UTF-8 (`len` bytes, may hold NUL); numbers
 * and booleans keep their text, so numbers pass through exactly as written. A J_RAW
 * node is an array or object kept as its JSON text (`text`, `len`), unparsed
 * (json_parse_result); json_write writes it as it writes the parsed tree. */
typedef struct jnode {
    jtype type;
    char *key;            /* member name inside an object, else NULL */
    size_t key_len;       /* its length in bytes: a name may hold NUL (\u0000) */
    char *text;
    size_t len;
    struct jnode *child;  /* first element or member */
    struct jnode *next;
} jnode;

/* Parses `len` bytes; NULL on error with a message in `error` (size `error_size`). */
jnode *json_parse(const char *text, size_t len, char *error, size_t error_size);
/* Parses a result document, keeping its top-level "value" member, when it is an
 * array or object, as a J_RAW node of its JSON text: a large response body is then
 * held once as text instead of as a tree of nodes (dozens of bytes per byte). */
jnode *json_parse_result(const char *text, size_t len, char *error, size_t error_size);
/* Writes the JSON text `text` (`len` bytes) as json_write writes the tree json_parse
 * would make of it, at `depth`, without making the tree; 0 when it is not valid JSON
 * (the message in `error`). */
int json_rewrite(buf *out, const char *text, size_t len, int pretty, int depth, char *error, size_t error_size);
void json_free(jnode *node);
/* A new node of `type`; `text` (`len` bytes, may be NULL) is copied: a string's
 * bytes, or a number's or boolean's JSON text. */
jnode *json_new(jtype type, const char *text, size_t len);
/* Whether `member`'s name is the C string `key` (a name holding NUL never is). */
int json_key_is(const jnode *member, const char *key);
jnode *json_get(const jnode *object, const char *key);
/* The member's string value, or NULL when absent or not a string. */
const char *json_string(const jnode *object, const char *key);
/* Sets object[key] to a new string, replacing an existing member. */
void json_set_string(jnode *object, const char *key, const char *value);
/* Sets object[key] to a scalar of `type` whose JSON text (or string) is `text`. */
void json_set(jnode *object, const char *key, jtype type, const char *text);
/* Sets object[key] to `value` (taken), replacing an existing member. */
void json_set_node(jnode *object, const char *key, jnode *value);
/* Returns object[key], made an empty object first when absent or not an object. */
jnode *json_object_member(jnode *object, const char *key);
/* Writes `node` as JSON: compact, or indented by two spaces. */
void json_write(buf *out, const jnode *node, int pretty, int depth);

/* ---- request items ------------------------------------------------------------ */

typedef struct request_spec {
    const char *method;      /* NULL: GET, or POST with data */
    const char *url;
    int form;                /* --form: fields are a form body */
    const jnode *config;     /* the config document, or NULL: what `Header:` cannot take away */
    const char *call_name;   /* call: the named endpoint (its headers count as the config's) */
    int has_auth;            /* -a/--auth: it sets Authorization, `Authorization:` does not unset it */
    int ignore_stdin;        /* --ignore-stdin: `@-` is refused, not read */
    /* set by items_to_members: */
    int has_body;            /* a body was given */
    int no_user_agent;       /* `User-Agent:`: the config's userAgent is to be "" (none sent) */
    int no_compression;      /* `Accept-Encoding:`: the config's compression is to be false */
    int no_auth;             /* `Authorization:` without -a: the endpoint has "auth": {} */
} request_spec;

/* Applies one httpie nested JSON item, `key` (its path, escapes included) set to
 * `value` (taken: freed on failure), to `*root`, made by the first item (NULL before).
 * 0, or -1 with why in `why` (the caller frees it), a second and third line showing
 * where in the key. See nested.c for the grammar. */
int nested_json_set(jnode **root, const char *key, jnode *value, buf *why);

/* Adds to `endpoint` (an open JSON object, members so far end without a comma
 * when `*first` is set) the query, headers and body the items describe. Returns 0
 * or EXIT_USAGE after printing why. `stdin_body` reads standard input as the body.
 * `literal[i]` (NULL: none) marks an -H header, "Name: value" taken as curl takes it:
 * no separator or escape in its value means anything (`-H 'X: @f'` sends "@f"). */
int items_to_members(buf *endpoint, int *first, char **items, int count, request_spec *spec, int stdin_body,
                     int params_mode, const unsigned char *literal);

/* ---- authentication (auth.c) ---------------------------------------------------- */

/* Writes the endpoint's "auth" value for -a CREDENTIALS and --auth-type TYPE (NULL:
 * basic) to `out`. A missing password is asked for on the terminal when `may_prompt`
 * (not --ignore-stdin), the prompt naming the user and then `where` ("@host"); without
 * a terminal on standard input it is refused. 0, or EXIT_USAGE after printing why
 * (Ctrl-C at the prompt exits 130). */
int auth_document(buf *out, const char *credentials, const char *type, const char *where, int may_prompt);

/* ---- running ------------------------------------------------------------------ */

typedef struct run_options {
    int result_document;     /* --result */
    int verbose;             /* -v */
    int pretty;              /* --pretty / --no-pretty / terminal */
    int check_status;        /* --check-status */
    int include_head;        /* -i / HEAD */
    const char *download;    /* --download FILE */
    int head_request;        /* the method is HEAD: a null value is no body, not JSON null */
    const char *verify;      /* --verify yes|no|CA_FILE, -k (no): the config's tls.verify or tls.caFile */
    const char *cert;        /* --cert FILE: the config's tls.certFile */
    const char *cert_key;    /* --cert-key FILE: the config's tls.keyFile */
} run_options;

/* Sends one request (an endpoint document, or a named endpoint with its overlay)
 * and prints what the options ask for; returns the exit status. */
int run_request(const char *config_json, const char *endpoint_json, const char *call_name,
                const run_options *options);

/* `netlayer ops`: prints what the config's named endpoints and OpenAPI operations
 * are (the JSON document with --result); returns the exit status. */
int list_operations(const char *config_json, const run_options *options);

/* The signal (SIGINT, SIGTERM) that interrupted the command, 0 if none; set by the
 * commands' signal handlers. */
extern volatile sig_atomic_t g_interrupting_signal;

/* The status for a command a signal interrupted: 128 + its number, as a shell reports
 * a process the signal ended (130 for Ctrl-C, 143 for SIGTERM). */
int exit_status_for_signal(void);

/* The exit status a result document stands for; see --help. */
int exit_status_for(const jnode *result, int check_status);

/* -v: the LOG hook that prints the library's debug events (each request and response
 * with their headers, redacted as the library redacts them) on standard error. */
void print_log_event(const char *event_json, nl_reply *reply, void *user_data);

/* `netlayer ws`: opens the WebSocket `document_json` describes, sends each line of
 * standard input (when `read_input`) as a text message, prints each message received,
 * and closes with 1000 at the input's end; returns the exit status. */
int run_websocket(const char *config_json, const char *document_json, const run_options *o, int read_input);

#endif /* NETLAYER_CLI_H */
