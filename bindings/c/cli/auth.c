#define _POSIX_C_SOURCE 200809L
/* -a/--auth and -A/--auth-type, read as httpie reads them:
 *
 *   basic (the default), digest   -a USER:PASSWORD, split at the first ':' that no
 *                                 backslash escapes; -a USER asks for the password
 *   bearer                        -a TOKEN, the whole value
 *
 * The credentials become the endpoint's "auth" key (docs/documents.md,
 * "Authentication"), never a header of the CLI's making: the library's credential
 * rules (redaction in logs, dropped on a redirect to another origin) apply to them.
 * The password prompt reads the terminal (/dev/tty) with echo off, only when standard
 * input is that terminal: a script never waits on a prompt it cannot answer. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* The longest password the prompt reads. */
#define PASSWORD_LIMIT 4096

static volatile sig_atomic_t g_prompt_signal;

static void on_prompt_signal(int sig) { g_prompt_signal = sig; g_interrupting_signal = sig; }

static void put_fd(int fd, const char *s) {
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Reads one line from the terminal without echo. The password (the caller frees it),
 * or NULL after printing why; Ctrl-C exits 130 with the terminal as it was. */
static char *prompt_password(const char *user, const char *where) {
    static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    struct sigaction handler, saved_handlers[4];
    struct termios saved, quiet;
    buf line = { 0 };
    int fd, i, done = 0, failed = 0;
    char c;
    if (!isatty(STDIN_FILENO)) {
        fprintf(stderr, "netlayer: -a '%s' has no password, and standard input is not a terminal to ask for it on; "
                        "give -a USER:PASSWORD\n", user);
        return NULL;
    }
    if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || tcgetattr(fd, &saved) != 0) {
        fprintf(stderr, "netlayer: -a '%s' has no password, and the terminal cannot be read (%s); "
                        "give -a USER:PASSWORD\n", user, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    memset(&handler, 0, sizeof handler);
    handler.sa_handler = on_prompt_signal;   /* no SA_RESTART: read() returns, echo comes back */
    sigemptyset(&handler.sa_mask);
    for (i = 0; i < 4; i++) sigaction(signals[i], &handler, &saved_handlers[i]);
    quiet = saved;
    quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
    quiet.c_lflag |= ICANON;
    tcsetattr(fd, TCSAFLUSH, &quiet);
    put_fd(fd, "netlayer: password for ");
    put_fd(fd, user);
    put_fd(fd, where);
    put_fd(fd, ": ");
    buf_add(&line, "", 0);
    while (!done && !g_prompt_signal) {
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) failed = done = 1;                  /* end of input: no password */
        else if (c == '\n' || c == '\r') done = 1;
        else if (line.len >= PASSWORD_LIMIT) failed = done = 2;
        else buf_add(&line, &c, 1);
    }
    tcsetattr(fd, TCSAFLUSH, &saved);
    put_fd(fd, "\n");
    close(fd);
    for (i = 0; i < 4; i++) sigaction(signals[i], &saved_handlers[i], NULL);
    if (g_prompt_signal) {
        memset(line.data, 0, line.len);
        free(line.data);
        exit(exit_status_for_signal());
    }
    if (failed) {
        if (failed == 2) fprintf(stderr, "netlayer: the password is longer than %d bytes\n", PASSWORD_LIMIT);
        else fputs("netlayer: no password was typed\n", stderr);
        memset(line.data, 0, line.len);
        free(line.data);
        return NULL;
    }
    return line.data;
}

int auth_document(buf *out, const char *credentials, const char *type, const char *where, int may_prompt) {
    buf user = { 0 };
    const char *p, *password = NULL;
    char *typed = NULL;
    if (!type) type = "basic";
    if (strcmp(type, "basic") != 0 && strcmp(type, "digest") != 0 && strcmp(type, "bearer") != 0) {
        fprintf(stderr, "netlayer: --auth-type takes basic, digest or bearer, not '%s' (see netlayer --help)\n", type);
        return EXIT_USAGE;
    }
    if (strcmp(type, "bearer") == 0) {
        buf_puts(out, "{\"bearer\":");
        buf_json_string(out, credentials, strlen(credentials));
        buf_puts(out, "}");
        return 0;
    }
    /* httpie's KeyValueArgType(':'): \: is a colon of the user name; any other
     * backslash stays. Without a separator, the whole value is the user name. */
    for (p = credentials; *p; p++) {
        if (p[0] == '\\' && p[1] == ':') { buf_add(&user, ":", 1); p++; continue; }
        if (*p == ':') { password = p + 1; break; }
        buf_add(&user, p, 1);
    }
    buf_add(&user, "", 0);
    if (!password && !may_prompt) {
        fprintf(stderr, "netlayer: -a '%s' has no password, and --ignore-stdin rules out asking for it; "
                        "give -a USER:PASSWORD\n", credentials);
        free(user.data);
        return EXIT_USAGE;
    }
    if (!password) {
        free(user.data);
        if (!(typed = prompt_password(credentials, where))) return EXIT_USAGE;
        password = typed;
        user.data = NULL;
        user.len = user.cap = 0;
        buf_puts(&user, credentials);
    }
    buf_printf(out, "{\"%s\":{\"user\":", type);
    buf_json_string(out, user.data, user.len);
    buf_puts(out, ",\"password\":");
    buf_json_string(out, password, strlen(password));
    buf_puts(out, "}}");
    free(user.data);
    if (typed) {
        memset(typed, 0, strlen(typed));
        free(typed);
    }
    return 0;
}
