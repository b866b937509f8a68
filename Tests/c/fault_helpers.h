/*
 * fault_helpers.h — helpers shared by test_faults.c, test_tls.c and test_security.c:
 * starting extra loopback servers (Tests/server/faulty.py, tls_server.py, a second
 * server.py) from the test itself, closed and black-hole ports, the process's RSS,
 * and local certificates made with the openssl command-line tool.
 *
 * Include after harness.h. The server scripts are found next to this header
 * (__FILE__ is absolute under CMake): <dir of this file>/../server/<script>, or in
 * $NETLAYER_SERVER_DIR when that is set. Every spawned server gets a pipe as its
 * stdin and runs with --exit-on-stdin-eof, so it also ends when the test dies.
 * Everything listens on 127.0.0.1 only.
 */
#ifndef NETLAYER_FAULT_HELPERS_H
#define NETLAYER_FAULT_HELPERS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

static inline int fh_slow_mode(void)
{
    const char *s = getenv("NETLAYER_TEST_SLOW");
    return s != NULL && *s != '\0';
}

/* ---- spawned servers ------------------------------------------------------------------- */

typedef struct fh_server {
    pid_t pid;
    int stdin_fd; /* write end of the child's stdin; closing it stops the child */
    int port;
    char dir[256]; /* temporary folder of the port file */
} fh_server;

/* "<dir of this header>/../server/<script>" or "$NETLAYER_SERVER_DIR/<script>" (malloc'ed). */
static inline char *fh_script_path(const char *script)
{
    const char *env = getenv("NETLAYER_SERVER_DIR");
    const char *file = __FILE__;
    const char *slash;
    if (env != NULL && *env != '\0')
        return nlt_format("%s/%s", env, script);
    slash = strrchr(file, '/');
    if (slash == NULL)
        return nlt_format("../server/%s", script);
    return nlt_format("%.*s/../server/%s", (int)(slash - file), file, script);
}

/* Starts `python3 <script> --port 0 --host 127.0.0.1 --port-file F --exit-on-stdin-eof
 * <extra...>` (extra is NULL-terminated, may be NULL) and waits for its port.
 * Returns 1 on success (s->port set), 0 on failure (with a failed check). */
static inline int fh_server_start(fh_server *s, const char *script, const char *const *extra)
{
    char *path = fh_script_path(script);
    char *port_file;
    const char *argv[32];
    int argc = 0, i, fds[2], devnull;
    double deadline;
    memset(s, 0, sizeof(*s));
    s->pid = -1;
    s->stdin_fd = -1;
    snprintf(s->dir, sizeof(s->dir), "/tmp/netlayer-srv-XXXXXX");
    if (path == NULL || mkdtemp(s->dir) == NULL) {
        nlt_fail(__FILE__, __LINE__, "mkdtemp", "cannot make a temporary folder");
        free(path);
        return 0;
    }
    if (access(path, R_OK) != 0) {
        nlt_fail(__FILE__, __LINE__, "access(script)", "cannot find %s", path);
        free(path);
        return 0;
    }
    port_file = nlt_format("%s/port", s->dir);
    argv[argc++] = "python3";
    argv[argc++] = path;
    argv[argc++] = "--port";
    argv[argc++] = "0";
    argv[argc++] = "--host";
    argv[argc++] = "127.0.0.1";
    argv[argc++] = "--port-file";
    argv[argc++] = port_file;
    argv[argc++] = "--exit-on-stdin-eof";
    for (i = 0; extra != NULL && extra[i] != NULL && argc < 31; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;

    if (pipe(fds) != 0) {
        nlt_fail(__FILE__, __LINE__, "pipe", "pipe failed");
        free(path);
        free(port_file);
        return 0;
    }
    fcntl(fds[1], F_SETFD, FD_CLOEXEC); /* other children must not keep it open */
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    s->pid = fork();
    if (s->pid == 0) {
        dup2(fds[0], STDIN_FILENO);
        if (devnull >= 0)
            dup2(devnull, STDOUT_FILENO);
        close(fds[0]);
        execvp("python3", (char *const *)argv);
        _exit(127);
    }
    close(fds[0]);
    if (devnull >= 0)
        close(devnull);
    if (s->pid < 0) {
        close(fds[1]);
        nlt_fail(__FILE__, __LINE__, "fork", "fork failed");
        free(path);
        free(port_file);
        return 0;
    }
    s->stdin_fd = fds[1];
    deadline = now_ms() + 15000.0;
    while (now_ms() < deadline) {
        FILE *f = fopen(port_file, "r");
        int status;
        if (f != NULL) {
            int port = 0;
            if (fscanf(f, "%d", &port) == 1 && port > 0)
                s->port = port;
            fclose(f);
            if (s->port > 0)
                break;
        }
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = -1;
            break;
        }
        sleep_ms(20);
    }
    if (s->port <= 0)
        nlt_fail(__FILE__, __LINE__, "server port", "%s did not report a port", path);
    free(path);
    free(port_file);
    return s->port > 0;
}

static inline void fh_server_stop(fh_server *s)
{
    if (s->stdin_fd >= 0)
        close(s->stdin_fd);
    s->stdin_fd = -1;
    if (s->pid > 0) {
        int status, i;
        kill(s->pid, SIGTERM);
        for (i = 0; i < 250; i++) {
            if (waitpid(s->pid, &status, WNOHANG) == s->pid)
                break;
            sleep_ms(20);
        }
        if (i == 250) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
        }
    }
    s->pid = -1;
    if (s->dir[0] != '\0') {
        char *port_file = nlt_format("%s/port", s->dir);
        if (port_file != NULL)
            unlink(port_file);
        free(port_file);
        rmdir(s->dir);
        s->dir[0] = '\0';
    }
}

/* ---- ports --------------------------------------------------------------------------------- */

/* A loopback port nobody listens on (bound, then closed). */
static inline int fh_closed_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int port = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port ? port : 1;
}

/* A listener on 127.0.0.1 that never accepts, its backlog (0) filled so that
 * further SYNs go unanswered (as in test_stress.c). */
typedef struct fh_blackhole {
    int listener;
    int fillers[4];
    int nfillers;
    int port;
} fh_blackhole;

static inline void fh_blackhole_close(fh_blackhole *b)
{
    int i;
    for (i = 0; i < b->nfillers; i++)
        close(b->fillers[i]);
    b->nfillers = 0;
    if (b->listener >= 0)
        close(b->listener);
    b->listener = -1;
}

static inline int fh_nonblocking_connect(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Returns 1 when a connect to b->port now hangs. */
static inline int fh_blackhole_open(fh_blackhole *b)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    struct pollfd pfd;
    int probe, i, connected;

    memset(b, 0, sizeof(*b));
    b->listener = socket(AF_INET, SOCK_STREAM, 0);
    if (b->listener < 0)
        return 0;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(b->listener, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(b->listener, 0) != 0 ||
        getsockname(b->listener, (struct sockaddr *)&a, &len) != 0) {
        fh_blackhole_close(b);
        return 0;
    }
    b->port = ntohs(a.sin_port);
    for (i = 0; i < 4; i++) {
        int fd = fh_nonblocking_connect(b->port);
        if (fd >= 0)
            b->fillers[b->nfillers++] = fd;
    }
    sleep_ms(20);
    probe = fh_nonblocking_connect(b->port);
    if (probe < 0)
        return 0;
    pfd.fd = probe;
    pfd.events = POLLOUT;
    pfd.revents = 0;
    connected = poll(&pfd, 1, 300) > 0;
    close(probe);
    return !connected;
}

/* ---- process ---------------------------------------------------------------------------- */

/* Resident set size of this process in KiB (VmRSS), or -1. */
static inline long fh_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* Runs a shell command (printf-formatted), its output discarded unless it fails.
 * Returns 1 when it exited with status 0. */
static inline int fh_sh(const char *fmt, ...)
{
    va_list ap;
    char *cmd, *full;
    int rc;
    va_start(ap, fmt);
    cmd = nlt_vformat(fmt, ap);
    va_end(ap);
    if (cmd == NULL)
        return 0;
    full = nlt_format("(%s) >/dev/null 2>&1", cmd);
    fflush(stdout);
    rc = full ? system(full) : -1;
    if (rc != 0)
        nlt_note("command failed (%d): %s", rc, cmd);
    free(full);
    free(cmd);
    return rc == 0;
}

/* Reads a whole small text file (malloc'ed) or NULL. */
static inline char *fh_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (n >= 0) ? (char *)malloc((size_t)n + 1) : NULL;
    if (buf != NULL) {
        size_t got = fread(buf, 1, (size_t)n, f);
        buf[got] = '\0';
    }
    fclose(f);
    return buf;
}

/* ---- certificates ------------------------------------------------------------------------ */

/* In `dir` (made by mkdtemp):
 *   ca.pem/ca.key         a local CA
 *   server.pem/server.key 127.0.0.1 + localhost, signed by the CA
 *   wronghost.pem/.key    wrong.example only, signed by the CA
 *   self.pem/self.key     self-signed, 127.0.0.1 + localhost
 * EC P-256 keys (cheap handshakes under valgrind). Returns 1 on success. */
static inline int fh_make_certs(const char *dir)
{
    const char *ossl = "openssl";
    const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    char *ext;
    FILE *f;
    ext = nlt_format("%s/server.ext", dir);
    f = ext ? fopen(ext, "w") : NULL;
    if (f == NULL) {
        free(ext);
        return 0;
    }
    fputs("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n", f);
    fclose(f);
    free(ext);
    ext = nlt_format("%s/wronghost.ext", dir);
    f = ext ? fopen(ext, "w") : NULL;
    if (f == NULL) {
        free(ext);
        return 0;
    }
    fputs("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:wrong.example\n", f);
    fclose(f);
    free(ext);
    return fh_sh("cd '%s' && %s req -x509 %s -keyout ca.key -out ca.pem -days 2 -subj '/CN=Netlayer Test CA'"
                 " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
                 dir, ossl, ec) &&
           fh_sh("cd '%s' && %s req %s -keyout server.key -out server.csr -subj '/CN=localhost'"
                 " && %s x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                 " -extfile server.ext -out server.pem",
                 dir, ossl, ec, ossl) &&
           fh_sh("cd '%s' && %s req %s -keyout wronghost.key -out wronghost.csr -subj '/CN=wrong.example'"
                 " && %s x509 -req -in wronghost.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
                 " -extfile wronghost.ext -out wronghost.pem",
                 dir, ossl, ec, ossl) &&
           fh_sh("cd '%s' && %s req -x509 %s -keyout self.key -out self.pem -days 2 -subj '/CN=localhost'"
                 " -addext subjectAltName=DNS:localhost,IP:127.0.0.1",
                 dir, ossl, ec);
}

/* "sha256//<base64 of the SPKI sha256>" of a certificate (malloc'ed) or NULL. */
static inline char *fh_pin_of(const char *cert_pem)
{
    char *cmd = nlt_format("openssl x509 -in '%s' -pubkey -noout | openssl pkey -pubin -outform der"
                           " | openssl dgst -sha256 -binary | base64", cert_pem);
    FILE *p;
    char line[256] = "";
    size_t n;
    if (cmd == NULL)
        return NULL;
    fflush(stdout);
    p = popen(cmd, "r");
    free(cmd);
    if (p == NULL)
        return NULL;
    if (fgets(line, sizeof(line), p) == NULL)
        line[0] = '\0';
    pclose(p);
    n = strcspn(line, "\r\n");
    line[n] = '\0';
    if (n < 40)
        return NULL;
    return nlt_format("sha256//%s", line);
}

/* Removes a folder made by fh_make_certs (or any flat folder of files). */
static inline void fh_rm_dir(const char *dir)
{
    if (dir != NULL && strncmp(dir, "/tmp/netlayer-", 14) == 0 && strchr(dir, '\'') == NULL)
        fh_sh("rm -rf '%s'", dir);
}

#endif /* NETLAYER_FAULT_HELPERS_H */
