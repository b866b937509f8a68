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
static inline CURLcode nl_curl_setopt_xferinfo(CURL *h, CURLoption o, curl_xferinfo_callback v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode nl_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode nl_curl_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode nl_curl_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode nl_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/* CURLMsg's payload is a union; these read it without Swift's union import. */
static inline CURLcode nl_curl_msg_result(const CURLMsg *m) { return m->data.result; }
#endif
