#define _POSIX_C_SOURCE 200809L
/* A small JSON reader and writer for the CLI's own documents (results, configs,
 * request items). Strict enough for RFC 8259 input; the library validates
 * everything the CLI sends it again. */
#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void *checked(void *p) {
    if (!p) { fputs("netlayer: out of memory\n", stderr); exit(EXIT_FAILURE_OTHER); }
    return p;
}

void buf_add(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2 + 64;
        b->data = checked(realloc(b->data, b->cap));
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_puts(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_printf(buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) { buf_add(b, small, (size_t)n); return; }
    {
        char *big = checked(malloc((size_t)n + 1));
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        buf_add(b, big, (size_t)n);
        free(big);
    }
}

void buf_json_string(buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t i;
    buf_add(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { char e[2] = { '\\', (char)c }; buf_add(b, e, 2); }
        else if (c == '\n') buf_add(b, "\\n", 2);
        else if (c == '\r') buf_add(b, "\\r", 2);
        else if (c == '\t') buf_add(b, "\\t", 2);
        else if (c < 0x20 || c == 0x7F) { char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] }; buf_add(b, e, 6); }
        else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] <= 0x9F && (unsigned char)s[i + 1] >= 0x80) {
            /* a C1 control (U+0080 to U+009F): escaped too, so that JSON output never
             * carries a control character to a terminal */
            unsigned char d = (unsigned char)s[++i];
            char e[6] = { '\\', 'u', '0', '0', hex[d >> 4], hex[d & 15] };
            buf_add(b, e, 6);
        } else buf_add(b, (const char *)&s[i], 1);
    }
    buf_add(b, "\"", 1);
}

/* ---- parser ------------------------------------------------------------------- */

typedef struct parser {
    const char *p, *end, *start;
    char *error;
    size_t error_size;
    int depth;
    int raw_value;  /* json_parse_result: the top-level "value" container kept as text */
} parser;

static jnode *fail(parser *ps, const char *what) {
    if (!ps->error[0]) snprintf(ps->error, ps->error_size, "%s at byte %ld", what, (long)(ps->p - ps->start));
    return NULL;
}

static void skip_space(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static void add_utf8(buf *b, unsigned cp) {
    char u[4];
    if (cp < 0x80) { u[0] = (char)cp; buf_add(b, u, 1); }
    else if (cp < 0x800) { u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 63)); buf_add(b, u, 2); }
    else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 63)); u[2] = (char)(0x80 | (cp & 63));
        buf_add(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 63));
        u[2] = (char)(0x80 | ((cp >> 6) & 63)); u[3] = (char)(0x80 | (cp & 63));
        buf_add(b, u, 4);
    }
}

/* Reads a string literal at ps->p (the opening quote) into `out`. */
static int parse_string(parser *ps, buf *out) {
    ps->p++;
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) { fail(ps, "control character in a string"); return 0; }
        if (c != '\\') { buf_add(out, ps->p++, 1); continue; }
        if (++ps->p >= ps->end) break;
        switch (*ps->p) {
        case '"': case '\\': case '/': buf_add(out, ps->p, 1); break;
        case 'b': buf_add(out, "\b", 1); break;
        case 'f': buf_add(out, "\f", 1); break;
        case 'n': buf_add(out, "\n", 1); break;
        case 'r': buf_add(out, "\r", 1); break;
        case 't': buf_add(out, "\t", 1); break;
        case 'u': {
            unsigned cp, low;
            if (ps->end - ps->p < 5 || !hex4(ps->p + 1, &cp)) { fail(ps, "bad \\u escape"); return 0; }
            ps->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 7 && ps->p[1] == '\\' && ps->p[2] == 'u'
                && hex4(ps->p + 3, &low) && low >= 0xDC00 && low < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                ps->p += 6;
            }
            add_utf8(out, cp);
            break;
        }
        default: fail(ps, "bad escape"); return 0;
        }
        ps->p++;
    }
    if (ps->p >= ps->end) { fail(ps, "unterminated string"); return 0; }
    ps->p++;
    if (!out->data) buf_add(out, "", 0);
    return 1;
}

static jnode *parse_value(parser *ps);
static int rewrite_value(buf *out, parser *ps, int pretty, int depth);

static jnode *new_node(jtype type) {
    jnode *n = checked(calloc(1, sizeof *n));
    n->type = type;
    return n;
}

jnode *json_new(jtype type, const char *text, size_t len) {
    jnode *n = new_node(type);
    if (text) {
        n->text = checked(malloc(len + 1));
        memcpy(n->text, text, len);
        n->text[len] = '\0';
        n->len = len;
    }
    return n;
}

static int compare_keys(const void *a, const void *b) {
    const jnode *x = *(const jnode *const *)a, *y = *(const jnode *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* The first name `object` holds twice, or NULL: the library refuses such a document
 * (RFC 8259 leaves its meaning open), so the CLI names the key first. Sorted, not
 * compared pairwise: a `:=@file` object may hold many members. */
static const jnode *duplicate_member(const jnode *object) {
    size_t count = 0, i;
    const jnode *m, **members, *found = NULL;
    for (m = object->child; m; m = m->next) count++;
    if (count < 2) return NULL;
    members = checked(malloc(count * sizeof *members));
    for (i = 0, m = object->child; m; m = m->next) members[i++] = m;
    qsort(members, count, sizeof *members, compare_keys);
    for (i = 1; i < count && !found; i++)
        if (compare_keys(&members[i - 1], &members[i]) == 0) found = members[i];
    free(members);
    return found;
}

static jnode *parse_container(parser *ps, int object) {
    jnode *node = new_node(object ? J_OBJECT : J_ARRAY), **tail = &node->child;
    char close = object ? '}' : ']';
    if (++ps->depth > 512) { json_free(node); return fail(ps, "nesting too deep"); }
    ps->p++;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == close) { ps->p++; ps->depth--; return node; }
    for (;;) {
        buf key = { 0 };
        jnode *item;
        skip_space(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"') { json_free(node); return fail(ps, "expected a member name"); }
            if (!parse_string(ps, &key)) { free(key.data); json_free(node); return NULL; }
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != ':') { free(key.data); json_free(node); return fail(ps, "expected ':'"); }
            ps->p++;
        }
        skip_space(ps);
        if (object && ps->raw_value && ps->depth == 1 && key.len == 5 && memcmp(key.data, "value", 5) == 0
            && ps->p < ps->end && (*ps->p == '{' || *ps->p == '[')) {
            const char *start = ps->p;
            if (!rewrite_value(NULL, ps, 0, 0)) { free(key.data); json_free(node); return NULL; }
            item = json_new(J_RAW, start, (size_t)(ps->p - start));
        } else {
            item = parse_value(ps);
        }
        if (!item) { free(key.data); json_free(node); return NULL; }
        item->key = key.data;
        item->key_len = key.len;
        *tail = item;
        tail = &item->next;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) {
            const jnode *twice = object ? duplicate_member(node) : NULL;
            if (twice) {
                buf what = { 0 };
                buf_puts(&what, "duplicate key ");
                buf_json_string(&what, twice->key, twice->key_len);
                buf_add(&what, "", 1);
                fail(ps, what.data);
                free(what.data);
                json_free(node);
                return NULL;
            }
            ps->p++;
            ps->depth--;
            return node;
        }
        json_free(node);
        return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static jnode *parse_value(parser *ps) {
    const char *start;
    jnode *n;
    skip_space(ps);
    if (ps->p >= ps->end) return fail(ps, "unexpected end");
    switch (*ps->p) {
    case '{': return parse_container(ps, 1);
    case '[': return parse_container(ps, 0);
    case '"': {
        buf s = { 0 };
        if (!parse_string(ps, &s)) { free(s.data); return NULL; }
        n = new_node(J_STRING);
        n->text = s.data;
        n->len = s.len;
        return n;
    }
    }
    start = ps->p;
    if (ps->end - ps->p >= 4 && memcmp(ps->p, "true", 4) == 0) { ps->p += 4; n = new_node(J_BOOL); }
    else if (ps->end - ps->p >= 5 && memcmp(ps->p, "false", 5) == 0) { ps->p += 5; n = new_node(J_BOOL); }
    else if (ps->end - ps->p >= 4 && memcmp(ps->p, "null", 4) == 0) { ps->p += 4; n = new_node(J_NULL); }
    else {
        const char *digits;
        if (*ps->p == '-') ps->p++;
        digits = ps->p;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
        if (ps->p == digits || (*digits == '0' && ps->p - digits > 1)) return fail(ps, "invalid value");
        if (ps->p < ps->end && *ps->p == '.') {
            digits = ++ps->p;
            while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
            if (ps->p == digits) return fail(ps, "invalid number");
        }
        if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
            ps->p++;
            if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
            digits = ps->p;
            while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
            if (ps->p == digits) return fail(ps, "invalid number");
        }
        n = new_node(J_NUMBER);
    }
    n->len = (size_t)(ps->p - start);
    n->text = checked(malloc(n->len + 1));
    memcpy(n->text, start, n->len);
    n->text[n->len] = '\0';
    if (n->type == J_NUMBER && isinf(strtod(n->text, NULL))) {  /* 1e999: no double holds it */
        ps->p = start;
        json_free(n);
        return fail(ps, "number out of range");
    }
    return n;
}

/* One document: a value and nothing after it; `raw_value` as in parser. */
static jnode *parse_document(const char *text, size_t len, char *error, size_t error_size, int raw_value) {
    parser ps = { text, text + len, text, error, error_size, 0, raw_value };
    jnode *root;
    error[0] = '\0';
    root = parse_value(&ps);
    if (!root) return NULL;
    skip_space(&ps);
    if (ps.p != ps.end) { json_free(root); return fail(&ps, "unexpected text after the value"); }
    return root;
}

jnode *json_parse_result(const char *text, size_t len, char *error, size_t error_size) {
    return parse_document(text, len, error, error_size, 1);
}

static void newline(buf *out, int depth);

/* One value at ps->p written to `out` (NULL: only checked) as json_write writes its
 * tree, without making it: containers are kept as a stack of their kinds. */
static int rewrite_value(buf *out, parser *ps, int pretty, int depth) {
    char kinds[513];  /* '}' or ']' for each open container */
    int open = 0;
    for (;;) {
        /* A value. */
        skip_space(ps);
        if (ps->p >= ps->end) { fail(ps, "unexpected end"); return 0; }
        if (*ps->p == '{' || *ps->p == '[') {
            char close = *ps->p == '{' ? '}' : ']';
            if (open >= 512) { fail(ps, "nesting too deep"); return 0; }
            if (out) buf_add(out, ps->p, 1);
            ps->p++;
            kinds[open++] = close;
            skip_space(ps);
            if (ps->p < ps->end && *ps->p == close) {
                if (out) buf_add(out, ps->p, 1);
                ps->p++;
                open--;
            } else {
                goto member;
            }
        } else if (*ps->p == '"') {
            buf s = { 0 };
            if (!parse_string(ps, &s)) { free(s.data); return 0; }
            if (out) buf_json_string(out, s.data, s.len);
            free(s.data);
        } else {
            const char *start = ps->p;
            jnode *scalar = parse_value(ps);  /* a number, true, false or null: checked as json_parse checks it */
            if (!scalar) return 0;
            json_free(scalar);
            if (out) buf_add(out, start, (size_t)(ps->p - start));
        }
        /* After a value: the next member, or the end of containers. */
        for (;;) {
            if (open == 0) return 1;
            skip_space(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                if (out) buf_add(out, ",", 1);
                ps->p++;
                break;
            }
            if (ps->p < ps->end && *ps->p == kinds[open - 1]) {
                if (out && pretty) newline(out, depth + open - 1);
                if (out) buf_add(out, ps->p, 1);
                ps->p++;
                open--;
                continue;
            }
            fail(ps, kinds[open - 1] == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
            return 0;
        }
    member:
        if (out && pretty) newline(out, depth + open);
        if (kinds[open - 1] == '}') {
            buf key = { 0 };
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != '"') { fail(ps, "expected a member name"); return 0; }
            if (!parse_string(ps, &key)) { free(key.data); return 0; }
            if (out) buf_json_string(out, key.data, key.len);
            free(key.data);
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != ':') { fail(ps, "expected ':'"); return 0; }
            ps->p++;
            if (out) buf_puts(out, pretty ? ": " : ":");
        }
    }
}

int json_rewrite(buf *out, const char *text, size_t len, int pretty, int depth, char *error, size_t error_size) {
    parser ps = { text, text + len, text, error, error_size, 0, 0 };
    error[0] = '\0';
    if (!rewrite_value(out, &ps, pretty, depth)) return 0;
    skip_space(&ps);
    if (ps.p != ps.end) { fail(&ps, "unexpected text after the value"); return 0; }
    return 1;
}

jnode *json_parse(const char *text, size_t len, char *error, size_t error_size) {
    return parse_document(text, len, error, error_size, 0);
}

void json_free(jnode *node) {
    while (node) {
        jnode *next = node->next;
        json_free(node->child);
        free(node->key);
        free(node->text);
        free(node);
        node = next;
    }
}

int json_key_is(const jnode *member, const char *key) {
    return member->key && member->key_len == strlen(key) && memcmp(member->key, key, member->key_len) == 0;
}

jnode *json_get(const jnode *object, const char *key) {
    jnode *m;
    if (!object || object->type != J_OBJECT) return NULL;
    for (m = object->child; m; m = m->next)
        if (json_key_is(m, key)) return m;
    return NULL;
}

const char *json_string(const jnode *object, const char *key) {
    jnode *m = json_get(object, key);
    return m && m->type == J_STRING ? m->text : NULL;
}

static jnode *member(jnode *object, const char *key) {
    jnode *m = json_get(object, key), **tail;
    if (m) return m;
    for (tail = &object->child; *tail; tail = &(*tail)->next) {}
    m = *tail = new_node(J_NULL);
    m->key = checked(strdup(key));
    m->key_len = strlen(key);
    return m;
}

void json_set(jnode *object, const char *key, jtype type, const char *text) {
    jnode *m = member(object, key);
    json_free(m->child);
    m->child = NULL;
    free(m->text);
    m->type = type;
    m->text = checked(strdup(text));
    m->len = strlen(text);
}

void json_set_node(jnode *object, const char *key, jnode *value) {
    jnode *m = member(object, key);
    json_free(m->child);
    free(m->text);
    m->type = value->type;
    m->text = value->text;
    m->len = value->len;
    m->child = value->child;
    free(value->key);
    free(value);
}

void json_set_string(jnode *object, const char *key, const char *value) { json_set(object, key, J_STRING, value); }

jnode *json_object_member(jnode *object, const char *key) {
    jnode *m = member(object, key);
    if (m->type != J_OBJECT) {
        json_free(m->child);
        m->child = NULL;
        free(m->text);
        m->text = NULL;
        m->type = J_OBJECT;
    }
    return m;
}

static void newline(buf *out, int depth) {
    buf_add(out, "\n", 1);
    while (depth-- > 0) buf_add(out, "  ", 2);
}

void json_write(buf *out, const jnode *node, int pretty, int depth) {
    const jnode *c;
    switch (node->type) {
    case J_STRING: buf_json_string(out, node->text, node->len); return;
    case J_NULL: buf_puts(out, "null"); return;
    case J_BOOL: case J_NUMBER: buf_add(out, node->text, node->len); return;
    case J_RAW: {
        char error[96];
        if (!json_rewrite(out, node->text, node->len, pretty, depth, error, sizeof error)) buf_puts(out, "null");
        return;
    }
    case J_ARRAY: case J_OBJECT: break;
    }
    buf_add(out, node->type == J_OBJECT ? "{" : "[", 1);
    for (c = node->child; c; c = c->next) {
        if (pretty) newline(out, depth + 1);
        if (node->type == J_OBJECT) {
            buf_json_string(out, c->key, c->key_len);
            buf_puts(out, pretty ? ": " : ":");
        }
        json_write(out, c, pretty, depth + 1);
        if (c->next) buf_add(out, ",", 1);
    }
    if (pretty && node->child) newline(out, depth);
    buf_add(out, node->type == J_OBJECT ? "}" : "]", 1);
}
