/*
 * test_sockets.c — the event loop's epoll set. A kept-alive connection stays in the
 * set between its transfers (no epoll_ctl per request); it must leave it when the
 * server closes it while idle, and when libcurl closes it, even while a child of
 * fork() holds a copy of its descriptor. Either mistake shows as a loop that spins
 * (a closed socket reads as ready forever) or a request that never completes (a new
 * socket under a reused descriptor number left out of the set).
 */
#include "harness.h"  /* first: it sets the feature-test macros */
#include "fault_helpers.h"
#include "async_one.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static fh_server g_faulty = { -1, -1, 0, "" };

/* One request on the client's event loop (nl_request_async): its result document. */
static json_t *loop_request(nl_client *c, const char *endpoint)
{
    async_one a;
    json_t *r = NULL;
    async_one_init(&a);
    if (nl_request_async(c, endpoint, async_one_cb, &a) != 0 && async_one_wait(&a, 30)) {
        r = a.result;
        a.result = NULL;
    }
    async_one_destroy(&a);
    REQUIRE_MSG(r != NULL, "no result for %s within 30 s", endpoint);
    return r;
}

/* The connection id the test server saw for a loop request. */
static long long loop_connection(nl_client *c, const char *endpoint)
{
    json_t *r = loop_request(c, endpoint);
    long long id = -1;
    CHECK_OK(r);
    id = (long long)jpath_num(r, "value.connection", -1);
    json_decref(r);
    return id;
}

static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000.0 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000.0;
}

/* The process's CPU time while it sleeps `ms`: a spinning loop thread spends it all. */
static void check_the_loop_sleeps(const char *when)
{
    double wall = now_ms(), cpu = cpu_ms();
    sleep_ms(400);
    wall = now_ms() - wall;
    cpu = cpu_ms() - cpu;
    nlt_note("%s: %.0f ms of CPU in %.0f ms", when, cpu, wall);
    CHECK_MSG(cpu < wall / 3, "%s: the process used %.0f ms of CPU while idle for %.0f ms", when, cpu, wall);
}

static const char *const kept = "{\"path\": \"echo\"}";
static const char *const closed = "{\"path\": \"echo\", \"headers\": {\"Connection\": \"close\"}}";

static void test_a_kept_alive_connection_is_reused_by_the_next_loop_request(void)
{
    nl_client *c = client_for(NULL);
    long long first = loop_connection(c, kept);
    CHECK(first >= 0);
    CHECK(loop_connection(c, kept) == first);
    CHECK(loop_connection(c, kept) == first);
    nl_client_free(c);
}

static void test_a_connection_the_server_closes_while_idle_leaves_the_loop_asleep(void)
{
    nl_client *c = client_for(NULL);
    char *closing, *plain;
    json_t *r;
    REQUIRE_MSG(fh_server_start(&g_faulty, "faulty.py", NULL), "cannot start faulty.py");
    closing = nlt_format("{\"path\": \"http://127.0.0.1:%d/keepalive-close\", \"isFullPath\": true}", g_faulty.port);
    plain = nlt_format("{\"path\": \"http://127.0.0.1:%d/plain\", \"isFullPath\": true}", g_faulty.port);
    /* A keep-alive answer, then the server closes the connection at once: the socket
       libcurl keeps for the next transfer reads as ready from then on. */
    r = loop_request(c, closing);
    CHECK_OK(r);
    json_decref(r);
    check_the_loop_sleeps("after the server closed an idle connection");
    r = loop_request(c, plain);  /* on a new connection */
    CHECK_OK(r);
    json_decref(r);
    check_the_loop_sleeps("with the new connection kept alive");
    free(closing);
    free(plain);
    fh_server_stop(&g_faulty);
    nl_client_free(c);
}

static void test_a_connection_closed_after_its_transfer_leaves_the_loop_asleep(void)
{
    nl_client *c = client_for(NULL);
    long long first = loop_connection(c, kept), second;
    /* The server answers "Connection: close" and closes its end; libcurl closes its
       socket at the end of the transfer. */
    json_t *r = loop_request(c, closed);
    CHECK_OK(r);
    json_decref(r);
    check_the_loop_sleeps("after a connection closed at the end of its transfer");
    second = loop_connection(c, kept);
    CHECK(second >= 0 && second != first);
    CHECK(loop_connection(c, kept) == second);
    check_the_loop_sleeps("with a new connection kept alive");
    nl_client_free(c);
}

/* Connections closed and opened again and again, 8 at a time: descriptor numbers
   come back for new sockets, each of which must be watched from its first transfer. */
static void test_sockets_that_reuse_descriptor_numbers_are_watched(void)
{
    nl_client *c = client_for("\"maxConcurrent\": 8");
    int round, i, ok = 0;
    for (round = 0; round < 12; round++) {
        char *batch = nlt_format("[%s, %s, %s, %s, %s, %s, %s, %s]", kept, closed, kept, kept, closed, kept, closed,
                                 kept);
        char *out = nl_request_batch(c, batch);
        json_t *results = nlt_parse(out, "batch result");
        for (i = 0; i < (int)json_array_size(results); i++)
            ok += result_ok(json_array_get(results, i));
        json_decref(results);
        nl_free(out);
        free(batch);
    }
    CHECK_INT_EQ(ok, 12 * 8);
    check_the_loop_sleeps("after connections came and went");
    nl_client_free(c);
}

/* A host name the system resolver is asked for (and refuses): libcurl's resolver
   thread signals through a socket of its own, which the loop watches and libcurl
   closes without telling it. The connections made after it are watched like any
   other, whatever descriptor numbers they get. */
static void test_the_resolver_socket_and_the_connections_after_it_are_watched(void)
{
    nl_client *c = client_for("\"maxConcurrent\": 4");
    static const char *const unknown = "{\"path\": \"http://nothing.invalid/\", \"isFullPath\": true}";
    static const char *const unknown_too = "{\"path\": \"http://nothing-either.invalid/\", \"isFullPath\": true}";
    char *batch = nlt_format("[%s, %s, %s, %s, %s, %s]", unknown, closed, kept, unknown_too, kept, closed);
    char *out = nl_request_batch(c, batch);
    json_t *results = nlt_parse(out, "batch result");
    int i;
    REQUIRE(json_array_size(results) == 6);
    for (i = 0; i < 6; i++) {
        json_t *r = json_array_get(results, i);
        if (i == 0 || i == 3)
            CHECK_KIND(r, "not_connected");
        else
            CHECK_OK(r);
    }
    json_decref(results);
    nl_free(out);
    free(batch);
    check_the_loop_sleeps("after name resolutions");
    for (i = 0; i < 6; i++) {
        json_t *r = loop_request(c, i % 2 ? closed : kept);
        CHECK_OK(r);
        json_decref(r);
    }
    check_the_loop_sleeps("after more connections came and went");
    nl_client_free(c);
}

static void test_a_socket_closed_while_a_fork_child_holds_it_leaves_the_loop_asleep(void)
{
    nl_client *c;
    int gate[2];
    pid_t pid;
    int status = 0;
    json_t *r;
    SKIP_UNDER_TSAN();
    c = client_for(NULL);
    CHECK(loop_connection(c, kept) >= 0);  /* a loop connection, in the epoll set */
    REQUIRE(pipe(gate) == 0);
    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* cat holds a copy of every descriptor (libcurl's sockets are not close-on-exec)
           until the parent closes the gate. It runs instead of this program so that
           valgrind does not check a copy of the parent's memory, whose threads are gone. */
        int null = open("/dev/null", O_WRONLY);
        close(gate[1]);
        if (null < 0 || dup2(gate[0], 0) < 0 || dup2(null, 1) < 0)
            _exit(126);
        execl("/bin/cat", "cat", (char *)NULL);
        _exit(127);
    }
    close(gate[0]);
    /* The parent's libcurl closes the connection the child still holds: its
       registration must leave the set before the descriptor goes. */
    r = loop_request(c, closed);
    CHECK_OK(r);
    json_decref(r);
    check_the_loop_sleeps("after closing a socket a fork child holds");
    CHECK(loop_connection(c, kept) >= 0);  /* most likely under the same number */
    check_the_loop_sleeps("with the new connection kept alive");
    close(gate[1]);
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_a_kept_alive_connection_is_reused_by_the_next_loop_request),
        NLT_TEST(test_a_connection_the_server_closes_while_idle_leaves_the_loop_asleep),
        NLT_TEST(test_a_connection_closed_after_its_transfer_leaves_the_loop_asleep),
        NLT_TEST(test_sockets_that_reuse_descriptor_numbers_are_watched),
        NLT_TEST(test_the_resolver_socket_and_the_connections_after_it_are_watched),
        NLT_TEST(test_a_socket_closed_while_a_fork_child_holds_it_leaves_the_loop_asleep),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
