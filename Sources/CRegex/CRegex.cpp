// The RE2 side of CRegex.h: an RE2 object behind a C handle.
#include "CRegex.h"

#include <new>
#include <re2/re2.h>

struct cregex {
    re2::RE2 expression;
    cregex(re2::StringPiece pattern, const re2::RE2::Options &options) : expression(pattern, options) {}
};

extern "C" cregex *cregex_compile(const char *pattern, size_t length, long long max_memory)
{
    re2::RE2::Options options;
    options.set_encoding(re2::RE2::Options::EncodingUTF8);
    options.set_log_errors(false);  // a pattern RE2 refuses is the caller's to report, not stderr's
    options.set_max_mem(max_memory);
    cregex *re = new (std::nothrow) cregex(re2::StringPiece(pattern, length), options);
    if (re != nullptr && !re->expression.ok()) {
        delete re;
        return nullptr;
    }
    return re;
}

extern "C" int cregex_search(const cregex *re, const char *text, size_t length)
{
    return re2::RE2::PartialMatch(re2::StringPiece(text, length), re->expression) ? 1 : 0;
}

extern "C" void cregex_free(cregex *re)
{
    delete re;
}
