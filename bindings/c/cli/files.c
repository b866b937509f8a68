#define _POSIX_C_SOURCE 200809L
/* Local files the CLI reads: opened without blocking (a FIFO with no writer would hang
 * a blocking open) and without becoming a controlling terminal, checked with fstat
 * before a byte is read, and read whole only when regular and at most
 * CLI_READ_LIMIT bytes, so that `f=@/dev/zero` or a FIFO is a clear error instead of
 * a hang or a process that reads until memory runs out. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why a file of `mode` is not a regular one, for a message. */
static const char *not_regular(mode_t mode) {
    if (S_ISDIR(mode)) return "it is a directory";
    if (S_ISFIFO(mode)) return "it is a FIFO (named pipe), not a regular file";
    if (S_ISCHR(mode)) return "it is a character device, not a regular file";
    if (S_ISBLK(mode)) return "it is a block device, not a regular file";
    if (S_ISSOCK(mode)) return "it is a socket, not a regular file";
    return "it is not a regular file";
}

static void too_large(char *why, size_t why_size) {
    snprintf(why, why_size, "it has more than %zu bytes (%zu MiB), the most netlayer reads into memory",
             (size_t)CLI_READ_LIMIT, (size_t)CLI_READ_LIMIT >> 20);
}

/* Opens `path` for reading without blocking; -1 with the reason in `why`. */
static int open_checked(const char *path, struct stat *st, char *why, size_t why_size) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

char *read_whole(const char *path, size_t *size, char *why, size_t why_size) {
    int is_stdin = strcmp(path, "-") == 0, fd = STDIN_FILENO;
    buf b = { 0 };
    char chunk[65536];
    struct stat st;
    if (!is_stdin) {
        if ((fd = open_checked(path, &st, why, why_size)) < 0) return NULL;
        if (!S_ISREG(st.st_mode) || st.st_size > (off_t)CLI_READ_LIMIT) {
            if (!S_ISREG(st.st_mode)) snprintf(why, why_size, "%s", not_regular(st.st_mode));
            else too_large(why, why_size);
            close(fd);
            return NULL;
        }
    }
    for (;;) {   /* bounded again while reading: a file may grow, standard input is a stream */
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) snprintf(why, why_size, "%s", strerror(errno));
        else if (b.len + (size_t)n > CLI_READ_LIMIT) too_large(why, why_size);
        else if (n > 0) { buf_add(&b, chunk, (size_t)n); continue; }
        else break;
        if (!is_stdin) close(fd);
        free(b.data);
        return NULL;
    }
    if (!is_stdin) close(fd);
    if (!b.data) buf_add(&b, "", 0);
    if (size) *size = b.len;
    return b.data;
}

int check_streamed_file(const char *path, int regular_only, char *why, size_t why_size) {
    struct stat st;
    /* stat and access, not open: a FIFO opened and closed here would let its writer
     * start writing to a reader that is gone before the library opens it. */
    if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode) || (!regular_only && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))) return 0;
    snprintf(why, why_size, "%s", not_regular(st.st_mode));
    return -1;
}
