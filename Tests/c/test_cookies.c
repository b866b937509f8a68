/*
 * test_cookies.c — the client's cookie jar (libcurl's cookie engine): on by default,
 * domain, path and secure rules, Set-Cookie values kept apart, off by config, and a
 * Netscape cookie file read at start and written at nl_client_free: regular files
 * only, written 0600 through a temporary file (a link replaced, never followed),
 * locked against a second saving client, session cookies left out, failures told.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "fault_helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *cookie_header(json_t *echo)
{
    return jpath_str(echo, "value.headers.cookie");
}

/* Whether the request's Cookie header holds the pair `pair` ("name=value"). */
static int has_cookie(json_t *echo, const char *pair)
{
    const char *h = cookie_header(echo), *p;
    size_t n = strlen(pair);
    for (p = h; p && (p = strstr(p, pair)) != NULL; p += n)
        if ((p == h || p[-1] == ' ') && (p[n] == ';' || p[n] == '\0'))
            return 1;
    return 0;
}

/* (A Secure cookie goes to 127.0.0.1 over http too: loopback is a secure context to
 * libcurl, as in RFC 6265bis.) */
static void test_cookies_are_kept_per_client_with_their_rules(void)
{
    nl_client *c = client_for(NULL), *other;
    json_t *r, *set;
    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": [\"a=1; Path=/\","
                        " \"b=2; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT\", \"p=3; Path=/echo/sub\","
                        " \"s=4; Path=/; Secure\", \"d=5; Domain=example.com; Path=/\"]}}");
    CHECK_OK(r);
    set = json_object_get(r, "setCookies");
    REQUIRE(json_is_array(set));
    CHECK_INT_EQ(json_array_size(set), 5);  /* each on its own, the comma of Expires kept */
    CHECK_STR_EQ(json_string_value(json_array_get(set, 1)), "b=2; Path=/; Expires=Wed, 21 Oct 2037 07:28:00 GMT");
    json_decref(r);

    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(has_cookie(r, "a=1") && has_cookie(r, "b=2") && !has_cookie(r, "p=3") && !has_cookie(r, "d=5"),
              "not /echo/sub's, not example.com's: %s", cookie_header(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo/sub/x\"}");
    CHECK_MSG(cookie_header(r) && strstr(cookie_header(r), "p=3") != NULL, "cookie: %s", cookie_header(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK(json_object_get(r, "setCookies") == NULL);
    json_decref(r);

    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"a=; Path=/; Max-Age=0\"}}");  /* deleted */
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(!has_cookie(r, "a=1") && has_cookie(r, "b=2"), "a deleted: %s", cookie_header(r));
    json_decref(r);

    other = client_for(NULL);  /* another client has its own jar */
    r = request_json(other, "{\"path\": \"echo\"}");
    CHECK(cookie_header(r) == NULL);
    json_decref(r);
    nl_client_free(other);

    /* A batch runs on the event loop: it shares the jar with the blocking calls. */
    {
        char *results = nl_request_batch(c, "[{\"path\": \"set-cookie\", \"query\": {\"c\": \"z=9; Path=/\"}},"
                                            " {\"path\": \"json\"}]");
        CHECK(results != NULL && strstr(results, "\"ok\":false") == NULL);
        nl_free(results);
    }
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(cookie_header(r) && strstr(cookie_header(r), "z=9") != NULL, "cookie: %s", cookie_header(r));
    json_decref(r);
    nl_client_free(c);
}

static void test_cookies_off_sends_and_keeps_none(void)
{
    nl_client *c = client_for("\"cookies\": false");
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"a=1; Path=/\"}}");
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK(cookie_header(r) == NULL);
    json_decref(r);
    nl_client_free(c);
}

static void test_a_cookie_file_is_read_at_start_and_written_at_free(void)
{
    char dir[] = "/tmp/netlayer-cookies-XXXXXX";
    char *path, *config, line[512];
    int found_new = 0, found_old = 0;
    nl_client *c;
    json_t *r;
    FILE *f;
    REQUIRE(mkdtemp(dir) != NULL);
    path = nlt_format("%s/jar.txt", dir);
    f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t4102444800\told\tfromfile\n", f);
    fclose(f);

    config = nlt_format("\"cookies\": {\"file\": \"%s\"}", path);
    c = client_for(config);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_STR_EQ(cookie_header(r), "old=fromfile");
    json_decref(r);
    r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"new=1; Path=/; Max-Age=3600\"}}");
    json_decref(r);
    nl_client_free(c);
    free(config);

    f = fopen(path, "r");
    REQUIRE(f != NULL);
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "\tnew\t1")) found_new = 1;
        if (strstr(line, "\told\tfromfile")) found_old = 1;
    }
    fclose(f);
    CHECK_MSG(found_new && found_old, "the saved jar lacks a cookie (new %d, old %d)", found_new, found_old);

    config = nlt_format("\"cookies\": {\"file\": \"%s/missing.txt\", \"save\": false}", dir);
    c = client_for(config);  /* a file that does not exist yet is an empty jar */
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    CHECK(cookie_header(r) == NULL);
    json_decref(r);
    nl_client_free(c);
    free(config);
    config = nlt_format("%s/missing.txt", dir);
    CHECK_MSG(access(config, F_OK) != 0, "save: false wrote %s", config);
    free(config);
    free(path);
    {
        char *cmd = nlt_format("rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
        free(cmd);
    }
}

static void test_malformed_cookies_config_is_refused(void)
{
    static const char *const configs[] = {
        "\"cookies\": 1", "\"cookies\": {\"file\": 3}", "\"cookies\": {\"path\": \"x\"}", "\"cookies\": {\"file\": \"\"}",
        "\"cookies\": {\"file\": \"/tmp\"}",
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(configs); i++) {
        char *config = nlt_format("{\"baseURL\": \"%s\", %s}", base_url(), configs[i]);
        char *error = NULL;
        nl_client *c = nl_client_new(config, &error);
        CHECK_MSG(c == NULL && error && strstr(error, "cookies"), "%s: %s", configs[i], error ? error : "(accepted)");
        if (c) nl_client_free(c);
        nl_free(error);
        free(config);
    }
}

/* ---- the cookie file: what may be read and written, and how -------------------------- */

static char *make_dir(void)
{
    char *dir = nlt_format("/tmp/netlayer-jar-XXXXXX");
    REQUIRE(mkdtemp(dir) != NULL);
    return dir;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    REQUIRE_MSG(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* The error of nl_client_new(config) (caller frees with nl_free), or NULL when it made a client (freed here). */
static char *creation_error(const char *config)
{
    char *error = NULL;
    nl_client *c = nl_client_new(config, &error);
    if (c != NULL) {
        nl_client_free(c);
        nl_free(error);
        return NULL;
    }
    return error;
}

/* A config with the cookie jar `jar_members` (members of the "cookies" object, which it frees). */
static char *jar_config(char *jar_members)
{
    char *config;
    REQUIRE(jar_members != NULL);
    config = nlt_format("{\"baseURL\": \"%s\", \"timeout\": 10, \"cookies\": {%s}}", base_url(), jar_members);
    free(jar_members);
    return config;
}

/* Sets the cookies `query_c` (a JSON string or array of Set-Cookie values) on client c. */
static void set_cookies(nl_client *c, const char *query_c)
{
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": %s}}", query_c);
    CHECK_OK(r);
    json_decref(r);
}

/* Every 3 s until the test is done, opens `path` (a FIFO) read-write for 200 ms and
 * drains it: what unblocks a reader or a writer that waits on it, so that a library
 * that would wait forever fails the test's time check instead of hanging the suite. */
typedef struct fifo_rescue {
    pthread_mutex_t m;
    pthread_cond_t done_cv;
    int done;
    const char *path;
    pthread_t thread;
} fifo_rescue;

static void *fifo_rescue_run(void *arg)
{
    fifo_rescue *r = (fifo_rescue *)arg;
    pthread_mutex_lock(&r->m);
    while (!r->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 3;
        while (!r->done && pthread_cond_timedwait(&r->done_cv, &r->m, &until) != ETIMEDOUT) {
        }
        if (!r->done) {
            char buf[4096];
            int fd = open(r->path, O_RDWR | O_NONBLOCK);  /* a FIFO opened read-write never blocks (Linux) */
            pthread_mutex_unlock(&r->m);
            sleep_ms(200);
            if (fd >= 0) {
                while (read(fd, buf, sizeof buf) > 0) {
                }
                close(fd);
            }
            pthread_mutex_lock(&r->m);
        }
    }
    pthread_mutex_unlock(&r->m);
    return NULL;
}

static void fifo_rescue_start(fifo_rescue *r, const char *path)
{
    pthread_mutex_init(&r->m, NULL);
    pthread_cond_init(&r->done_cv, NULL);
    r->done = 0;
    r->path = path;
    REQUIRE(pthread_create(&r->thread, NULL, fifo_rescue_run, r) == 0);
}

static void fifo_rescue_stop(fifo_rescue *r)
{
    pthread_mutex_lock(&r->m);
    r->done = 1;
    pthread_cond_signal(&r->done_cv);
    pthread_mutex_unlock(&r->m);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->done_cv);
    pthread_mutex_destroy(&r->m);
}

static long rss_kb_of(pid_t pid)
{
    char path[64];
    long pages = 0, resident = 0;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%ld/statm", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* nl_client_new(config) in a child process, so that a read without end (a device)
 * cannot hang the suite or fill the machine's memory: the child's error document
 * (caller frees), "accepted", or "(runaway: ...)" when the child took more than 10 s
 * or 1 GB and was killed. */
static char *creation_error_in_child(const char *config)
{
    int fds[2], status = 0;
    pid_t pid;
    size_t used = 0, size = 4096;
    char *text = (char *)malloc(size);
    double deadline = now_ms() + 10000;
    long peak = 0;
    REQUIRE(text != NULL && pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char *error = NULL;
        nl_client *c;
        const char *answer;
        size_t done = 0, n;
        close(fds[0]);
        c = nl_client_new(config, &error);
        answer = c != NULL ? "accepted" : error != NULL ? error : "(no error document)";
        n = strlen(answer);
        while (done < n) {
            ssize_t w = write(fds[1], answer + done, n - done);
            if (w <= 0)
                break;
            done += (size_t)w;
        }
        close(fds[1]);
        nl_client_free(c);
        nl_free(error);
        _exit(0);
    }
    close(fds[1]);
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        long rss = rss_kb_of(pid);
        ssize_t n;
        if (rss > peak)
            peak = rss;
        if (now_ms() > deadline || rss > 1024L * 1024) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            close(fds[0]);
            free(text);
            return nlt_format("(runaway: killed after %.0f ms at %ld MB)", now_ms() - deadline + 10000, peak / 1024);
        }
        if (poll(&p, 1, 20) <= 0)
            continue;
        if (used + 1 >= size) {
            size *= 2;
            text = (char *)realloc(text, size);
            REQUIRE(text != NULL);
        }
        n = read(fds[0], text + used, size - used - 1);
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    text[used] = '\0';
    close(fds[0]);
    waitpid(pid, &status, 0);
    return text;
}

static void check_refused_naming_the_file(const char *error, const char *what)
{
    CHECK_MSG(error != NULL && strstr(error, "invalid_request") != NULL && strstr(error, "cookies") != NULL &&
                  strstr(error, "'file'") != NULL,
              "%s: %s", what, error ? error : "(accepted)");
}

static void test_a_cookie_file_that_is_a_fifo_or_a_device_is_refused_at_once(void)
{
    char *dir = make_dir(), *fifo = nlt_format("%s/jar.fifo", dir), *config, *error;
    static const char *const devices[] = {"/dev/zero", "/dev/urandom"};
    int save;
    size_t i;
    REQUIRE(mkfifo(fifo, 0600) == 0);
    for (save = 0; save <= 1; save++) {  /* no writer comes: a reader that waits for one never returns */
        fifo_rescue rescue;
        double started = now_ms();
        config = jar_config(nlt_format("\"file\": \"%s\", \"save\": %s", fifo, save ? "true" : "false"));
        fifo_rescue_start(&rescue, fifo);
        error = creation_error(config);
        fifo_rescue_stop(&rescue);
        check_refused_naming_the_file(error, save ? "a FIFO to read and save" : "a FIFO to read");
        CHECK_MSG(error != NULL && strstr(error, "FIFO") != NULL, "the message says what the file is: %s", error);
        CHECK_MSG(now_ms() - started < 2000, "nl_client_new waited %.0f ms on the FIFO", now_ms() - started);
        nl_free(error);
        free(config);
    }
#ifndef NLT_TSAN
    for (i = 0; i < NLT_COUNT(devices); i++) {  /* read without end: in a child, which is killed if it runs away */
        config = jar_config(nlt_format("\"file\": \"%s\", \"save\": false", devices[i]));
        error = creation_error_in_child(config);
        check_refused_naming_the_file(error, devices[i]);
        CHECK_MSG(strstr(error, "character device") != NULL, "%s: %s", devices[i], error);
        free(error);
        free(config);
    }
#else
    (void)devices;
    (void)i;
#endif
    unlink(fifo);
    rmdir(dir);
    free(fifo);
    free(dir);
}

/* Frees `c` with standard error captured; returns what it wrote (caller frees). */
static char *free_capturing_stderr(nl_client *c)
{
    char *captured = nlt_format("/tmp/nl-cookies-stderr-%ld", (long)getpid()), *text;
    int saved = dup(2), fd = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    nl_client_free(c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    text = fh_read_file(captured);
    unlink(captured);
    free(captured);
    return text;
}

static void test_a_cookie_file_that_became_a_fifo_is_left_alone_and_the_failure_told(void)
{
    char *dir = make_dir(), *jar = nlt_format("%s/jar.txt", dir), *text;
    nl_client *c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", jar)));
    fifo_rescue rescue;
    struct stat st;
    double started;
    set_cookies(c, "\"k=v; Path=/; Max-Age=3600\"");
    REQUIRE(mkfifo(jar, 0600) == 0);  /* after the client was made */
    fifo_rescue_start(&rescue, jar);
    started = now_ms();
    text = free_capturing_stderr(c);
    fifo_rescue_stop(&rescue);
    CHECK_MSG(now_ms() - started < 2000, "nl_client_free waited %.0f ms on the FIFO", now_ms() - started);
    CHECK(lstat(jar, &st) == 0 && S_ISFIFO(st.st_mode));  /* not replaced */
    CHECK_MSG(text && strstr(text, "\"event\":\"error\"") && strstr(text, "\"kind\":\"io\"") && strstr(text, "cookies") &&
                  strstr(text, jar) && strstr(text, "FIFO"),
              "stderr: %s", text ? text : "(none)");
    free(text);
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(jar);
    free(dir);
}

/* Whether the cookie file at `path` holds a cookie line with `name` and `value`. */
static int file_has_cookie(const char *path, const char *name, const char *value)
{
    char *text = fh_read_file(path), *needle = nlt_format("\t%s\t%s\n", name, value);
    int found = text != NULL && strstr(text, needle) != NULL;
    free(text);
    free(needle);
    return found;
}

static void test_a_link_at_the_cookie_file_is_replaced_and_its_target_untouched(void)
{
    static const char precious[] = "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t4102444800\tfromtarget\t1\n";
    char *dir = make_dir(), *target = nlt_format("%s/target.txt", dir), *link = nlt_format("%s/jar.txt", dir);
    char *dangling = nlt_format("%s/dangling.txt", dir), *nowhere = nlt_format("%s/nowhere.txt", dir), *text;
    nl_client *c;
    json_t *r;
    struct stat st;
    write_text(target, precious);
    REQUIRE(symlink(target, link) == 0);
    REQUIRE(symlink(nowhere, dangling) == 0);

    c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", link)));
    r = request_json(c, "{\"path\": \"echo\"}");  /* the link is read through */
    CHECK_MSG(has_cookie(r, "fromtarget=1"), "cookie: %s", cookie_header(r));
    json_decref(r);
    set_cookies(c, "\"new=1; Path=/; Max-Age=3600\"");
    nl_client_free(c);
    text = fh_read_file(target);
    CHECK_MSG(text != NULL && strcmp(text, precious) == 0, "the link's target changed: %s", text ? text : "(gone)");
    free(text);
    CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));  /* the link is now the jar's own file */
    CHECK(file_has_cookie(link, "new", "1") && file_has_cookie(link, "fromtarget", "1"));

    c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", dangling)));  /* an empty jar */
    set_cookies(c, "\"new=2; Path=/; Max-Age=3600\"");
    nl_client_free(c);
    CHECK_MSG(access(nowhere, F_OK) != 0, "a dangling link made its target %s", nowhere);
    CHECK(lstat(dangling, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(file_has_cookie(dangling, "new", "2"));
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(target);
    free(link);
    free(dangling);
    free(nowhere);
    free(dir);
}

static void test_a_saved_cookie_file_is_private_to_its_owner(void)
{
    char *dir = make_dir(), *fresh = nlt_format("%s/new.txt", dir), *old = nlt_format("%s/old.txt", dir);
    mode_t mask = umask(022);
    struct stat st;
    nl_client *c;
    write_text(old, "# Netscape HTTP Cookie File\n");
    REQUIRE(chmod(old, 0644) == 0);
    c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", fresh)));
    set_cookies(c, "\"token=s3cret; Path=/; Max-Age=3600\"");
    nl_client_free(c);
    CHECK(stat(fresh, &st) == 0);
    CHECK_MSG((st.st_mode & 0777) == 0600, "a new jar file has mode %o", (unsigned)(st.st_mode & 0777));
    c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", old)));
    set_cookies(c, "\"token=s3cret; Path=/; Max-Age=3600\"");
    nl_client_free(c);
    CHECK(stat(old, &st) == 0);
    CHECK_MSG((st.st_mode & 0777) == 0600, "a saved jar file has mode %o", (unsigned)(st.st_mode & 0777));
    CHECK(file_has_cookie(old, "token", "s3cret"));
    umask(mask);
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(fresh);
    free(old);
    free(dir);
}

static void test_a_second_client_saving_the_same_cookie_file_is_refused(void)
{
    char *dir = make_dir(), *jar = nlt_format("%s/jar.txt", dir), *same = nlt_format("%s/./jar.txt", dir), *error;
    nl_client *first = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", jar))), *reader;
    char *config;
    json_t *r;
    set_cookies(first, "\"a=1; Path=/; Max-Age=3600\"");

    config = jar_config(nlt_format("\"file\": \"%s\"", same));  /* the same file by another spelling */
    error = creation_error(config);
    check_refused_naming_the_file(error, "a second saving client");
    CHECK_MSG(error && strstr(error, "in use") && strstr(error, "jar.txt"), "%s", error ? error : "(accepted)");
    nl_free(error);
    free(config);

#ifndef NLT_TSAN
    config = jar_config(nlt_format("\"file\": \"%s\"", jar));  /* and from another process */
    error = creation_error_in_child(config);
    check_refused_naming_the_file(error, "a saving client in another process");
    free(error);
    free(config);
#endif

    /* a client that only reads the file does not write it: it may */
    reader = client_with_config(jar_config(nlt_format("\"file\": \"%s\", \"save\": false", jar)));
    r = request_json(reader, "{\"path\": \"echo\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(reader);

    nl_client_free(first);  /* gives the lock back */
    config = jar_config(nlt_format("\"file\": \"%s\"", jar));
    error = creation_error(config);
    CHECK_MSG(error == NULL, "after the first client was freed: %s", error);
    nl_free(error);
    free(config);
    CHECK(file_has_cookie(jar, "a", "1"));
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(jar);
    free(same);
    free(dir);
}

static void test_a_cookie_file_that_cannot_be_saved_is_refused_at_creation_or_told_at_free(void)
{
    char *dir = make_dir(), *inside = nlt_format("%s/gone/jar.txt", dir), *jar = nlt_format("%s/jar.txt", dir);
    char *config = jar_config(nlt_format("\"file\": \"%s\"", inside)), *error = creation_error(config), *text;
    nl_client *c;
    check_refused_naming_the_file(error, "a jar in a folder that does not exist");
    nl_free(error);
    free(config);

    config = jar_config(nlt_format("\"file\": \"%s\", \"save\": false", inside));  /* only read: a missing file is an empty jar */
    error = creation_error(config);
    CHECK_MSG(error == NULL, "%s", error);
    nl_free(error);
    free(config);

    c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", jar)));
    set_cookies(c, "\"a=1; Path=/; Max-Age=3600\"");
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);  /* the folder is gone by the time the client is freed */
    text = free_capturing_stderr(c);
    CHECK_MSG(text && strstr(text, "\"event\":\"error\"") && strstr(text, "\"kind\":\"io\"") && strstr(text, "cookies") &&
                  strstr(text, jar),
              "stderr: %s", text ? text : "(none)");
    free(text);
    free(inside);
    free(jar);
    free(dir);
}

static void test_session_cookies_are_neither_saved_nor_restored_unless_kept(void)
{
    static const char file_text[] = "# Netscape HTTP Cookie File\n"
                                    "127.0.0.1\tFALSE\t/\tFALSE\t0\toldsession\t1\n"
                                    "#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t4102444800\toldlasting\t1\n";
    char *dir = make_dir(), *jar = nlt_format("%s/jar.txt", dir);
    int keep;
    for (keep = 0; keep <= 1; keep++) {
        nl_client *c;
        json_t *r;
        write_text(jar, file_text);
        c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"%s", jar, keep ? ", \"keepSessionCookies\": true" : "")));
        r = request_json(c, "{\"path\": \"echo\"}");
        CHECK_MSG(has_cookie(r, "oldlasting=1") && has_cookie(r, "oldsession=1") == keep, "keep %d: cookie: %s", keep,
                  cookie_header(r));
        json_decref(r);
        set_cookies(c, "[\"newsession=1; Path=/\", \"newlasting=1; Path=/; Max-Age=3600\"]");
        r = request_json(c, "{\"path\": \"echo\"}");  /* within the client's life a session cookie is sent */
        CHECK_MSG(has_cookie(r, "newsession=1") && has_cookie(r, "newlasting=1"), "cookie: %s", cookie_header(r));
        json_decref(r);
        nl_client_free(c);
        CHECK(file_has_cookie(jar, "oldlasting", "1") && file_has_cookie(jar, "newlasting", "1"));
        CHECK_MSG(file_has_cookie(jar, "newsession", "1") == keep && file_has_cookie(jar, "oldsession", "1") == keep,
                  "keep %d: the session cookies in the file: new %d, old %d", keep, file_has_cookie(jar, "newsession", "1"),
                  file_has_cookie(jar, "oldsession", "1"));
    }
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(jar);
    free(dir);
}

/* How many lines of the cookie file `path` hold a cookie of `domain`. */
static int file_cookies_of(const char *path, const char *domain)
{
    char *text = fh_read_file(path), *line, *next, *prefix = nlt_format("%s\t", domain);
    int n = 0;
    for (line = text; line != NULL && *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        if (strncmp(line, "#HttpOnly_", 10) == 0)
            line += 10;
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            n++;
    }
    free(text);
    free(prefix);
    return n;
}

/* libcurl 7.88 takes 50 cookies from one response but keeps every one: a server setting
 * new ones on each response grew the jar without end. It keeps the newest 180 of a
 * domain, as browsers do. */
static void test_a_server_flooding_the_jar_leaves_it_the_newest_180_cookies_of_its_domain(void)
{
    char *dir = make_dir(), *jar = nlt_format("%s/jar.txt", dir);
    nl_client *c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", jar)));
    int round, i;
    json_t *r;
    for (round = 0; round < 10; round++) {
        char query[50 * 48] = "[";
        for (i = 0; i < 50; i++)
            snprintf(query + strlen(query), sizeof query - strlen(query), "%s\"f%d_%d=v; Path=/; Max-Age=3600\"",
                     i ? ", " : "", round, i);
        strcat(query, "]");
        set_cookies(c, query);
    }
    r = request_json(c, "{\"path\": \"echo\"}");  /* (libcurl sends a domain's first 150) */
    CHECK_MSG(has_cookie(r, "f6_20=v") && !has_cookie(r, "f6_19=v") && !has_cookie(r, "f0_0=v"), "cookie: %.300s",
              cookie_header(r));
    json_decref(r);
    nl_client_free(c);
    CHECK_INT_EQ(file_cookies_of(jar, "127.0.0.1"), 180);
    CHECK(file_has_cookie(jar, "f9_49", "v") && file_has_cookie(jar, "f6_20", "v"));
    CHECK(!file_has_cookie(jar, "f6_19", "v") && !file_has_cookie(jar, "f0_0", "v"));
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(jar);
    free(dir);
}

/* Opens `path` for writing a cookie file that starts with `per_domain` lasting cookies
 * (c0, c1, ...) of each of the domains d0.test ... d<domains-1>.test; the caller adds
 * its own lines and closes it. */
static FILE *cookie_file_of_domains(const char *path, int domains, int per_domain)
{
    FILE *f = fopen(path, "w");
    int d, i;
    REQUIRE(f != NULL);
    fputs("# Netscape HTTP Cookie File\n", f);
    for (d = 0; d < domains; d++)
        for (i = 0; i < per_domain; i++)
            fprintf(f, "d%d.test\tFALSE\t/\tFALSE\t4102444800\tc%d\tv\n", d, i);
    return f;
}

/* A cookie file of 100,000 cookies of one domain took libcurl the square of that to
 * read (each cookie compared with the domain's others). The jar takes each domain's
 * newest 180 and 3000 in all, the domains that hold the most giving way first. */
static void test_a_cookie_file_of_many_cookies_loads_at_once_within_the_limits(void)
{
    char *dir = make_dir(), *jar = nlt_format("%s/jar.txt", dir);
    FILE *f = cookie_file_of_domains(jar, 20, 180);
    double t0, took;
    int i, d, total = 0, others_ok = 1;
    nl_client *c;
    json_t *r;
    for (i = 0; i < 100000; i++)
        fprintf(f, "127.0.0.1\tFALSE\t/\tFALSE\t4102444800\tn%d\tv\n", i);
    fclose(f);

    t0 = now_ms();
    c = client_with_config(jar_config(nlt_format("\"file\": \"%s\"", jar)));
    took = now_ms() - t0;
    CHECK_MSG(took < (fh_slow_mode() ? 60000 : 3000), "the client took %.0f ms to read the file", took);
    r = request_json(c, "{\"path\": \"echo\"}");
    CHECK_MSG(has_cookie(r, "n99999=v") && !has_cookie(r, "n0=v"), "cookie: %.200s", cookie_header(r));
    json_decref(r);
    nl_client_free(c);

    /* 21 domains of 180: each keeps 142, and the room left (18) goes one each. */
    for (d = -1; d < 20; d++) {
        char *domain = d < 0 ? nlt_format("127.0.0.1") : nlt_format("d%d.test", d);
        int n = file_cookies_of(jar, domain);
        others_ok &= n == 142 || n == 143;
        total += n;
        free(domain);
    }
    CHECK(others_ok);
    CHECK_INT_EQ(total, 3000);
    CHECK(file_has_cookie(jar, "n99999", "v") && file_has_cookie(jar, "n99858", "v") && !file_has_cookie(jar, "n99856", "v"));
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(jar);
    free(dir);
}

/* The response cache keys a response by the jar's cookies for its host: each request
 * listed the whole jar (libcurl's list costs the square of its size). The listing is
 * kept until a response sets a cookie. */
static void test_cached_requests_beside_a_full_jar_do_not_list_it_each_time(void)
{
    char *dir = make_dir(), *jar = nlt_format("%s/jar.txt", dir);
    FILE *f = cookie_file_of_domains(jar, 20, 150);
    double t0, took;
    int i;
    nl_client *c;
    json_t *r;
    fputs("127.0.0.1\tFALSE\t/\tFALSE\t4102444800\tmine\t1\n", f);
    fclose(f);
    c = client_with_config(nlt_format("{\"baseURL\": \"%s\", \"cache\": {\"enabled\": true}, \"cookies\": {\"file\": \"%s\","
                                      " \"save\": false}}", base_url(), jar));
    r = request_json(c, "{\"path\": \"cache/jarfull\", \"query\": {\"max_age\": 60}, \"useCache\": true}");
    CHECK_OK(r);
    json_decref(r);
    t0 = now_ms();
    for (i = 0; i < 300; i++) {
        r = request_json(c, "{\"path\": \"cache/jarfull\", \"query\": {\"max_age\": 60}, \"useCache\": true}");
        CHECK_MSG(jpath_num(r, "value.hits", -1) == 1, "request %d was not answered from the cache", i);
        json_decref(r);
    }
    took = now_ms() - t0;
    CHECK_MSG(took < (fh_slow_mode() ? 60000 : 1500), "300 cached requests took %.0f ms", took);
    /* A cookie set now keys the next requests: the cache does not answer them. */
    set_cookies(c, "\"mine=2; Path=/\"");
    r = request_json(c, "{\"path\": \"cache/jarfull\", \"query\": {\"max_age\": 60}, \"useCache\": true}");
    CHECK_INT_EQ((int)jpath_num(r, "value.hits", -1), 2);
    json_decref(r);
    nl_client_free(c);
    CHECK_MSG(fh_sh("rm -rf '%s'", dir), "cannot remove %s", dir);
    free(jar);
    free(dir);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_cookies_are_kept_per_client_with_their_rules),
        NLT_TEST(test_cookies_off_sends_and_keeps_none),
        NLT_TEST(test_a_cookie_file_is_read_at_start_and_written_at_free),
        NLT_TEST(test_malformed_cookies_config_is_refused),
        NLT_TEST(test_a_cookie_file_that_is_a_fifo_or_a_device_is_refused_at_once),
        NLT_TEST(test_a_cookie_file_that_became_a_fifo_is_left_alone_and_the_failure_told),
        NLT_TEST(test_a_link_at_the_cookie_file_is_replaced_and_its_target_untouched),
        NLT_TEST(test_a_saved_cookie_file_is_private_to_its_owner),
        NLT_TEST(test_a_second_client_saving_the_same_cookie_file_is_refused),
        NLT_TEST(test_a_cookie_file_that_cannot_be_saved_is_refused_at_creation_or_told_at_free),
        NLT_TEST(test_session_cookies_are_neither_saved_nor_restored_unless_kept),
        NLT_TEST(test_a_server_flooding_the_jar_leaves_it_the_newest_180_cookies_of_its_domain),
        NLT_TEST(test_a_cookie_file_of_many_cookies_loads_at_once_within_the_limits),
        NLT_TEST(test_cached_requests_beside_a_full_jar_do_not_list_it_each_time),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
