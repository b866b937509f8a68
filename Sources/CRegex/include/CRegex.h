/*
 * CRegex: the few RE2 calls the schema validator needs, as C functions Swift can call.
 * RE2 matches in time linear in the text (no backtracking), which is why schema
 * `pattern`s use it: a pattern such as ^(a+)+$ costs as little as ^a+$.
 */
#ifndef NETLAYER_CREGEX_H
#define NETLAYER_CREGEX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled RE2 expression; opaque. Matching it from several threads at once is safe. */
typedef struct cregex cregex;

/*
 * Compiles `length` bytes of UTF-8 `pattern`, in RE2's syntax, matching code points.
 * `max_memory` bounds the bytes the compiled program and its matching caches may use.
 * NULL when RE2 cannot compile it: syntax it does not have (lookaround,
 * backreferences), a repetition over 1000, a program over `max_memory`, or no memory.
 */
cregex *cregex_compile(const char *pattern, size_t length, long long max_memory);

/* 1 when `re` matches somewhere in the `length` bytes of UTF-8 `text`, else 0. */
int cregex_search(const cregex *re, const char *text, size_t length);

/* Frees what cregex_compile returned; NULL is ignored. */
void cregex_free(cregex *re);

#ifdef __cplusplus
}
#endif

#endif
