/*
 * test_process.c — what the process around a client does: signals that
 * interrupt blocking calls (nl_thread_set_interrupt_fd) and fork() (the child's
 * transport, its cookie jar and the parent's cookie file).
 * Endpoints: /delay/<ms>, /echo, /json, /set-cookie.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "fault_helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>

/* ---- interrupting blocking calls ----------------------------------------------------- */

static int pipe_fds[2] = {-1, -1};

static void open_pipe(void)
{
    REQUIRE(pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) == 0);
}

static void close_pipe(void)
{
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
}

/* The self-pipe trick: what Python's signal.set_wakeup_fd() does in C. */
static void on_signal(int sig)
{
    unsigned char byte = (unsigned char)sig;
    int saved = errno;
    ssize_t n = write(pipe_fds[1], &byte, 1);
    (void)n;
    errno = saved;
}

typedef struct delayed_signal {
    pthread_t target;
    long after_ms;
    int use_signal; /* 1: pthread_kill(target, SIGUSR1); 0: write the pipe directly */
} delayed_signal;

static void *send_later(void *arg)
{
    delayed_signal *d = (delayed_signal *)arg;
    sleep_ms(d->after_ms);
    if (d->use_signal) {
        pthread_kill(d->target, SIGUSR1);
    } else {
        unsigned char byte = 1;
        ssize_t n = write(pipe_fds[1], &byte, 1);
        (void)n;
    }
    return NULL;
}

static void check_interrupted(json_t *r, double started, const char *what)
{
    double took = now_ms() - started;
    CHECK_KIND(r, "cancelled");
    CHECK_MSG(nlt_stristr(error_message(r), "interrupted") != NULL, "%s: message '%s'", what, error_message(r));
    CHECK_MSG(took < 1500, "%s: interrupted after %.0f ms (the signal came at 200 ms)", what, took);
}

static void test_setting_the_descriptor_returns_the_previous_one(void)
{
    CHECK_INT_EQ(nl_thread_set_interrupt_fd(-1), -1);
    CHECK_INT_EQ(nl_thread_set_interrupt_fd(7), -1);
    CHECK_INT_EQ(nl_thread_set_interrupt_fd(9), 7);
    CHECK_INT_EQ(nl_thread_set_interrupt_fd(-1), 9);
    CHECK_INT_EQ(nl_thread_set_interrupt_fd(-1), -1);
}

static void test_a_signal_ends_a_blocking_request_at_once(void)
{
    struct sigaction sa, old;
    delayed_signal d = {pthread_self(), 200, 1};
    pthread_t t;
    nl_client *c = client_for("\"timeout\": 30");
    json_t *r;
    double started;
    open_pipe();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, &old);
    nl_thread_set_interrupt_fd(pipe_fds[0]);
    started = now_ms();
    pthread_create(&t, NULL, send_later, &d);
    r = request_json(c, "{\"path\": \"delay/5000\"}");
    check_interrupted(r, started, "nl_request");
    pthread_join(t, NULL);
    json_decref(r);
    /* the byte was drained: the next call runs to its end */
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_thread_set_interrupt_fd(-1);
    sigaction(SIGUSR1, &old, NULL);
    close_pipe();
    nl_client_free(c);
}

static int g_log_events_seen;
static pthread_mutex_t g_log_events_lock = PTHREAD_MUTEX_INITIALIZER;

static void count_log_event(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)reply;
    (void)user_data;
    sleep_ms(20);  /* a hook that takes a moment: the call must still wait for it */
    if (strstr(event_json, "\"event\":\"error\"") != NULL) {
        pthread_mutex_lock(&g_log_events_lock);
        g_log_events_seen++;
        pthread_mutex_unlock(&g_log_events_lock);
    }
}

static void test_an_interrupted_request_returns_after_its_log_events(void)
{
    delayed_signal d = {pthread_self(), 200, 0};
    pthread_t t;
    nl_client *c = client_for("\"timeout\": 30, \"log\": {\"level\": \"info\"}");
    json_t *r;
    double started;
    int seen;
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_LOG, count_log_event, NULL), 0);
    open_pipe();
    nl_thread_set_interrupt_fd(pipe_fds[0]);
    started = now_ms();
    pthread_create(&t, NULL, send_later, &d);
    r = request_json(c, "{\"path\": \"delay/5000\"}");
    pthread_mutex_lock(&g_log_events_lock);
    seen = g_log_events_seen;
    pthread_mutex_unlock(&g_log_events_lock);
    check_interrupted(r, started, "nl_request");
    CHECK_MSG(seen == 1, "%d error events when the call returned", seen);
    pthread_join(t, NULL);
    json_decref(r);
    nl_thread_set_interrupt_fd(-1);
    close_pipe();
    nl_client_free(c);
}

static void test_connections_are_closed_on_exec(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"json\"}");
    int open = 0;
    CHECK_OK(r);
    json_decref(r);
    /* The connection stays in the pool: a program this process runs must not get it. */
    CHECK_INT_EQ(nlt_tcp_sockets_kept_across_exec(&open), 0);
    CHECK_MSG(open >= 1, "%d TCP sockets open after a request", open);
    nl_client_free(c);
}

static void test_a_byte_from_before_the_call_does_not_interrupt_it(void)
{
    nl_client *c = client_for(NULL);
    unsigned char byte = 2;
    json_t *r;
    open_pipe();
    CHECK_INT_EQ(write(pipe_fds[1], &byte, 1), 1);
    nl_thread_set_interrupt_fd(pipe_fds[0]);
    r = request_json(c, "{\"path\": \"delay/50\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_thread_set_interrupt_fd(-1);
    close_pipe();
    nl_client_free(c);
}

static void test_batches_calls_and_hooked_requests_are_interrupted_too(void)
{
    nl_client *c = client_for("\"endpoints\": {\"slow\": {\"path\": \"delay/5000\"}}");
    delayed_signal d = {pthread_self(), 200, 0};
    pthread_t t;
    double started;
    char *text;
    json_t *r;
    open_pipe();
    nl_thread_set_interrupt_fd(pipe_fds[0]);

    started = now_ms();
    pthread_create(&t, NULL, send_later, &d);
    text = nl_request_batch(c, "[{\"path\": \"delay/5000\"}, {\"path\": \"delay/5000\"}, {\"path\": \"json\"}]");
    pthread_join(t, NULL);
    r = nlt_parse(text, "batch");
    nl_free(text);
    CHECK(json_array_size(r) == 3);
    CHECK_KIND(json_array_get(r, 0), "cancelled");
    CHECK_KIND(json_array_get(r, 1), "cancelled");
    CHECK_MSG(nlt_stristr(error_message(json_array_get(r, 1)), "interrupted") != NULL,
              "batch element: message '%s'", error_message(json_array_get(r, 1)));
    CHECK_OK(json_array_get(r, 2));
    CHECK_MSG(now_ms() - started < 1500, "batch interrupted after %.0f ms", now_ms() - started);
    json_decref(r);

    started = now_ms();
    pthread_create(&t, NULL, send_later, &d);
    text = nl_call(c, "slow", NULL);
    pthread_join(t, NULL);
    r = nlt_parse(text, "call");
    nl_free(text);
    check_interrupted(r, started, "nl_call");
    json_decref(r);

    started = now_ms();
    pthread_create(&t, NULL, send_later, &d);
    r = nlt_parse(nl_request_borrowed(c, "{\"path\": \"delay/5000\"}"), "borrowed");
    pthread_join(t, NULL);
    check_interrupted(r, started, "nl_request_borrowed");
    json_decref(r);
    nl_thread_set_interrupt_fd(-1);
    close_pipe();
    nl_client_free(c);
}

static void noop_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json; (void)reply; (void)user_data;
}

static void test_a_request_that_waits_on_the_loop_is_interrupted(void)
{
    nl_client *c = client_for(NULL);
    delayed_signal d = {pthread_self(), 200, 0};
    pthread_t t;
    double started;
    json_t *r;
    open_pipe();
    nl_thread_set_interrupt_fd(pipe_fds[0]);
    CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, noop_hook, NULL), 0);
    started = now_ms();
    pthread_create(&t, NULL, send_later, &d);
    r = request_json(c, "{\"path\": \"delay/5000\"}");
    pthread_join(t, NULL);
    CHECK_KIND(r, "cancelled");
    CHECK_MSG(now_ms() - started < 1500, "interrupted after %.0f ms", now_ms() - started);
    json_decref(r);
    r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    json_decref(r);
    nl_thread_set_interrupt_fd(-1);
    close_pipe();
    nl_client_free(c);
}

static void test_other_threads_are_not_interrupted(void)
{
    /* the descriptor belongs to the thread that set it: a byte on it does not touch
       a blocking request of a thread without one */
    nl_client *c = client_for(NULL);
    delayed_signal d = {pthread_self(), 100, 0};
    pthread_t t;
    json_t *r;
    open_pipe();
    pthread_create(&t, NULL, send_later, &d);
    r = request_json(c, "{\"path\": \"delay/400\"}");
    pthread_join(t, NULL);
    CHECK_OK(r);
    json_decref(r);
    close_pipe();
    nl_client_free(c);
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_a_stale_descriptor_neither_interrupts_nor_spins(void)
{
    /* A caller that closed its pipe (or its write end) without removing the setting:
       requests run to their end, without burning CPU on a descriptor that is ready
       forever, with and without a hook (the two ways a blocking call waits). */
    nl_client *c = client_for(NULL);
    int round;
    for (round = 0; round < 4; round++) {
        double started, cpu;
        json_t *r;
        open_pipe();
        if (round % 2 == 0) {
            close(pipe_fds[1]);   /* end of file: poll() reports the read end ready forever */
            pipe_fds[1] = -1;
        } else {
            close(pipe_fds[0]);   /* a closed descriptor */
            close(pipe_fds[1]);
        }
        nl_thread_set_interrupt_fd(pipe_fds[0]);
        CHECK_INT_EQ(nl_client_set_hook(c, NL_HOOK_ADAPT, round < 2 ? NULL : noop_hook, NULL), 0);
        started = now_ms();
        cpu = cpu_ms();
        r = request_json(c, "{\"path\": \"delay/300\"}");
        CHECK_OK(r);
        CHECK_MSG(cpu_ms() - cpu < 150, "round %d: %.0f ms of CPU while waiting %.0f ms", round,
                  cpu_ms() - cpu, now_ms() - started);
        json_decref(r);
        nl_thread_set_interrupt_fd(-1);
        if (round % 2 == 0)
            close(pipe_fds[0]);
        pipe_fds[0] = pipe_fds[1] = -1;
    }
    nl_client_free(c);
}

/* ---- fork() ------------------------------------------------------------------------- */

static long long connection_of(nl_client *c)
{
    json_t *r = request_json(c, "{\"path\": \"echo\"}");
    long long id = -1;
    CHECK_OK(r);
    id = (long long)jpath_num(r, "value.connection", -1);
    json_decref(r);
    return id;
}

typedef struct async_count {
    pthread_mutex_t m;
    int done, ok;
} async_count;

static void count_result(uint64_t id, const char *result_json, void *user_data)
{
    async_count *a = (async_count *)user_data;
    json_t *r = nlt_parse(result_json, "async result");
    (void)id;
    pthread_mutex_lock(&a->m);
    a->done++;
    a->ok += result_ok(r);
    pthread_mutex_unlock(&a->m);
    json_decref(r);
}

/* Waits until `n` results arrived, looking every 10 ms at most `tries` times. */
static void wait_for_count(async_count *a, int n, int tries)
{
    int i, done = 0;
    for (i = 0; i < tries && done < n; i++) {
        pthread_mutex_lock(&a->m);
        done = a->done;
        pthread_mutex_unlock(&a->m);
        if (done < n)
            sleep_ms(10);
    }
}

static void add_header_hook(const char *event_json, nl_reply *reply, void *user_data)
{
    (void)event_json; (void)user_data;
    nl_reply_set(reply, "{\"headers\": {\"X-Child\": \"yes\"}}");
}

/* In the child: every kind of call works, on connections of its own. Exit code 0
   on success, the number of the failed step otherwise. */
static int child_uses_client(nl_client *c, long long parent_connection)
{
    async_count a = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
    json_t *r;
    int i;
    long long mine = connection_of(c);
    if (mine < 0 || mine == parent_connection)
        return 1;
    if (connection_of(c) != mine)  /* keep-alive works in the child */
        return 2;
    for (i = 0; i < 4; i++)
        if (nl_request_async(c, "{\"path\": \"delay/20\"}", count_result, &a) == 0)
            return 3;
    wait_for_count(&a, 4, 400);
    if (a.done != 4 || a.ok != 4)
        return 4;
    if (nl_client_set_hook(c, NL_HOOK_ADAPT, add_header_hook, NULL) != 0)
        return 5;
    r = request_json(c, "{\"path\": \"echo\"}");
    if (!result_ok(r) || jpath_str(r, "value.headers.x-child") == NULL ||
        strcmp(jpath_str(r, "value.headers.x-child"), "yes") != 0) {
        nlt_dump("child hook result", r);
        json_decref(r);
        return 6;
    }
    json_decref(r);
    nl_client_free(c);
    return 0;
}

static int wait_child(pid_t pid)
{
    int status = 0;
    double deadline = now_ms() + 20000;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        sleep_ms(10);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void test_a_child_of_fork_gets_its_own_loop_and_connections(void)
{
    nl_client *c;
    long long parent_connection;
    pid_t pid;
    int code;
    SKIP_UNDER_TSAN();
    c = client_for(NULL);
    parent_connection = connection_of(c);
    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(child_uses_client(c, parent_connection));
    code = wait_child(pid);
    CHECK_MSG(code == 0, "the child failed at step %d (-1: hung, >100: killed by signal)", code);
    /* the parent's client and its kept-alive connection are untouched */
    CHECK(connection_of(c) == parent_connection);
    nl_client_free(c);
}

static void test_a_child_that_only_frees_the_client_returns(void)
{
    nl_client *c;
    async_count a = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
    pid_t pid;
    int code, i;
    SKIP_UNDER_TSAN();
    c = client_for(NULL);
    for (i = 0; i < 5; i++)
        CHECK(nl_request_async(c, "{\"path\": \"delay/300\"}", count_result, &a) != 0);
    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        nl_client_free(c);  /* the parent's requests are not the child's to wait for */
        _exit(a.done == 0 ? 0 : 1);
    }
    code = wait_child(pid);
    CHECK_MSG(code == 0, "child exit %d (-1: hung)", code);
    wait_for_count(&a, 5, 500);  /* the parent's five complete in the parent */
    nl_client_free(c);
    CHECK_INT_EQ(a.done, 5);
    CHECK_INT_EQ(a.ok, 5);
}

/* In the child: the parent's requests are not in flight (no callback of theirs comes
   here), before and after the child's own first request; the child's own are. Exit
   code 0, or the failed step. */
static int child_cancels(nl_client *c, const uint64_t *parent_ids)
{
    async_count mine = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
    uint64_t id;
    if (nl_cancel(c, parent_ids[0]) != 0 || nl_pause(c, parent_ids[1], 1) != 0)
        return 1;
    if ((id = nl_request_async(c, "{\"path\": \"delay/2000\"}", count_result, &mine)) == 0)
        return 2;
    if (nl_pause(c, id, 1) != 1 || nl_pause(c, id, 0) != 1)
        return 3;
    if (nl_cancel(c, parent_ids[2]) != 0 || nl_pause(c, parent_ids[3], 1) != 0)
        return 4;
    if (nl_cancel(c, id) != 1)
        return 5;
    wait_for_count(&mine, 1, 500);
    if (mine.done != 1 || mine.ok != 0)
        return 6;
    nl_client_free(c);
    return 0;
}

static void test_a_child_does_not_cancel_or_pause_the_parents_requests(void)
{
    nl_client *c;
    async_count a = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
    uint64_t ids[4];
    pid_t pid;
    int code, i;
    SKIP_UNDER_TSAN();
    c = client_for(NULL);
    for (i = 0; i < 4; i++)
        CHECK((ids[i] = nl_request_async(c, "{\"path\": \"delay/300\"}", count_result, &a)) != 0);
    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(child_cancels(c, ids));
    code = wait_child(pid);
    CHECK_MSG(code == 0, "the child failed at step %d (-1: hung, >100: killed by signal)", code);
    wait_for_count(&a, 4, 500);  /* the parent's four complete in the parent, not cancelled */
    nl_client_free(c);
    CHECK_INT_EQ(a.done, 4);
    CHECK_INT_EQ(a.ok, 4);
}

/* Whether the request's Cookie header holds the pair `pair` ("name=value"). */
static int sends_cookie(nl_client *c, const char *pair)
{
    json_t *r = request_json(c, "{\"path\": \"echo\"}");
    const char *h = jpath_str(r, "value.headers.cookie"), *p;
    size_t n = strlen(pair);
    int found = 0;
    for (p = h; p && !found && (p = strstr(p, pair)) != NULL; p += n)
        found = (p == h || p[-1] == ' ') && (p[n] == ';' || p[n] == '\0');
    json_decref(r);
    return found;
}

static int set_cookie(nl_client *c, const char *value)
{
    json_t *r = request_json(c, "{\"path\": \"set-cookie\", \"query\": {\"c\": \"%s\"}}", value);
    int ok = result_ok(r);
    json_decref(r);
    return ok;
}

/* The child's side: the parent's cookies are there, its own stay its own, its free
   writes nothing (the parent checks). Exit code 0, or a bit per failed step. */
static int child_uses_cookies(nl_client *c, int ready, int go)
{
    char byte = 0;
    int failed = 0;
    if (!sends_cookie(c, "lasting=1") || !sends_cookie(c, "session=1"))
        failed |= 1;
    if (!set_cookie(c, "child=1; Path=/; Max-Age=3600") || !sends_cookie(c, "child=1"))
        failed |= 2;
    if (write(ready, "r", 1) != 1 || read(go, &byte, 1) != 1)
        failed |= 4;
    nl_client_free(c);
    return failed;
}

static void test_a_child_of_fork_starts_with_the_parents_cookies_and_leaves_their_file_alone(void)
{
    char dir[] = "/tmp/netlayer-forkjar-XXXXXX", *jar, *config, *before, *after, *error = NULL, byte = 0;
    int ready[2], go[2], code;
    nl_client *c, *again;
    struct pollfd p;
    pid_t pid;
    SKIP_UNDER_TSAN();
    REQUIRE(mkdtemp(dir) != NULL);
    jar = nlt_format("%s/jar.txt", dir);
    config = nlt_format("{\"baseURL\": \"%s\", \"timeout\": 10, \"cookies\": {\"file\": \"%s\"}}", base_url(), jar);
    c = nl_client_new(config, &error);
    REQUIRE_MSG(c != NULL, "%s", error);
    CHECK(set_cookie(c, "lasting=1; Path=/; Max-Age=3600") && set_cookie(c, "session=1; Path=/"));
    REQUIRE(pipe(ready) == 0 && pipe(go) == 0);
    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        _exit(child_uses_cookies(c, ready[1], go[0]));
    }
    close(ready[1]);
    close(go[0]);
    p.fd = ready[0];
    p.events = POLLIN;
    CHECK_MSG(poll(&p, 1, 20000) == 1 && read(ready[0], &byte, 1) == 1, "the child did not get ready");
    CHECK(!sends_cookie(c, "child=1"));  /* the child's jar is its own */
    nl_client_free(c);                   /* the parent writes its file, and gives its lock back ... */
    before = fh_read_file(jar);
    again = nl_client_new(config, &error);  /* ... which the child did not keep */
    CHECK_MSG(again != NULL, "a new client on the file while the child lives: %s", error);
    nl_free(error);
    CHECK(write(go[1], "g", 1) == 1);  /* the child frees its client now */
    code = wait_child(pid);
    CHECK_MSG(code == 0, "the child failed: %d (1: no parent's cookies, 2: no own cookie, 4: no handshake;"
                         " -1: hung, >100: killed by signal)", code);
    after = fh_read_file(jar);
    CHECK_MSG(before != NULL && strstr(before, "\tlasting\t1") != NULL && strstr(before, "child") == NULL, "%s", before);
    CHECK_MSG(after != NULL && before != NULL && strcmp(before, after) == 0, "the child's free wrote the file: %s", after);
    nl_client_free(again);
    close(ready[0]);
    close(go[1]);
    free(before);
    free(after);
    free(config);
    unlink(jar);
    free(jar);
    CHECK(fh_sh("rm -rf '%s'", dir));
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_setting_the_descriptor_returns_the_previous_one),
        NLT_TEST(test_a_signal_ends_a_blocking_request_at_once),
        NLT_TEST(test_a_byte_from_before_the_call_does_not_interrupt_it),
        NLT_TEST(test_an_interrupted_request_returns_after_its_log_events),
        NLT_TEST(test_connections_are_closed_on_exec),
        NLT_TEST(test_batches_calls_and_hooked_requests_are_interrupted_too),
        NLT_TEST(test_a_request_that_waits_on_the_loop_is_interrupted),
        NLT_TEST(test_other_threads_are_not_interrupted),
        NLT_TEST(test_a_stale_descriptor_neither_interrupts_nor_spins),
        NLT_TEST(test_a_child_of_fork_gets_its_own_loop_and_connections),
        NLT_TEST(test_a_child_that_only_frees_the_client_returns),
        NLT_TEST(test_a_child_does_not_cancel_or_pause_the_parents_requests),
        NLT_TEST(test_a_child_of_fork_starts_with_the_parents_cookies_and_leaves_their_file_alone),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
