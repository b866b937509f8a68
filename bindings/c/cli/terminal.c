#define _POSIX_C_SOURCE 200809L
/* Text from a server shown on a terminal. A terminal acts on control characters (ESC
 * starts sequences that move the cursor, set the window title, remap keys), so a
 * server's must not reach it raw: each shows as an escape instead, the way a reader
 * can tell what was sent. Written to a pipe or a file, the bytes pass unchanged. */
#include "cli.h"

#include <string.h>
#include <unistd.h>

/* The length of the valid UTF-8 sequence at `s` (`n` bytes left), or 0. */
static size_t utf8_length(const unsigned char *s, size_t n) {
    unsigned char c = s[0], low = 0x80, high = 0xBF;
    size_t length, i;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) length = 2;
    else if (c >= 0xE0 && c <= 0xEF) length = 3;
    else if (c >= 0xF0 && c <= 0xF4) length = 4;
    else return 0;
    if (c == 0xE0) low = 0xA0;         /* no overlong forms */
    else if (c == 0xED) high = 0x9F;   /* no UTF-16 surrogates */
    else if (c == 0xF0) low = 0x90;
    else if (c == 0xF4) high = 0x8F;   /* nothing past U+10FFFF */
    if (n < length || s[1] < low || s[1] > high) return 0;
    for (i = 2; i < length; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return length;
}

void put_text(FILE *out, const char *text, size_t n, int terminal) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, start = 0;
    if (!terminal) { fwrite(text, 1, n, out); return; }
    while (i < n) {
        size_t length = utf8_length(s + i, n - i);
        char escape[7];
        if (length == 1 && ((s[i] >= 0x20 && s[i] != 0x7F) || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) { i++; continue; }
        if (length == 2 && s[i] == 0xC2 && s[i + 1] <= 0x9F) {   /* a C1 control, U+0080 to U+009F */
            memcpy(escape, "\\u0000", 7);
            escape[4] = hex[s[i + 1] >> 4];
            escape[5] = hex[s[i + 1] & 15];
        } else if (length > 1) { i += length; continue; }
        else {   /* a C0 control, DEL, or a byte that is not UTF-8 */
            memcpy(escape, "\\x00", 5);
            escape[2] = hex[s[i] >> 4];
            escape[3] = hex[s[i] & 15];
            length = 1;
        }
        fwrite(s + start, 1, i - start, out);
        fputs(escape, out);
        i += length;
        start = i;
    }
    fwrite(s + start, 1, n - start, out);
}

void put_string(FILE *out, const char *text, int terminal) {
    put_text(out, text ? text : "", text ? strlen(text) : 0, terminal);
}

void report_arg(const char *before, const char *arg, const char *after) {
    fputs(before, stderr);
    put_string(stderr, arg, isatty(STDERR_FILENO));
    fputs(after, stderr);
}
