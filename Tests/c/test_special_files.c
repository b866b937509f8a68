/*
 * test_special_files.c — uploadFrom and downloadTo with paths that are not plain
 * regular files (FIFOs, character devices, /proc files, symbolic links, folders), the
 * mode and owner of a downloaded file, and the download size limit, against the
 * loopback test server (run through Tests/server/with_server.py).
 *
 * Runs as a normal user and as root. As root, a download to a character device is
 * first tried on a private device node (mknod), so a library that would replace the
 * node never gets to replace /dev/null itself.
 *
 * Server endpoints used: /echo, /sink, /json, /bytes/<n>, /stream-bytes/<n>, /status/<code>.
 */
#define _GNU_SOURCE
#define NLT_TEST_TIMEOUT 180
#include "harness.h"
#include "async_one.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

/* ---- helpers ------------------------------------------------------------------------ */

static int slow_mode(void)
{
    const char *s = getenv("NETLAYER_TEST_SLOW");
    return s != NULL && *s != '\0';
}

/* How long a request answered at once may take: longer under valgrind or a sanitizer. */
static double quick(void)
{
    return slow_mode() ? 3.0 : 1.0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1.0e9;
}

/* A fresh temporary directory (caller removes it with remove_dir). */
static char *make_temp_dir(void)
{
    const char *t = getenv("TMPDIR");
    char *tmpl = nlt_format("%s/netlayer-special-XXXXXX", (t && *t) ? t : "/tmp");
    REQUIRE(tmpl != NULL);
    REQUIRE_MSG(mkdtemp(tmpl) != NULL, "mkdtemp: %s", strerror(errno));
    return tmpl;
}

/* The number of entries of `dir` (no "." and ".."); -1 when it cannot be read. */
static int dir_count(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* Removes every entry of `dir` (flat: files, links, FIFOs, nodes, empty folders) and `dir`. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            char *p;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            p = nlt_format("%s/%s", dir, e->d_name);
            if (p && unlink(p) != 0)
                rmdir(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    REQUIRE_MSG(f != NULL, "cannot create %s: %s", path, strerror(errno));
    fputs(text, f);
    REQUIRE(fclose(f) == 0);
}

/* The whole (small) file as a string; caller frees. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = (char *)calloc(1, 1 << 20);
    size_t n;
    if (f == NULL || buf == NULL) {
        if (f)
            fclose(f);
        free(buf);
        return NULL;
    }
    n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static mode_t file_type(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

/* async_one_destroy after waiting for the callback: a request that did not end in
 * time still calls back later. */
static void async_one_end(async_one *a)
{
    REQUIRE(async_one_wait(a, 60.0));
    async_one_destroy(a);
}

static uint64_t start_async(nl_client *c, async_one *a, const char *fmt, const char *path)
{
    char *doc = nlt_format(fmt, path);
    uint64_t id;
    REQUIRE(doc != NULL);
    async_one_init(a);
    id = nl_request_async(c, doc, async_one_cb, a);
    free(doc);
    REQUIRE(id != 0);
    return id;
}

/* How long another request of client `c` takes (async, on the client's loop), in
 * seconds; at most `limit` (then a check fails). */
static double other_request_seconds(nl_client *c, double limit)
{
    async_one other;
    double t0 = mono_s(), dt;
    uint64_t id;
    async_one_init(&other);
    id = nl_request_async(c, "{\"path\": \"json\"}", async_one_cb, &other);
    REQUIRE(id != 0);
    CHECK_MSG(async_one_wait(&other, limit), "another request of the client did not finish within %.1f s", limit);
    dt = mono_s() - t0;
    if (!async_one_done(&other)) {
        /* a stalled loop: its callback still comes, once the loop runs again */
        nl_cancel(c, id);
        REQUIRE(async_one_wait(&other, 60.0));
    }
    if (other.result != NULL)
        CHECK_OK(other.result);
    async_one_end(&other);
    return dt;
}

/* A watchdog for a library that blocks on a FIFO with no writer: from `seconds` on
 * it keeps opening the FIFO for writing and closing it, which ends such waits, so the
 * test fails by its checks instead of hanging. */
typedef struct fifo_rescue {
    const char *path;
    double at;
    int stop; /* __atomic */
    pthread_t thread;
} fifo_rescue;

static void *fifo_rescue_main(void *p)
{
    fifo_rescue *r = (fifo_rescue *)p;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) && mono_s() < r->at)
        sleep_ms(10);
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        int fd = open(r->path, O_WRONLY | O_NONBLOCK);
        if (fd >= 0)
            close(fd);
        sleep_ms(10);
    }
    return NULL;
}

static void fifo_rescue_start(fifo_rescue *r, const char *path, double seconds)
{
    r->path = path;
    r->at = mono_s() + seconds;
    __atomic_store_n(&r->stop, 0, __ATOMIC_RELEASE);
    REQUIRE(pthread_create(&r->thread, NULL, fifo_rescue_main, r) == 0);
}

static void fifo_rescue_stop(fifo_rescue *r)
{
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
    pthread_join(r->thread, NULL);
}

/* Reads a FIFO (opened for reading before the download starts) until its writer
 * closes it: counts the bytes and whether byte i is i % 256. */
typedef struct fifo_reader {
    int fd;
    long long bytes;
    long long mismatch_at; /* -1 when every byte matched */
    long long stop_after; /* closes the FIFO after this many bytes; 0 never */
    long initial_delay_ms;
    double give_up_s;
    pthread_t thread;
} fifo_reader;

static void *fifo_reader_main(void *p)
{
    fifo_reader *r = (fifo_reader *)p;
    unsigned char buf[65536];
    double end = mono_s() + r->give_up_s;
    int seen_writer = 0;
    sleep_ms(r->initial_delay_ms);
    while (mono_s() < end) {
        struct pollfd pfd = { r->fd, POLLIN, 0 };
        ssize_t n;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        n = read(r->fd, buf, sizeof buf);
        if (n > 0) {
            ssize_t i;
            seen_writer = 1;
            for (i = 0; i < n; i++)
                if (r->mismatch_at < 0 && buf[i] != (unsigned char)((r->bytes + i) % 256))
                    r->mismatch_at = r->bytes + i;
            r->bytes += n;
            if (r->stop_after > 0 && r->bytes >= r->stop_after)
                break;
        } else if (n == 0 && (seen_writer || (pfd.revents & POLLHUP))) {
            break; /* the writer came and closed it */
        }
    }
    close(r->fd);
    r->fd = -1;
    return NULL;
}

/* stop_after: bytes after which the reader leaves (0: read to the end). Set before the
 * thread starts, which reads it. */
static void fifo_reader_start(fifo_reader *r, const char *path, long initial_delay_ms, long stop_after)
{
    r->fd = open(path, O_RDONLY | O_NONBLOCK);
    REQUIRE_MSG(r->fd >= 0, "open %s: %s", path, strerror(errno));
    r->bytes = 0;
    r->mismatch_at = -1;
    r->initial_delay_ms = initial_delay_ms;
    r->stop_after = stop_after;
    r->give_up_s = 20.0;
    REQUIRE(pthread_create(&r->thread, NULL, fifo_reader_main, r) == 0);
}

static void fifo_reader_join(fifo_reader *r)
{
    pthread_join(r->thread, NULL);
}

/* ---- uploadFrom ----------------------------------------------------------------------- */

/* A FIFO no one writes to yet: the upload waits for a writer without holding up the
 * client's other requests, then sends what the writer wrote, chunked. */
static void test_fifo_upload_waits_for_a_writer_without_stalling_the_client(void)
{
    char *dir = make_temp_dir();
    char *fifo = nlt_format("%s/in.fifo", dir);
    nl_client *c = client_for(NULL);
    async_one up;
    fifo_rescue rescue;
    json_t *r;
    double dt;
    int w;
    REQUIRE(mkfifo(fifo, 0600) == 0);
    fifo_rescue_start(&rescue, fifo, 6.0);
    start_async(c, &up, "{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"%s\", \"timeout\": 30}", fifo);
    sleep_ms(200); /* the upload has started and waits */

    dt = other_request_seconds(c, 3.0 * quick());
    CHECK_MSG(dt < quick(), "another request of the same client took %.2f s while the FIFO had no writer", dt);
    r = request_json(c, "{\"path\": \"json\", \"timeout\": 3}");
    CHECK_OK(r);
    json_decref(r);
    CHECK_MSG(!async_one_done(&up), "the upload ended before any writer appeared");

    /* a writer appears, writes in two pieces and closes */
    w = open(fifo, O_WRONLY | O_NONBLOCK);
    CHECK_MSG(w >= 0, "the library does not hold the FIFO open for reading: %s", strerror(errno));
    if (w >= 0) {
        CHECK(write(w, "first line\n", 11) == 11);
        sleep_ms(150);
        CHECK(write(w, "second line", 11) == 11);
        close(w);
    }
    CHECK(async_one_wait(&up, 10.0));
    CHECK_OK(up.result);
    CHECK_STR_EQ(jpath_str(up.result, "value.body"), "first line\nsecond line");
    CHECK_STR_EQ(jpath_str(up.result, "value.headers.transfer-encoding"), "chunked");
    fifo_rescue_stop(&rescue);
    async_one_end(&up);
    nl_client_free(c);
    remove_dir(dir);
    free(fifo);
    free(dir);
}

typedef struct blocking_call {
    nl_client *c;
    const char *doc;
    json_t *result;
    double seconds;
    pthread_t thread;
} blocking_call;

static void *blocking_call_main(void *p)
{
    blocking_call *b = (blocking_call *)p;
    double t0 = mono_s();
    b->result = request_doc(b->c, b->doc);
    b->seconds = mono_s() - t0;
    return NULL;
}

/* A FIFO that never gets a writer: a cancel, the timeout and nl_client_free each end
 * the upload promptly, on the loop and on a blocking call alike. */
static void test_fifo_upload_without_writer_ends_on_cancel_timeout_and_free(void)
{
    char *dir = make_temp_dir();
    char *fifo = nlt_format("%s/never.fifo", dir);
    char *doc = nlt_format("{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"%s\"}", fifo);
    char *timed = nlt_format("{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"%s\", \"timeout\": 1}", fifo);
    double limit = slow_mode() ? 6.0 : 2.5, t0, dt;
    nl_client *c = client_for(NULL);
    async_one a;
    fifo_rescue rescue;
    blocking_call b;
    json_t *r;
    uint64_t id;
    REQUIRE(mkfifo(fifo, 0600) == 0);
    fifo_rescue_start(&rescue, fifo, 20.0);

    /* nl_cancel */
    id = start_async(c, &a, "{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"%s\"}", fifo);
    sleep_ms(100);
    t0 = mono_s();
    CHECK_INT_EQ(nl_cancel(c, id), 1);
    CHECK_MSG(async_one_wait(&a, limit), "the cancelled upload did not end within %.1f s", limit);
    CHECK_KIND(a.result, "cancelled");
    nlt_note("cancel took %.3f s", mono_s() - t0);
    async_one_end(&a);

    /* the timeout, on the loop and on a blocking call */
    t0 = mono_s();
    start_async(c, &a, "{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"%s\", \"timeout\": 1}", fifo);
    CHECK_MSG(async_one_wait(&a, 1.0 + limit), "the upload with a 1 s timeout did not end");
    CHECK_KIND(a.result, "timeout");
    async_one_end(&a);
    t0 = mono_s();
    r = request_doc(c, timed);
    dt = mono_s() - t0;
    CHECK_KIND(r, "timeout");
    CHECK_MSG(dt < 1.0 + limit, "the blocking upload with a 1 s timeout took %.2f s", dt);
    json_decref(r);

    /* nl_client_free with an async upload and a blocking one waiting */
    start_async(c, &a, "{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"%s\"}", fifo);
    b.c = c;
    b.doc = doc;
    b.result = NULL;
    REQUIRE(pthread_create(&b.thread, NULL, blocking_call_main, &b) == 0);
    sleep_ms(300);
    t0 = mono_s();
    nl_client_free(c);
    dt = mono_s() - t0;
    CHECK_MSG(dt < limit, "nl_client_free took %.2f s while uploads waited for a FIFO writer", dt);
    pthread_join(b.thread, NULL);
    CHECK(async_one_wait(&a, 1.0));
    CHECK_KIND(a.result, "cancelled");
    CHECK_KIND(b.result, "cancelled");
    json_decref(b.result);
    async_one_end(&a);

    fifo_rescue_stop(&rescue);
    remove_dir(dir);
    free(timed);
    free(doc);
    free(fifo);
    free(dir);
}

/* A blocking call uploads what a writer that comes later writes. */
static void test_fifo_upload_on_a_blocking_call_sends_what_the_writer_wrote(void)
{
    char *dir = make_temp_dir();
    char *fifo = nlt_format("%s/later.fifo", dir);
    char *doc = nlt_format("{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"%s\", \"timeout\": 20}", fifo);
    nl_client *c = client_for(NULL);
    blocking_call b;
    fifo_rescue rescue;
    int w = -1, i;
    REQUIRE(mkfifo(fifo, 0600) == 0);
    fifo_rescue_start(&rescue, fifo, 6.0);
    b.c = c;
    b.doc = doc;
    b.result = NULL;
    REQUIRE(pthread_create(&b.thread, NULL, blocking_call_main, &b) == 0);
    for (i = 0; i < 300 && w < 0; i++) {
        sleep_ms(10);
        w = open(fifo, O_WRONLY | O_NONBLOCK);
    }
    CHECK_MSG(w >= 0, "the blocking call never opened the FIFO");
    if (w >= 0) {
        sleep_ms(200);
        CHECK(write(w, "late data", 9) == 9);
        close(w);
    }
    pthread_join(b.thread, NULL);
    CHECK_OK(b.result);
    CHECK_STR_EQ(jpath_str(b.result, "value.body"), "late data");
    json_decref(b.result);
    fifo_rescue_stop(&rescue);
    nl_client_free(c);
    remove_dir(dir);
    free(doc);
    free(fifo);
    free(dir);
}

/* Stops an upload from the PROGRESS hook once `done` passes a limit. */
static void cancel_after_a_megabyte(const char *event_json, nl_reply *reply, void *user_data)
{
    json_t *ev = nlt_parse(event_json, "progress event");
    (void)user_data;
    if (jpath_num(ev, "done", 0) >= 1048576.0)
        nl_reply_set(reply, "{\"cancel\": true}");
    json_decref(ev);
}

/* Character devices, /proc and /sys files are streamed as they read; an unreadable path is
 * kind io with the system's reason; an endless device ends with the timeout or a cancel. */
static void test_upload_from_devices_and_proc_files(void)
{
    char *dir = make_temp_dir();
    nl_client *c = client_for(NULL);
    async_one a;
    json_t *r;
    const char *body;
    double t0, dt;

    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"/dev/null\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.bodyLength", -1), 0);
    CHECK_STR_EQ(jpath_str(r, "value.headers.transfer-encoding"), "chunked");
    json_decref(r);

    /* a /proc file's size reads as 0, its content is not empty (blocking and async) */
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"/proc/self/status\"}");
    CHECK_OK(r);
    body = jpath_str(r, "value.body");
    CHECK_MSG(body && strncmp(body, "Name:", 5) == 0 && strstr(body, "\nPid:") != NULL,
              "the body is not /proc/self/status: '%.60s'", body ? body : "(null)");
    CHECK_STR_EQ(jpath_str(r, "value.headers.transfer-encoding"), "chunked");
    json_decref(r);
    start_async(c, &a, "{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"%s\"}", "/proc/self/status");
    CHECK(async_one_wait(&a, 10.0));
    CHECK_OK(a.result);
    body = jpath_str(a.result, "value.body");
    CHECK_MSG(body && strstr(body, "\nPid:") != NULL, "async: not /proc/self/status: '%.60s'", body ? body : "(null)");
    async_one_end(&a);

    /* a /sys file's size reads as a page (4096), its content is a few bytes */
    if (access("/sys/devices/system/cpu/online", R_OK) == 0) {
        char expected[64] = "";
        FILE *f = fopen("/sys/devices/system/cpu/online", "r");
        size_t n = f ? fread(expected, 1, sizeof expected - 1, f) : 0;
        if (f) fclose(f);
        expected[n] = '\0';
        r = request_json(c, "{\"path\": \"echo\", \"method\": \"PUT\", \"uploadFrom\": \"/sys/devices/system/cpu/online\"}");
        CHECK_OK(r);
        CHECK_STR_EQ(jpath_str(r, "value.body"), expected);
        CHECK_STR_EQ(jpath_str(r, "value.headers.transfer-encoding"), "chunked");
        json_decref(r);
    } else {
        nlt_note("no /sys/devices/system/cpu/online here: the /sys upload is not tried");
    }

    /* unreadable: the real reason */
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"/proc/self/mem\"}");
    CHECK_KIND(r, "io");
    CHECK_MSG(nlt_stristr(error_message(r), "Input/output error") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"%s\"}", dir);
    CHECK_KIND(r, "io");
    CHECK_MSG(nlt_stristr(error_message(r), "Is a directory") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"echo\", \"method\": \"POST\", \"uploadFrom\": \"%s/missing\"}", dir);
    CHECK_KIND(r, "io");
    CHECK_MSG(nlt_stristr(error_message(r), "No such file or directory") != NULL, "message: %s", error_message(r));
    json_decref(r);

    /* /dev/zero never ends: the timeout ends it ... */
    t0 = mono_s();
    r = request_json(c, "{\"path\": \"sink\", \"method\": \"PUT\", \"uploadFrom\": \"/dev/zero\", \"timeout\": 1}");
    dt = mono_s() - t0;
    CHECK_KIND(r, "timeout");
    CHECK_MSG(dt < (slow_mode() ? 8.0 : 4.0), "a /dev/zero upload with a 1 s timeout took %.2f s", dt);
    json_decref(r);
    /* ... or a cancel from the PROGRESS hook */
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_PROGRESS, cancel_after_a_megabyte, NULL), 0);
    r = request_json(c, "{\"path\": \"sink\", \"method\": \"PUT\", \"uploadFrom\": \"/dev/zero\", \"progress\": true}");
    CHECK_KIND(r, "cancelled");
    json_decref(r);

    nl_client_free(c);
    remove_dir(dir);
    free(dir);
}

/* ---- downloadTo ----------------------------------------------------------------------- */

/* Downloads to the character device `path` and checks it is still that device. */
static void check_download_through_device(nl_client *c, const char *path)
{
    struct stat before, after;
    json_t *r;
    REQUIRE(stat(path, &before) == 0 && S_ISCHR(before.st_mode));
    r = request_json(c, "{\"path\": \"bytes/300000\", \"downloadTo\": \"%s\"}", path);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.bytes", -1), 300000);
    CHECK_STR_EQ(jpath_str(r, "value.path"), path);
    json_decref(r);
    r = request_json(c, "{\"path\": \"status/404\", \"downloadTo\": \"%s\"}", path);
    CHECK_KIND(r, "status");
    json_decref(r);
    CHECK_MSG(stat(path, &after) == 0 && S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev,
              "%s is no longer the character device it was", path);
}

static void test_download_to_a_character_device_writes_through_it(void)
{
    char *dir = make_temp_dir();
    char *node = nlt_format("%s/null-device", dir);
    nl_client *c = client_for(NULL);
    int private_ok = 1;
    if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        int failures_before = nlt_current_failures;
        check_download_through_device(c, node);
        private_ok = nlt_current_failures == failures_before;
        CHECK_INT_EQ(dir_count(dir), 1);
    } else {
        nlt_note("mknod: %s (not root): downloading to /dev/null only", strerror(errno));
    }
    if (private_ok)
        check_download_through_device(c, "/dev/null");
    else
        nlt_note("skipping /dev/null: the private device node was replaced");
    nl_client_free(c);
    remove_dir(dir);
    free(node);
    free(dir);
}

/* A FIFO is written through: with its reader there from the start (a body larger than
 * the pipe holds, read slowly, while the client answers other requests), and with a
 * reader that comes later. */
static void test_download_to_a_fifo_writes_through_it(void)
{
    long long n = slow_mode() ? 300000 : 3000000;
    char *dir = make_temp_dir();
    char *fifo = nlt_format("%s/out.fifo", dir);
    nl_client *c = client_for(NULL);
    fifo_reader reader;
    async_one a;
    char *doc;
    double dt;
    REQUIRE(mkfifo(fifo, 0600) == 0);

    /* the reader is there but reads only after half a second: the pipe fills up */
    fifo_reader_start(&reader, fifo, 500, 0);
    doc = nlt_format("{\"path\": \"stream-bytes/%lld\", \"downloadTo\": \"%%s\", \"timeout\": 30}", n);
    start_async(c, &a, doc, fifo);
    sleep_ms(100);
    dt = other_request_seconds(c, 3.0 * quick());
    CHECK_MSG(dt < quick(), "another request took %.2f s while the FIFO was full", dt);
    CHECK(async_one_wait(&a, 30.0));
    CHECK_OK(a.result);
    CHECK_INT_EQ(jpath_num(a.result, "value.bytes", -1), n);
    fifo_reader_join(&reader);
    CHECK_INT_EQ(reader.bytes, n);
    CHECK_INT_EQ(reader.mismatch_at, -1);
    CHECK_MSG(file_type(fifo) == S_IFIFO, "the FIFO was replaced");
    CHECK_INT_EQ(dir_count(dir), 1);
    async_one_end(&a);
    free(doc);

    /* paused and resumed by its caller (nl_pause) after the FIFO was once full and went
     * on: every byte, in order */
    {
        uint64_t id;
        fifo_reader_start(&reader, fifo, 500, 0);
        id = start_async(c, &a, "{\"path\": \"stream-bytes/3000000\", \"query\": {\"chunk\": 16384, \"delay_ms\": 5},"
                                " \"downloadTo\": \"%s\", \"timeout\": 15}", fifo);
        sleep_ms(800);
        CHECK_INT_EQ(nl_pause(c, id, 1), 1);
        sleep_ms(300);
        CHECK_INT_EQ(nl_pause(c, id, 0), 1);
        CHECK(async_one_wait(&a, 30.0));
        CHECK_OK(a.result);
        fifo_reader_join(&reader);
        CHECK_INT_EQ(reader.bytes, 3000000);
        CHECK_INT_EQ(reader.mismatch_at, -1);
        async_one_end(&a);
    }

    /* no reader yet: the download waits for one (and the client stays responsive) */
    start_async(c, &a, "{\"path\": \"bytes/100000\", \"downloadTo\": \"%s\", \"timeout\": 30}", fifo);
    sleep_ms(300);
    dt = other_request_seconds(c, 3.0 * quick());
    CHECK_MSG(dt < quick(), "another request took %.2f s while the FIFO had no reader", dt);
    CHECK_MSG(!async_one_done(&a), "the download ended before the FIFO had a reader");
    fifo_reader_start(&reader, fifo, 0, 0);
    CHECK(async_one_wait(&a, 10.0));
    CHECK_OK(a.result);
    fifo_reader_join(&reader);
    CHECK_INT_EQ(reader.bytes, 100000);
    CHECK_INT_EQ(reader.mismatch_at, -1);
    CHECK_MSG(file_type(fifo) == S_IFIFO, "the FIFO was replaced");
    async_one_end(&a);

    nl_client_free(c);
    remove_dir(dir);
    free(fifo);
    free(dir);
}

/* A download that times out while paused on a full FIFO leaves nothing behind in the
 * pooled handle: the next downloads of the client (to a file, then to memory) get
 * exactly their own bytes. */
static void test_download_paused_on_a_full_fifo_times_out_and_the_handle_is_clean(void)
{
    char *dir = make_temp_dir();
    char *fifo = nlt_format("%s/full.fifo", dir);
    char *dest = nlt_format("%s/after.bin", dir);
    nl_client *c = client_for(NULL);
    unsigned char *data = NULL;
    json_t *r;
    FILE *f;
    size_t len = 0, i;
    long long mismatch = -1;
    int idle_reader;
    REQUIRE(mkfifo(fifo, 0600) == 0);
    idle_reader = open(fifo, O_RDONLY | O_NONBLOCK); /* there, but never reads */
    REQUIRE(idle_reader >= 0);
    r = request_json(c, "{\"path\": \"stream-bytes/3000000\", \"downloadTo\": \"%s\", \"timeout\": 1}", fifo);
    CHECK_KIND(r, "timeout");
    json_decref(r);
    close(idle_reader);
    r = request_json(c, "{\"path\": \"bytes/300000\", \"downloadTo\": \"%s\"}", dest);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.bytes", -1), 300000);
    json_decref(r);
    f = fopen(dest, "rb");
    if (f != NULL) {
        data = (unsigned char *)malloc(400000);
        len = data ? fread(data, 1, 400000, f) : 0;
        fclose(f);
    }
    CHECK_INT_EQ(len, 300000);
    for (i = 0; data && i < len && mismatch < 0; i++)
        if (data[i] != (unsigned char)(i % 256))
            mismatch = (long long)i;
    CHECK_INT_EQ(mismatch, -1);
    free(data);
    r = request_json(c, "{\"path\": \"bytes/1000\", \"response\": {\"decoder\": \"base64\"}}");
    CHECK_OK(r);
    CHECK_INT_EQ(strlen(jpath_str(r, "value") ? jpath_str(r, "value") : ""), 1336);
    json_decref(r);
    nl_client_free(c);
    remove_dir(dir);
    free(dest);
    free(fifo);
    free(dir);
}

/* A reader that goes away: kind io (EPIPE), and SIGPIPE does not kill the process,
 * although its disposition is the default here. */
static void test_download_to_a_fifo_whose_reader_leaves_is_io(void)
{
    char *dir = make_temp_dir();
    char *fifo = nlt_format("%s/short.fifo", dir);
    nl_client *c = client_for(NULL);
    fifo_reader reader;
    json_t *r;
    REQUIRE(mkfifo(fifo, 0600) == 0);
    signal(SIGPIPE, SIG_DFL);
    fifo_reader_start(&reader, fifo, 0, 1000);
    r = request_json(c, "{\"path\": \"stream-bytes/20000000\", \"query\": {\"chunk\": 16384, \"delay_ms\": 1},"
                        " \"downloadTo\": \"%s\", \"timeout\": 30}", fifo);
    fifo_reader_join(&reader);
    CHECK_KIND(r, "io");
    CHECK_MSG(nlt_stristr(error_message(r), "Broken pipe") != NULL, "message: %s", error_message(r));
    json_decref(r);
    signal(SIGPIPE, SIG_IGN);
    CHECK_MSG(file_type(fifo) == S_IFIFO, "the FIFO was replaced");
    nl_client_free(c);
    remove_dir(dir);
    free(fifo);
    free(dir);
}

/* A new file gets 0666 & ~umask; an existing one keeps its mode and owner (and its
 * content when the download fails); a symbolic link stays a link to the file it names;
 * a folder is kind io. */
static void test_download_to_file_mode_owner_links_and_folders(void)
{
    char *dir = make_temp_dir();
    char *fresh = nlt_format("%s/fresh.bin", dir);
    char *open_file = nlt_format("%s/open.bin", dir);
    char *existing = nlt_format("%s/existing.bin", dir);
    char *target = nlt_format("%s/target.bin", dir);
    char *link = nlt_format("%s/link.bin", dir);
    char *sub = nlt_format("%s/folder", dir);
    nl_client *c = client_for(NULL);
    mode_t saved = umask(027);
    struct stat st;
    json_t *r;
    char *text;
    int is_root = geteuid() == 0;

    r = request_json(c, "{\"path\": \"bytes/1000\", \"downloadTo\": \"%s\"}", fresh);
    CHECK_OK(r);
    json_decref(r);
    CHECK(stat(fresh, &st) == 0);
    CHECK_MSG((st.st_mode & 07777) == 0640, "new file with umask 027 has mode %04o, expected 0640",
              (unsigned)(st.st_mode & 07777));
    umask(0);
    r = request_json(c, "{\"path\": \"bytes/1000\", \"downloadTo\": \"%s\"}", open_file);
    CHECK_OK(r);
    json_decref(r);
    CHECK(stat(open_file, &st) == 0);
    CHECK_MSG((st.st_mode & 07777) == 0666, "new file with umask 0 has mode %04o, expected 0666",
              (unsigned)(st.st_mode & 07777));
    umask(027);

    write_file(existing, "old content");
    REQUIRE(chmod(existing, 0604) == 0);
    if (is_root)
        REQUIRE(chown(existing, 4321, 4322) == 0);
    r = request_json(c, "{\"path\": \"bytes/300\", \"downloadTo\": \"%s\"}", existing);
    CHECK_OK(r);
    json_decref(r);
    CHECK(stat(existing, &st) == 0);
    CHECK_INT_EQ(st.st_size, 300);
    CHECK_MSG((st.st_mode & 07777) == 0604, "existing file now has mode %04o, expected 0604",
              (unsigned)(st.st_mode & 07777));
    if (is_root) {
        CHECK_INT_EQ(st.st_uid, 4321);
        CHECK_INT_EQ(st.st_gid, 4322);
    } else {
        CHECK_INT_EQ(st.st_uid, geteuid());
    }
    /* a failed download leaves the existing file as it was */
    write_file(existing, "kept");
    r = request_json(c, "{\"path\": \"status/500\", \"downloadTo\": \"%s\"}", existing);
    CHECK_KIND(r, "status");
    json_decref(r);
    text = read_text(existing);
    CHECK_STR_EQ(text, "kept");
    free(text);

    /* a symbolic link keeps naming its file, which gets the body */
    write_file(target, "old");
    REQUIRE(symlink("target.bin", link) == 0);
    r = request_json(c, "{\"path\": \"bytes/200\", \"downloadTo\": \"%s\"}", link);
    CHECK_OK(r);
    json_decref(r);
    CHECK_MSG(file_type(link) == S_IFLNK, "the symbolic link was replaced");
    CHECK(stat(target, &st) == 0 && st.st_size == 200);

    /* a folder: io, with the reason, and nothing left behind */
    REQUIRE(mkdir(sub, 0700) == 0);
    r = request_json(c, "{\"path\": \"bytes/100\", \"downloadTo\": \"%s\"}", sub);
    CHECK_KIND(r, "io");
    CHECK_MSG(nlt_stristr(error_message(r), "Is a directory") != NULL, "message: %s", error_message(r));
    json_decref(r);
    CHECK_INT_EQ(dir_count(dir), 6);

    umask(saved);
    nl_client_free(c);
    remove_dir(dir);
    free(fresh);
    free(open_file);
    free(existing);
    free(target);
    free(link);
    free(sub);
    free(dir);
}

/* maxResponseBytes bounds bodies held in memory, maxDownloadBytes bodies written to a
 * file (unlimited by default); an endpoint may set either. */
static void test_download_limit_is_separate_from_the_memory_limit(void)
{
    char *dir = make_temp_dir();
    char *dest = nlt_format("%s/limited.bin", dir);
    nl_client *c = client_for("\"maxResponseBytes\": 1000");
    json_t *r;
    char *err = NULL;
    nl_client *bad;

    r = request_json(c, "{\"path\": \"bytes/300000\", \"downloadTo\": \"%s\"}", dest);
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.bytes", -1), 300000);
    json_decref(r);
    r = request_json(c, "{\"path\": \"bytes/300000\", \"response\": {\"decoder\": \"none\"}}");
    CHECK_KIND(r, "too_large");
    CHECK_MSG(nlt_stristr(error_message(r), "maxResponseBytes") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"bytes/300000\", \"maxResponseBytes\": 1000000, \"response\": {\"decoder\": \"none\"}}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
    unlink(dest);

    c = client_for("\"maxDownloadBytes\": 100000");
    r = request_json(c, "{\"path\": \"bytes/300000\", \"downloadTo\": \"%s\"}", dest);
    CHECK_KIND(r, "too_large");
    CHECK_MSG(nlt_stristr(error_message(r), "maxDownloadBytes") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"stream-bytes/300000\", \"query\": {\"chunk\": 16384}, \"downloadTo\": \"%s\"}", dest);
    CHECK_KIND(r, "too_large");
    json_decref(r);
    CHECK_INT_EQ(dir_count(dir), 0);
    r = request_json(c, "{\"path\": \"bytes/300000\", \"downloadTo\": \"%s\", \"maxDownloadBytes\": 300000}", dest);
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"bytes/300000\", \"response\": {\"decoder\": \"none\"}}");
    CHECK_OK(r);
    json_decref(r);
    r = request_json(c, "{\"path\": \"bytes/300000\", \"downloadTo\": \"%s\", \"maxDownloadBytes\": \"big\"}", dest);
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(nlt_stristr(error_message(r), "maxDownloadBytes") != NULL, "message: %s", error_message(r));
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\", \"maxResponseBytes\": -5}");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(nlt_stristr(error_message(r), "maxResponseBytes") != NULL, "message: %s", error_message(r));
    json_decref(r);
    nl_client_free(c);

    bad = nl_client_new("{\"maxDownloadBytes\": -1}", &err);
    CHECK(bad == NULL);
    CHECK_MSG(err != NULL && strstr(err, "maxDownloadBytes") != NULL, "error: %s", err ? err : "(none)");
    nl_free(err);
    nl_client_free(bad);

    remove_dir(dir);
    free(dest);
    free(dir);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_fifo_upload_waits_for_a_writer_without_stalling_the_client),
        NLT_TEST(test_fifo_upload_without_writer_ends_on_cancel_timeout_and_free),
        NLT_TEST(test_fifo_upload_on_a_blocking_call_sends_what_the_writer_wrote),
        NLT_TEST(test_upload_from_devices_and_proc_files),
        NLT_TEST(test_download_to_a_character_device_writes_through_it),
        NLT_TEST(test_download_to_a_fifo_writes_through_it),
        NLT_TEST(test_download_to_a_fifo_whose_reader_leaves_is_io),
        NLT_TEST(test_download_paused_on_a_full_fifo_times_out_and_the_handle_is_clean),
        NLT_TEST(test_download_to_file_mode_owner_links_and_folders),
        NLT_TEST(test_download_limit_is_separate_from_the_memory_limit),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
