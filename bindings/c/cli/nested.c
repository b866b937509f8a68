#define _POSIX_C_SOURCE 200809L
/* httpie's nested JSON paths (https://httpie.io/docs/cli/nested-json), read and applied
 * as httpie's own httpie/cli/nested_json does:
 *
 *   key          a member of the top-level object (`=x` and `:=[1]` set the member "")
 *   key[name]    a member of an object, made when missing
 *   key[3]       an element of an array, padded with nulls up to it
 *   key[]        a new element at the end of an array
 *   [0], []      the same on a top-level array
 *
 * A backslash makes `[`, `]` and `\` plain text (`a\[b\]`, `a[\\]`); a number with a
 * backslash before it is a key, not an index (`a[\1]`). A number is what Python's int()
 * reads (httpie uses it): ASCII spaces around it, a sign, `_` between digits; at the
 * top level it is a key, written as int() prints it (`01=x` sets "1").
 * A container keeps the type its first use gave it: a later item that treats it as
 * another type is refused. Setting a value replaces whatever was there.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* An index makes that many nulls before it: bounded so that a typo cannot make a
 * body of millions of elements. */
#define NESTED_MAX_INDEX 65535
/* The JSON reader of the library takes 256 levels; a deeper path is refused here. */
#define NESTED_MAX_DEPTH 255  /* the body; the endpoint document around it is the 256th level */

typedef enum { T_TEXT, T_NUMBER, T_OPEN, T_CLOSE } token_kind;

typedef struct token {
    token_kind kind;
    buf text;              /* T_TEXT: the text without its escapes; T_NUMBER: as int() prints it */
    size_t start, end;     /* bytes of the key it spans */
} token;

typedef enum { P_KEY, P_INDEX, P_APPEND } path_kind;

typedef struct path {
    path_kind kind;
    const char *text;      /* P_KEY: the key; P_INDEX: the number */
    size_t start, end;     /* bytes of the key it spans (for a message) */
    int root;
} path;

typedef struct failure { buf message; size_t start, end; int has_span; } failure;

static int is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Python's int() of ASCII text: 1 with the number as int() prints it in `out`, or 0. */
static int python_int(const char *s, size_t n, buf *out) {
    size_t i = 0, j;
    int negative = 0, nonzero = 0;
    while (n && is_ascii_space(s[n - 1])) n--;
    while (i < n && is_ascii_space(s[i])) i++;
    if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i >= n || !is_digit(s[i])) return 0;
    for (j = i; j < n; j++) {
        if (s[j] == '_' && j + 1 < n && is_digit(s[j + 1])) continue;
        if (!is_digit(s[j])) return 0;
    }
    out->len = 0;
    for (j = i; j < n; j++) {
        if (s[j] == '_' || (s[j] == '0' && !nonzero)) continue;
        if (!nonzero && negative) buf_add(out, "-", 1);
        nonzero = 1;
        buf_add(out, &s[j], 1);
    }
    if (!nonzero) buf_add(out, "0", 1);
    return 1;
}

static void end_text(token *tokens, size_t *n, buf *text, size_t start, size_t end, int escaped) {
    buf number = { 0 };
    token *t;
    if (!text->len) return;
    t = &tokens[(*n)++];
    t->kind = T_TEXT;
    t->start = start;
    t->end = end;
    if (!escaped && python_int(text->data, text->len, &number)) {
        t->kind = T_NUMBER;
        t->text = number;
        free(text->data);
    } else if (!escaped && text->data[0] == '\\' && python_int(text->data + 1, text->len - 1, &number)) {
        free(number.data);   /* `\1`: the text after the backslash, a key */
        t->text.data = NULL;
        t->text.len = t->text.cap = 0;
        buf_add(&t->text, text->data + 1, text->len - 1);
        free(text->data);
    } else t->text = *text;
    memset(text, 0, sizeof *text);
}

/* Splits `key` into texts, numbers and brackets; `tokens` has room for strlen(key)+1. */
static size_t tokenize(const char *key, token *tokens) {
    size_t n = 0, i, len = strlen(key), start = 0;
    buf text = { 0 };
    int escaped = 0;   /* the text holds an escaped [, ] or \: it is never a number */
    for (i = 0; i < len; i++) {
        if (!text.len) start = i;
        if (key[i] == '[' || key[i] == ']') {
            end_text(tokens, &n, &text, start, i, escaped);
            escaped = 0;
            tokens[n].kind = key[i] == '[' ? T_OPEN : T_CLOSE;
            memset(&tokens[n].text, 0, sizeof tokens[n].text);
            tokens[n].start = i;
            tokens[n++].end = i + 1;
        } else if (key[i] == '\\' && i + 1 < len) {
            if (strchr("[]\\", key[i + 1])) escaped = 1;
            else buf_add(&text, &key[i], 1);
            buf_add(&text, &key[++i], 1);
        } else buf_add(&text, &key[i], 1);
    }
    end_text(tokens, &n, &text, start, len, escaped);
    return n;
}

static const char *token_name(token_kind kind) {
    switch (kind) {
    case T_TEXT: return "a text";
    case T_NUMBER: return "a number";
    case T_OPEN: return "'['";
    case T_CLOSE: return "']'";
    }
    return "";
}

/* The next token, when it is one of `kinds` (`count` of them); else NULL and why. */
static const token *expect(const token *tokens, size_t n, size_t *cursor, const token_kind *kinds, int count,
                           failure *f) {
    int k;
    if (*cursor < n) {
        const token *t = &tokens[(*cursor)++];
        for (k = 0; k < count; k++)
            if (t->kind == kinds[k]) return t;
        f->start = t->start;
        f->end = t->end;
    } else {
        f->start = n ? tokens[n - 1].end : 0;
        f->end = f->start + 1;
    }
    f->has_span = 1;
    buf_puts(&f->message, "expected ");
    for (k = 0; k < count; k++) {
        if (k) buf_puts(&f->message, k == count - 1 ? " or " : ", ");
        buf_puts(&f->message, token_name(kinds[k]));
    }
    return NULL;
}

/* Reads the tokens as httpie's grammar: a root (text, number, [number] or []), then
 * [text], [number] or [] paths. The count of paths, or -1 with why. */
static long parse(const token *tokens, size_t n, path *paths, failure *f) {
    static const token_kind root_kinds[] = { T_TEXT, T_NUMBER, T_OPEN }, index_kinds[] = { T_NUMBER, T_CLOSE },
                            path_kinds[] = { T_TEXT, T_NUMBER, T_CLOSE }, close[] = { T_CLOSE }, open[] = { T_OPEN };
    size_t cursor = 0, count = 0;
    const token *t, *first;
    if (!n) {
        paths[count++] = (path){ P_KEY, "", 0, 0, 1 };
        return (long)count;
    }
    if (!(first = t = expect(tokens, n, &cursor, root_kinds, 3, f))) return -1;
    if (t->kind != T_OPEN) paths[count++] = (path){ P_KEY, t->text.data, t->start, t->end, 1 };
    else {
        if (!(t = expect(tokens, n, &cursor, index_kinds, 2, f))) return -1;
        if (t->kind == T_CLOSE) paths[count++] = (path){ P_APPEND, NULL, first->start, t->end, 1 };
        else {
            const char *number = t->text.data;
            if (!(t = expect(tokens, n, &cursor, close, 1, f))) return -1;
            paths[count++] = (path){ P_INDEX, number, first->start, t->end, 1 };
        }
    }
    while (cursor < n) {
        if (!(first = expect(tokens, n, &cursor, open, 1, f))) return -1;
        if (!(t = expect(tokens, n, &cursor, path_kinds, 3, f))) return -1;
        if (t->kind == T_CLOSE) { paths[count++] = (path){ P_APPEND, NULL, first->start, t->end, 0 }; continue; }
        paths[count] = (path){ t->kind == T_TEXT ? P_KEY : P_INDEX, t->text.data, first->start, 0, 0 };
        if (!(t = expect(tokens, n, &cursor, close, 1, f))) return -1;
        paths[count++].end = t->end;
    }
    return (long)count;
}

static void reconstruct(buf *out, const path *paths, size_t count) {
    size_t i;
    for (i = 0; i < count; i++) {
        if (paths[i].kind == P_KEY && paths[i].root) buf_puts(out, paths[i].text);
        else buf_printf(out, "[%s]", paths[i].kind == P_APPEND ? "" : paths[i].text);
    }
}

static const char *type_name(jtype type) {
    switch (type) {
    case J_NULL: return "null";
    case J_BOOL: return "a boolean";
    case J_NUMBER: return "a number";
    case J_STRING: return "a string";
    case J_ARRAY: return "an array";
    case J_OBJECT: return "an object";
    case J_RAW: return "JSON text";
    }
    return "";
}

/* Is `node` the container `p` reads? If not, why. */
static int type_check(const jnode *node, const path *paths, size_t index, failure *f) {
    jtype wanted = paths[index].kind == P_KEY ? J_OBJECT : J_ARRAY;
    if (node->type == wanted) return 1;
    f->start = paths[index].start;
    f->end = paths[index].end;
    f->has_span = paths[index].end > paths[index].start;
    buf_puts(&f->message, "type conflict: ");
    if (index == 0) buf_puts(&f->message, "the top level");
    else { buf_puts(&f->message, "'"); reconstruct(&f->message, paths, index); buf_puts(&f->message, "'"); }
    buf_printf(&f->message, " is %s, but ", type_name(node->type));
    if (paths[index].root && paths[index].kind == P_KEY) buf_printf(&f->message, "the key '%s'", paths[index].text);
    else reconstruct(&f->message, paths + index, 1);
    buf_printf(&f->message, " needs %s", type_name(wanted));
    return 0;
}

/* Makes `slot` hold `value` (freed), keeping its key and its place. */
static void replace(jnode *slot, jnode *value) {
    json_free(slot->child);
    free(slot->text);
    slot->type = value->type;
    slot->text = value->text;
    slot->len = value->len;
    slot->child = value->child;
    free(value->key);
    free(value);
}

static jnode *container_for(path_kind kind) { return json_new(kind == P_KEY ? J_OBJECT : J_ARRAY, NULL, 0); }

/* The member `key` of `object`, or NULL. */
static jnode *find_member(jnode *object, const char *key) {
    jnode *m;
    for (m = object->child; m; m = m->next)
        if (json_key_is(m, key)) return m;
    return NULL;
}

/* Appends `value` to `object` as its member `key`; returns it. */
static jnode *add_member(jnode *object, const char *key, jnode *value) {
    jnode **tail;
    for (tail = &object->child; *tail; tail = &(*tail)->next) {}
    value->key = strdup(key);
    if (!value->key) { fputs("netlayer: out of memory\n", stderr); exit(EXIT_FAILURE_OTHER); }
    value->key_len = strlen(key);
    return *tail = value;
}

static jnode *element(jnode *array, size_t index) {
    jnode **tail = &array->child;
    size_t i;
    for (i = 0;; i++, tail = &(*tail)->next) {
        if (!*tail) *tail = json_new(J_NULL, NULL, 0);
        if (i == index) return *tail;
    }
}

static jnode *append(jnode *array, jnode *value) {
    jnode **tail;
    for (tail = &array->child; *tail; tail = &(*tail)->next) {}
    return *tail = value;
}

/* Walks `paths` from `*root` (made by the first path when NULL) and sets `value` there. */
static int apply(jnode **root, const path *paths, size_t count, jnode *value, failure *f) {
    jnode *cursor = *root;
    size_t i;
    if (!cursor) cursor = *root = container_for(paths[0].kind);
    for (i = 0; i < count; i++) {
        int last = i + 1 == count;
        path_kind next = last ? P_KEY : paths[i + 1].kind;
        if (!type_check(cursor, paths, i, f)) return -1;
        if (paths[i].kind == P_KEY) {
            jnode *existing = find_member(cursor, paths[i].text);
            if (last) {
                if (existing) replace(existing, value);
                else add_member(cursor, paths[i].text, value);
                return 0;
            }
            /* A null member becomes the container, as a null element does below (httpie
             * would drop the whole body there: a bug, not a rule). */
            if (existing && existing->type == J_NULL) replace(existing, container_for(next));
            cursor = existing ? existing : add_member(cursor, paths[i].text, container_for(next));
        } else if (paths[i].kind == P_INDEX) {
            size_t index;
            f->start = paths[i].start;
            f->end = paths[i].end;
            f->has_span = 1;
            if (paths[i].text[0] == '-') { buf_puts(&f->message, "negative indexes are not supported"); return -1; }
            if (strlen(paths[i].text) > 6 || (index = (size_t)strtoul(paths[i].text, NULL, 10)) > NESTED_MAX_INDEX) {
                buf_printf(&f->message, "an index is at most %d (the array would be that many nulls long)",
                           NESTED_MAX_INDEX);
                return -1;
            }
            cursor = element(cursor, index);
            if (last) { replace(cursor, value); return 0; }
            if (cursor->type == J_NULL) replace(cursor, container_for(next));
        } else {
            if (last) { append(cursor, value); return 0; }
            cursor = append(cursor, container_for(next));
        }
    }
    return 0;
}

/* How deep `node` nests (a scalar 0, [] 1, [[1]] 2), counted up to `limit` + 1. */
static long nesting(const jnode *node, long limit) {
    long deepest = 0, d;
    const jnode *c;
    if (node->type != J_ARRAY && node->type != J_OBJECT) return 0;
    if (limit < 1) return 1;
    for (c = node->child; c && deepest < limit; c = c->next)
        if ((d = nesting(c, limit - 1)) > deepest) deepest = d;
    return deepest + 1;
}

int nested_json_set(jnode **root, const char *key, jnode *value, buf *why) {
    size_t len = strlen(key), n, i;
    token *tokens = calloc(len + 1, sizeof *tokens);
    path *paths = calloc(len + 1, sizeof *paths);
    failure f = { { 0 }, 0, 0, 0 };
    long count;
    int status = -1;
    if (!tokens || !paths) { fputs("netlayer: out of memory\n", stderr); exit(EXIT_FAILURE_OTHER); }
    n = tokenize(key, tokens);
    if ((count = parse(tokens, n, paths, &f)) > 0 && count + nesting(value, NESTED_MAX_DEPTH) > NESTED_MAX_DEPTH) {
        buf_printf(&f.message, "the path and its value are more than %d levels deep (the library's limit of %d "
                   "counts the request document around the body)", NESTED_MAX_DEPTH, NESTED_MAX_DEPTH + 1);
        f.has_span = 0;
    } else if (count > 0) status = apply(root, paths, (size_t)count, value, &f);
    if (status != 0) {
        json_free(value);
        buf_printf(why, "%s", f.message.data ? f.message.data : "");
        if (f.has_span) {
            buf_printf(why, "\n    %s\n    ", key);
            for (i = 0; i < f.end && i < len + 1; i++) buf_add(why, i < f.start ? " " : "^", 1);
        }
    }
    for (i = 0; i < n; i++) free(tokens[i].text.data);
    free(tokens);
    free(paths);
    free(f.message.data);
    return status;
}
