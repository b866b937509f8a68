/*
 * conc_common.h — helpers shared by conc_raw.c, conc_netlayer.c and conc_memory.c:
 * clocks, CPU time, VmRSS, a growable body buffer, and (when CONC_WITH_CURL is
 * defined before including) a raw libcurl multi driver built on
 * curl_multi_socket_action + epoll — the scalable way, as Netlayer's own loop.
 *
 * Header-only on purpose: each benchmark stays one `cc` command.
 */
#ifndef CONC_COMMON_H
#define CONC_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* user+sys of every thread of the process, in seconds. */
static inline double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* A line "KEY: <n> kB" of /proc/self/status, in KiB; -1 if missing. */
static inline long proc_status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

static inline long rss_kib(void) { return proc_status_kib("VmRSS"); }

struct buf {
    char *data;
    size_t len, cap;
};

static inline int buf_append(struct buf *b, const char *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *q = realloc(b->data, cap);
        if (!q) return -1;
        b->data = q;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

#ifdef CONC_WITH_CURL
#include <curl/curl.h>
#include <sys/epoll.h>

/*
 * The multi driver: one epoll set holding the sockets libcurl asks for
 * (CURLMOPT_SOCKETFUNCTION) and one absolute deadline for libcurl's timer
 * (CURLMOPT_TIMERFUNCTION). mdrv_step() waits once and hands every ready socket
 * to curl_multi_socket_action(), plus CURL_SOCKET_TIMEOUT when the deadline
 * passed. Finished transfers are read by the caller with curl_multi_info_read().
 */
struct mdrv {
    CURLM *multi;
    int epfd;
    double deadline; /* monotonic seconds; < 0: no timer */
    int running;
};

static int mdrv_on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp) {
    (void)e;
    (void)socketp;
    struct mdrv *d = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(d->epfd, EPOLL_CTL_DEL, s, NULL); /* may already be closed: ignore */
        return 0;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.data.fd = s;
    if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
    if (epoll_ctl(d->epfd, EPOLL_CTL_MOD, s, &ev) != 0) {
        if (errno != ENOENT || epoll_ctl(d->epfd, EPOLL_CTL_ADD, s, &ev) != 0) {
            perror("epoll_ctl");
            return -1;
        }
    }
    return 0;
}

static int mdrv_on_timer(CURLM *m, long timeout_ms, void *userp) {
    (void)m;
    struct mdrv *d = userp;
    d->deadline = timeout_ms < 0 ? -1.0 : now_s() + (double)timeout_ms / 1e3;
    return 0;
}

static int mdrv_init(struct mdrv *d, long maxconnects) {
    memset(d, 0, sizeof *d);
    d->deadline = -1.0;
    d->epfd = epoll_create1(EPOLL_CLOEXEC);
    d->multi = curl_multi_init();
    if (d->epfd < 0 || !d->multi) return -1;
    curl_multi_setopt(d->multi, CURLMOPT_SOCKETFUNCTION, mdrv_on_socket);
    curl_multi_setopt(d->multi, CURLMOPT_SOCKETDATA, d);
    curl_multi_setopt(d->multi, CURLMOPT_TIMERFUNCTION, mdrv_on_timer);
    curl_multi_setopt(d->multi, CURLMOPT_TIMERDATA, d);
    curl_multi_setopt(d->multi, CURLMOPT_MAXCONNECTS, maxconnects);
    return 0;
}

/* Waits up to max_wait_ms (-1: as long as libcurl's timer allows) and acts. */
static int mdrv_step(struct mdrv *d, int max_wait_ms) {
    struct epoll_event evs[256];
    int wait_ms = max_wait_ms;
    if (d->deadline >= 0) {
        double left = (d->deadline - now_s()) * 1e3;
        int t = left <= 0 ? 0 : (int)(left + 0.999);
        if (wait_ms < 0 || t < wait_ms) wait_ms = t;
    }
    int n = epoll_wait(d->epfd, evs, 256, wait_ms);
    if (n < 0) {
        if (errno == EINTR) return 0;
        perror("epoll_wait");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int flags = 0;
        if (evs[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
        if (evs[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
        if (evs[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
        CURLMcode mc = curl_multi_socket_action(d->multi, evs[i].data.fd, flags, &d->running);
        if (mc != CURLM_OK) {
            fprintf(stderr, "curl_multi_socket_action: %s\n", curl_multi_strerror(mc));
            return -1;
        }
    }
    if (d->deadline >= 0 && now_s() >= d->deadline) {
        d->deadline = -1.0; /* libcurl sets a new one if it needs it */
        CURLMcode mc = curl_multi_socket_action(d->multi, CURL_SOCKET_TIMEOUT, 0, &d->running);
        if (mc != CURLM_OK) {
            fprintf(stderr, "curl_multi_socket_action: %s\n", curl_multi_strerror(mc));
            return -1;
        }
    }
    return 0;
}

static inline size_t mdrv_on_write(char *ptr, size_t size, size_t nmemb, void *userdata) {
    size_t n = size * nmemb;
    return buf_append(userdata, ptr, n) == 0 ? n : 0; /* 0: CURLE_WRITE_ERROR */
}
#endif /* CONC_WITH_CURL */

#endif /* CONC_COMMON_H */
