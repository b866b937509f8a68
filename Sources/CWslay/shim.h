/* wslay (Debian's libwslay-dev): RFC 6455 framing with no I/O of its own, which the
 * WebSocket connections of the curl transport drive over a socket libcurl connected.
 * Also the two primitives of the opening handshake: random bytes for the key and the
 * masks (getrandom), and SHA-1 for Sec-WebSocket-Accept (OpenSSL's libcrypto, which
 * libcurl already loads). Used as a system library so that the C library's build
 * resolves no Swift package. */
#ifndef NETLAYER_CWSLAY_SHIM_H
#define NETLAYER_CWSLAY_SHIM_H
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>
#include <wslay/wslay.h>
#include <openssl/evp.h>

/* Fills `buffer` with `length` random bytes from the kernel; 0 on success, -1 when the
 * kernel has none to give. */
static inline int nl_ws_random(uint8_t *buffer, size_t length) {
    while (length > 0) {
        ssize_t n = getrandom(buffer, length, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buffer += n;
        length -= (size_t)n;
    }
    return 0;
}

/* SHA-1 of `length` bytes into `digest` (20 bytes); 0 on success. */
static inline int nl_ws_sha1(const uint8_t *data, size_t length, uint8_t *digest) {
    unsigned int size = 0;
    return EVP_Digest(data, length, digest, &size, EVP_sha1(), NULL) == 1 && size == 20 ? 0 : -1;
}

/* CURLINFO_ACTIVESOCKET, through libcurl's variadic getinfo. */
#include <curl/curl.h>
static inline CURLcode nl_curl_getinfo_socket(CURL *h, curl_socket_t *socket) {
    return curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, socket);
}

/* permessage-deflate (RFC 7692) with zlib: one message at a time, raw deflate with the
 * 4-byte tail of a sync flush removed on the wire. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct nl_pmd {
    z_stream inflater, deflater;
    int inflating, deflating;
} nl_pmd;

static inline nl_pmd *nl_pmd_new(void) { return (nl_pmd *)calloc(1, sizeof(nl_pmd)); }

static inline void nl_pmd_free(nl_pmd *p) {
    if (!p) return;
    if (p->inflating) inflateEnd(&p->inflater);
    if (p->deflating) deflateEnd(&p->deflater);
    free(p);
}

/* Grows *out (malloc'ed, *cap bytes) to hold at least `need` bytes; 0 on success. */
static inline int nl_pmd_reserve(uint8_t **out, size_t *cap, size_t need) {
    size_t next = *cap ? *cap : 4096;
    uint8_t *grown;
    if (need <= *cap) return 0;
    while (next < need) next *= 2;
    grown = (uint8_t *)realloc(*out, next);
    if (!grown) return -1;
    *out = grown;
    *cap = next;
    return 0;
}

/* Inflates one message. 0: *out (malloc'ed, free it) holds *out_len bytes; 1: the
 * message inflates to more than `limit` bytes (nothing more is inflated); -1: not
 * valid deflate data, or memory ran out. `reset`: forget the window afterwards (the
 * server does not take context over). */
static inline int nl_pmd_inflate(nl_pmd *p, const uint8_t *in, size_t n, size_t limit, int reset,
                                 uint8_t **out, size_t *out_len) {
    static const uint8_t tail[4] = { 0x00, 0x00, 0xff, 0xff };
    size_t cap = 0, len = 0;
    int pass, rc = 0, ended = 0;
    *out = NULL;
    *out_len = 0;
    if (!p->inflating) {
        if (inflateInit2(&p->inflater, -15) != Z_OK) return -1;
        p->inflating = 1;
    }
    for (pass = 0; pass < 2 && rc == 0 && !ended; pass++) {
        p->inflater.next_in = (Bytef *)(pass == 0 ? in : tail);
        p->inflater.avail_in = (uInt)(pass == 0 ? n : 4);
        while (p->inflater.avail_in > 0 || (pass == 1 && p->inflater.avail_out == 0)) {
            int z;
            if (nl_pmd_reserve(out, &cap, len + 4096) != 0) { rc = -1; break; }
            p->inflater.next_out = *out + len;
            p->inflater.avail_out = (uInt)(cap - len);
            z = inflate(&p->inflater, Z_SYNC_FLUSH);
            len = cap - p->inflater.avail_out;
            if (len > limit) { rc = 1; break; }
            if (z == Z_STREAM_END) { ended = 1; break; }  /* a final block: the next message starts afresh */
            if (z == Z_BUF_ERROR && p->inflater.avail_in == 0) break;
            if (z != Z_OK) { rc = -1; break; }
        }
    }
    if (rc != 0 || reset || ended) inflateReset(&p->inflater);
    if (rc != 0) { free(*out); *out = NULL; return rc; }
    *out_len = len;
    return 0;
}

/* Deflates one message; 0 with *out (malloc'ed) holding *out_len bytes, -1 when memory
 * ran out. `reset`: forget the window afterwards (no context takeover). */
static inline int nl_pmd_deflate(nl_pmd *p, const uint8_t *in, size_t n, int reset, uint8_t **out, size_t *out_len) {
    size_t cap = 0, len = 0;
    *out = NULL;
    *out_len = 0;
    if (!p->deflating) {
        if (deflateInit2(&p->deflater, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
        p->deflating = 1;
    }
    p->deflater.next_in = (Bytef *)in;
    p->deflater.avail_in = (uInt)n;
    do {
        if (nl_pmd_reserve(out, &cap, len + deflateBound(&p->deflater, (uLong)n) + 16) != 0) {
            free(*out);
            *out = NULL;
            deflateReset(&p->deflater);
            return -1;
        }
        p->deflater.next_out = *out + len;
        p->deflater.avail_out = (uInt)(cap - len);
        deflate(&p->deflater, Z_SYNC_FLUSH);
        len = cap - p->deflater.avail_out;
    } while (p->deflater.avail_out == 0);
    if (len >= 4 && memcmp(*out + len - 4, "\x00\x00\xff\xff", 4) == 0) len -= 4;
    if (reset) deflateReset(&p->deflater);
    *out_len = len;
    return 0;
}

/* wslay's error codes and close codes, which Swift imports as enum values of an
 * unnamed-type-width; plain ints here. */
static const int nl_wslay_err_wouldblock = WSLAY_ERR_WOULDBLOCK;
static const int nl_wslay_err_callback_failure = WSLAY_ERR_CALLBACK_FAILURE;
static const uint8_t nl_wslay_rsv1 = WSLAY_RSV1_BIT;
static const int nl_wslay_msg_more = WSLAY_MSG_MORE;
#endif
