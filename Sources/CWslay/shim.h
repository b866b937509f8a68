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

/* wslay's error codes and close codes, which Swift imports as enum values of an
 * unnamed-type-width; plain ints here. */
static const int nl_wslay_err_wouldblock = WSLAY_ERR_WOULDBLOCK;
static const int nl_wslay_err_callback_failure = WSLAY_ERR_CALLBACK_FAILURE;
#endif
