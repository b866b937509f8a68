/* Typed wrappers for libcurl's variadic functions, which Swift cannot call. */
#ifndef NETLAYER_CCURL_SHIM_H
#define NETLAYER_CCURL_SHIM_H
#include <curl/curl.h>

static inline CURLcode nl_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_write(CURL *h, CURLoption o, curl_write_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_read(CURL *h, CURLoption o, curl_read_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_xferinfo(CURL *h, CURLoption o, curl_xferinfo_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode nl_curl_setopt_debug(CURL *h, curl_debug_callback v) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, v); }
/* The open and close callbacks of a handle's connections, with one context. */
static inline CURLcode nl_curl_setopt_sockets(CURL *h, curl_opensocket_callback open, curl_closesocket_callback close,
                                              void *ctx) {
    CURLcode rc = curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open);
    if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, ctx);
    if (rc == CURLE_OK) rc = curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close);
    return rc != CURLE_OK ? rc : curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, ctx);
}

static inline CURLcode nl_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode nl_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode nl_curl_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode nl_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

static inline CURLMcode nl_curl_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode nl_curl_multi_setopt_socketfn(CURLM *m, curl_socket_callback f) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f); }
static inline CURLMcode nl_curl_multi_setopt_timerfn(CURLM *m, curl_multi_timer_callback f) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f); }

/* CURLMsg's payload is a union; these read it without Swift's union import. */
static inline CURLcode nl_curl_msg_result(const CURLMsg *m) { return m->data.result; }
/* Whether a message reports a finished transfer (the one kind libcurl 7.88 sends). Swift
 * cannot always find the CURLMSG enumerators: a release build that compiles the files
 * of NetlayerCurl in another order stopped seeing CURLMSG_DONE. */
static inline int nl_curl_msg_done(const CURLMsg *m) { return m->msg == CURLMSG_DONE; }

/* A share handle whose DNS cache, TLS sessions and cookies are used from several threads
 * (the event loop and callers of blocking requests), so it carries one mutex per
 * kind of shared data. The connection cache is not shared: libcurl 7.88 frees a
 * shared connection under another thread's feet (seen under valgrind with eight
 * threads of blocking requests), so each pooled handle keeps its own connection. */
#include <pthread.h>
#include <stdlib.h>

typedef struct { pthread_mutex_t locks[CURL_LOCK_DATA_LAST]; } nl_share_locks;

static void nl_share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u) {
    (void)h; (void)a;
    pthread_mutex_lock(&((nl_share_locks *)u)->locks[d]);
}

static void nl_share_unlock(CURL *h, curl_lock_data d, void *u) {
    (void)h;
    pthread_mutex_unlock(&((nl_share_locks *)u)->locks[d]);
}

static inline CURLSH *nl_share_create(void **locks_out) {
    nl_share_locks *locks = (nl_share_locks *)malloc(sizeof *locks);
    CURLSH *sh;
    int i;
    if (!locks) return NULL;
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&locks->locks[i], NULL);
    sh = curl_share_init();
    if (!sh) { free(locks); return NULL; }
    curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, nl_share_lock);
    curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, nl_share_unlock);
    curl_share_setopt(sh, CURLSHOPT_USERDATA, (void *)locks);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);  /* the client's cookie jar */
    *locks_out = locks;
    return sh;
}

static inline void nl_share_destroy(CURLSH *sh, void *locks) {
    int i;
    curl_share_cleanup(sh);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&((nl_share_locks *)locks)->locks[i]);
    free(locks);
}

/* Every lock of a share, taken before fork() and given back after it (in the parent
 * and in the child): a child then finds the share's data as no thread was changing it,
 * and can copy the cookie jar. libcurl takes these locks one at a time and calls no
 * callback while it holds one, so taking them all cannot deadlock with it. */
static inline void nl_share_lock_all(void *locks) {
    int i;
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_lock(&((nl_share_locks *)locks)->locks[i]);
}

static inline void nl_share_unlock_all(void *locks) {
    int i;
    for (i = CURL_LOCK_DATA_LAST - 1; i >= 0; i--) pthread_mutex_unlock(&((nl_share_locks *)locks)->locks[i]);
}

/* CURLVERSION_NOW is a macro Swift does not import. */
static inline curl_version_info_data *nl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }

/* epoll and eventfd, wrapped so Swift never touches the packed epoll_event or its union. */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static inline int nl_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

/* One epoll_ctl for libcurl's CURL_POLL_* value: add (registered == 0) or modify
 * (registered == 1) interest, or remove it. The caller knows which sockets are
 * registered, so no call is wasted on a MOD that fails with ENOENT. */
static inline int nl_epoll_set(int epfd, int fd, int what, int registered) {
    struct epoll_event ev;
    ev.events = 0;
    ev.data.fd = fd;
    if (what == CURL_POLL_REMOVE) return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &ev);
    if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
    if (epoll_ctl(epfd, registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) == 0) return 0;
    /* The fd was closed and reused behind our back (MOD: ENOENT), or is still
     * registered after all (ADD: EEXIST): the other operation is right. */
    if (errno == ENOENT || errno == EEXIST)
        return epoll_ctl(epfd, errno == ENOENT ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
    return -1;
}

/* Waits for events; fills fds[i] and the matching CURL_CSELECT_* flags. */
static inline int nl_epoll_wait(int epfd, int *fds, int *flags, int max, int timeout_ms) {
    struct epoll_event events[256];
    int n, i;
    if (max > 256) max = 256;
    n = epoll_wait(epfd, events, max, timeout_ms);
    for (i = 0; i < n; i++) {
        int f = 0;
        if (events[i].events & EPOLLIN) f |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) f |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) f |= CURL_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        flags[i] = f;
    }
    return n;
}

/* mkostemp is a GNU extension Swift's Glibc module does not show. */
#include <stdlib.h>
#include <fcntl.h>
int mkostemp(char *template_, int flags);
static inline int nl_mkstemp_cloexec(char *template_) { return mkostemp(template_, O_CLOEXEC); }

/* A cancel cell (0 pending, 2 cancel requested) shared by a thread that cancels and
 * one blocked in curl_easy_perform (a WebSocket's connection being opened): libcurl's
 * progress callback reads it here, and a cancel stops the transfer. */
static inline int nl_state_load(const int *cell) { return __atomic_load_n(cell, __ATOMIC_ACQUIRE); }
static inline int nl_state_exchange_if(int *cell, int expected, int desired) {
    return __atomic_compare_exchange_n(cell, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static int nl_progress_stop_on_cancel(void *cell, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                                      curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return __atomic_load_n((const int *)cell, __ATOMIC_ACQUIRE) == 2;
}
static inline CURLcode nl_curl_setopt_progress_stop_on_cancel(CURL *h) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, nl_progress_stop_on_cancel);
}

static inline int nl_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline void nl_eventfd_signal(int fd) { uint64_t one = 1; ssize_t r = write(fd, &one, sizeof one); (void)r; }
static inline void nl_eventfd_drain(int fd) { uint64_t v; ssize_t r = read(fd, &v, sizeof v); (void)r; }
/* Interruptible blocking transfers (nl_thread_set_interrupt_fd). */
#include <errno.h>
#include <poll.h>
/* Reads and discards what waits on a non-blocking descriptor. 1 when the descriptor
 * can still deliver bytes (empty now), 0 when it cannot: closed (EBADF), or a pipe
 * whose write end is closed (end of file), which poll() would report as ready forever. */
static inline int nl_fd_drain(int fd) {
    char buffer[256];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n > 0) continue;
        if (n == 0) return 0;
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
}
/* Whether `fd` is readable within `timeout_ms`. */
static inline int nl_fd_readable(int fd, int timeout_ms) {
    struct pollfd p = { fd, POLLIN, 0 };
    return poll(&p, 1, timeout_ms) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}
/* Whether `fd` is ready for `events` (POLLIN or POLLOUT) now; a hang-up or an error
 * counts as ready, since the next read or write then reports it. */
static inline int nl_fd_ready(int fd, int events) {
    struct pollfd p = { fd, (short)events, 0 };
    return poll(&p, 1, 0) > 0 && (p.revents & (events | POLLHUP | POLLERR));
}
/* The file system type (`f_type` of fstatfs) of `fd`'s file; 0 when unknown. */
#include <sys/vfs.h>
static inline unsigned long nl_fs_type(int fd) {
    struct statfs s;
    return fstatfs(fd, &s) == 0 ? (unsigned long)s.f_type : 0;
}
/* What a paused transfer waits for (`NL_WAIT_*` in wait[0], the descriptor in wait[1]). */
#define NL_WAIT_NONE 0
#define NL_WAIT_READABLE 1
#define NL_WAIT_WRITABLE 2
#define NL_WAIT_DELAY 3
static const int nl_wait_delay_ms = 20;
static const long nl_readfunc_pause = CURL_READFUNC_PAUSE;
static const int nl_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int nl_seekfunc_cantseek = CURL_SEEKFUNC_CANTSEEK;
static const size_t nl_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const int nl_pause_cont = CURLPAUSE_CONT;
static const int nl_pause_recv = CURLPAUSE_RECV;
/* Runs the one transfer of `easy` on the private multi handle `m` until it ends
 * (0, with libcurl's result in *result) or until
 * `interrupt_fd` (when >= 0) becomes readable (1; the transfer is abandoned). -1 when
 * the multi interface fails, with *result set to a libcurl code. `wait` (may be NULL)
 * is where the transfer's callbacks note what they paused it for (a file descriptor
 * not ready yet): the transfer goes on when that is over. */
static inline int nl_multi_perform_interruptible(CURLM *m, CURL *easy, int interrupt_fd, int *wait,
                                                 CURLcode *result) {
    int running = 1, interrupted = 0, failed = 0;
    *result = CURLE_OK;
    if (curl_multi_add_handle(m, easy) != CURLM_OK) { *result = CURLE_FAILED_INIT; return -1; }
    for (;;) {
        if (curl_multi_perform(m, &running) != CURLM_OK) { failed = 1; break; }
        if (!running) break;
        struct curl_waitfd w[2];
        unsigned n = 0;
        int kind = wait ? wait[0] : NL_WAIT_NONE, timeout = 1000;
        if (interrupt_fd >= 0) { w[n].fd = interrupt_fd; w[n].events = CURL_WAIT_POLLIN; w[n].revents = 0; n++; }
        if (kind == NL_WAIT_READABLE || kind == NL_WAIT_WRITABLE) {
            w[n].fd = wait[1];
            w[n].events = kind == NL_WAIT_READABLE ? CURL_WAIT_POLLIN : CURL_WAIT_POLLOUT;
            w[n].revents = 0;
            n++;
        } else if (kind == NL_WAIT_DELAY) {
            timeout = nl_wait_delay_ms;
        }
        if (curl_multi_poll(m, w, n, timeout, NULL) != CURLM_OK) { failed = 1; break; }
        if (interrupt_fd >= 0 && w[0].revents) { interrupted = 1; break; }
        /* curl_multi_poll does not report a hang-up alone: ask poll() itself */
        if (kind == NL_WAIT_DELAY
            || ((kind == NL_WAIT_READABLE || kind == NL_WAIT_WRITABLE)
                && nl_fd_ready(wait[1], kind == NL_WAIT_READABLE ? POLLIN : POLLOUT))) {
            wait[0] = NL_WAIT_NONE;
            curl_easy_pause(easy, CURLPAUSE_CONT);
        }
    }
    if (!interrupted && !failed) {
        int queued; CURLMsg *msg;
        while ((msg = curl_multi_info_read(m, &queued)))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) *result = msg->data.result;
    }
    curl_multi_remove_handle(m, easy);
    if (failed) { *result = CURLE_FAILED_INIT; return -1; }
    return interrupted;
}
/* Keeps the calling thread (a library thread) from receiving process signals, so
 * that they reach the application's own threads. */
#include <signal.h>
#include <time.h>
/* write() that reports a pipe without reader as EPIPE instead of raising SIGPIPE,
 * which would end an application that keeps the default disposition: the signal is
 * blocked for the call and a SIGPIPE it raised is taken back. */
static inline ssize_t nl_write_nosigpipe(int fd, const void *buffer, size_t count) {
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t n = write(fd, buffer, count);
    int saved = errno;
    if (n < 0 && saved == EPIPE && !was_pending) {
        struct timespec zero = { 0, 0 };
        while (sigtimedwait(&pipe_only, NULL, &zero) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return n;
}
static inline void nl_block_signals(void) {
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV); sigdelset(&all, SIGBUS); sigdelset(&all, SIGFPE); sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}
#endif
