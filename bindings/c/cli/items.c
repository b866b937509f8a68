#define _POSIX_C_SOURCE 200809L
/* httpie's request items, turned into members of an endpoint document:
 *
 *   name==value    query parameter (repeat it for a list)
 *   Header:value   header (Header: sends an empty value)
 *   field=value    JSON string field of the body (a form field with --form)
 *   field:=json    raw JSON field: numbers, booleans, arrays, objects
 *   field=@file    string field read from a file; field:=@file.json raw JSON from a file
 *   field@file     a file part: the body becomes multipart/form-data
 *   @file          the file is the body (streamed); @- reads standard input
 *
 * A backslash escapes a separator in the name (a\=b=c sets field "a=b").
 * In the call command, = and := fill the named endpoint's {placeholders} instead. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { IT_QUERY, IT_HEADER, IT_FIELD, IT_RAW, IT_FIELD_FILE, IT_RAW_FILE, IT_PART, IT_BODY } item_kind;

typedef struct item { item_kind kind; char *name; const char *value; const char *arg; } item;

static const struct { const char *sep; item_kind kind; } separators[] = {
    { ":=@", IT_RAW_FILE }, { "=@", IT_FIELD_FILE }, { ":=", IT_RAW }, { "==", IT_QUERY },
    { "=", IT_FIELD }, { ":", IT_HEADER }, { "@", IT_PART },
};

static int usage_error(const char *arg, const char *why) {
    fprintf(stderr, "netlayer: item '%s': %s\n", arg, why);
    return EXIT_USAGE;
}

/* Splits `arg` at its first unescaped separator; the name loses its escapes. */
static int parse_item(const char *arg, item *out) {
    buf name = { 0 };
    const char *p;
    size_t i;
    for (p = arg; *p; p++) {
        if (*p == '\\' && p[1]) { buf_add(&name, ++p, 1); continue; }
        for (i = 0; i < sizeof separators / sizeof separators[0]; i++) {
            size_t n = strlen(separators[i].sep);
            if (strncmp(p, separators[i].sep, n) == 0) {
                out->kind = separators[i].kind;
                out->value = p + n;
                out->arg = arg;
                buf_add(&name, "", 0);
                out->name = name.data;
                if (out->kind == IT_PART && p == arg) out->kind = IT_BODY;
                else if (!name.len) {
                    free(name.data);
                    out->name = NULL;
                    return usage_error(arg, "the name before the separator is empty");
                }
                return 0;
            }
        }
        buf_add(&name, p, 1);
    }
    free(name.data);
    fprintf(stderr, "netlayer: '%s' is not a request item (name==value, Header:value, field=value, "
                    "field:=json, field@file or @file; see netlayer --help)\n", arg);
    return EXIT_USAGE;
}

/* A field's file, read whole: regular and at most CLI_READ_LIMIT bytes. */
static char *read_item_file(const item *it, const char *path, size_t *size) {
    char reason[160];
    char *data = read_whole(path, size, reason, sizeof reason);
    if (!data) {
        buf why = { 0 };
        buf_printf(&why, "cannot read %s: %s", path, reason);
        usage_error(it->arg, why.data);
        free(why.data);
    }
    return data;
}

/* A file the library streams (a part, the body): checked here without opening it,
 * so that a mistake is status 2 naming the item. 0 or EXIT_USAGE. */
static int check_item_file(const item *it, int regular_only) {
    char reason[160];
    int status = 0;
    if (check_streamed_file(it->value, regular_only, reason, sizeof reason) != 0) {
        buf why = { 0 };
        buf_printf(&why, "cannot read %s: %s", it->value, reason);
        status = usage_error(it->arg, why.data);
        free(why.data);
    }
    return status;
}

static void base64(buf *out, const unsigned char *s, size_t n) {
    static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    for (i = 0; i + 2 < n; i += 3) {
        char q[4] = { table[s[i] >> 2], table[((s[i] & 3) << 4) | (s[i + 1] >> 4)],
                      table[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)], table[s[i + 2] & 63] };
        buf_add(out, q, 4);
    }
    if (n - i == 1) {
        char q[4] = { table[s[i] >> 2], table[(s[i] & 3) << 4], '=', '=' };
        buf_add(out, q, 4);
    } else if (n - i == 2) {
        char q[4] = { table[s[i] >> 2], table[((s[i] & 3) << 4) | (s[i + 1] >> 4)], table[(s[i + 1] & 15) << 2], '=' };
        buf_add(out, q, 4);
    }
}

/* A Content-Type for a body file, from its extension; NULL: the library's default. */
static const char *type_for(const char *path) {
    static const struct { const char *ext, *type; } types[] = {
        { ".json", "application/json" }, { ".txt", "text/plain; charset=utf-8" }, { ".xml", "application/xml" },
        { ".html", "text/html; charset=utf-8" }, { ".csv", "text/csv; charset=utf-8" },
    };
    const char *dot = strrchr(path, '.');
    size_t i;
    for (i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcasecmp(dot, types[i].ext) == 0) return types[i].type;
    return NULL;
}

static void member_name(buf *out, int *first, const char *name) {
    if (!*first) buf_add(out, ",", 1);
    *first = 0;
    buf_json_string(out, name, strlen(name));
    buf_add(out, ":", 1);
}

/* The value of a data item, as JSON text in `out`; 0 or an exit status. */
static int field_value(buf *out, const item *it) {
    char error[160];
    size_t size = 0;
    char *data = NULL;
    const char *text = it->value;
    jnode *parsed;
    if (it->kind == IT_FIELD_FILE || it->kind == IT_RAW_FILE) {
        if (!(data = read_item_file(it, it->value, &size))) return EXIT_USAGE;
        text = data;
    } else size = strlen(text);
    if (it->kind == IT_FIELD || it->kind == IT_FIELD_FILE) {
        buf_json_string(out, text, size);
        free(data);
        return 0;
    }
    if (!(parsed = json_parse(text, size, error, sizeof error))) {
        char why[256];
        snprintf(why, sizeof why, "not valid JSON after ':=' (%s)", error);
        free(data);
        return usage_error(it->arg, why);
    }
    json_write(out, parsed, 0, 0);  /* the parsed copy: numbers keep their text */
    json_free(parsed);
    free(data);
    return 0;
}

/* Is there a later item of the same kind group and (case-folded for headers) name? */
static int overridden(const item *items, int count, int i, int headers) {
    int j;
    for (j = i + 1; j < count; j++) {
        if ((items[j].kind == IT_HEADER) != headers) continue;
        if (!headers && (items[j].kind == IT_QUERY || items[j].kind == IT_PART || items[j].kind == IT_BODY)) continue;
        if (headers ? strcasecmp(items[j].name, items[i].name) == 0 : strcmp(items[j].name, items[i].name) == 0) return 1;
    }
    return 0;
}

static int is_data(item_kind k) { return k == IT_FIELD || k == IT_RAW || k == IT_FIELD_FILE || k == IT_RAW_FILE; }

static int emit(buf *out, int *first, item *items, int count, request_spec *spec, int stdin_body, int params_mode) {
    int i, j, n, status, data = 0, parts = 0, body_item = -1, has_type = 0, done;
    const char *type = NULL;
    char *input = NULL;   /* standard input, when it is the body */
    size_t input_size = 0;
    for (i = 0; i < count; i++) {
        data += is_data(items[i].kind);
        parts += items[i].kind == IT_PART;
        if (items[i].kind == IT_HEADER && strcasecmp(items[i].name, "Content-Type") == 0) has_type = 1;
        if (items[i].kind == IT_BODY) {
            if (body_item >= 0) return usage_error(items[i].arg, "only one @file body may be given");
            body_item = i;
        }
    }
    if (body_item >= 0 && (parts || (data && !params_mode)))
        return usage_error(items[body_item].arg, "a body file cannot be mixed with fields (name=value, name@file)");

    if ((body_item >= 0 && strcmp(items[body_item].value, "-") == 0) || (body_item < 0 && stdin_body && !data && !parts)) {
        char error[160], reason[160];
        jnode *json;
        if (!(input = read_whole("-", &input_size, reason, sizeof reason))) {
            fprintf(stderr, "netlayer: cannot read standard input: %s\n", reason);
            return EXIT_USAGE;
        }
        if ((json = json_parse(input, input_size, error, sizeof error)) != NULL) type = "application/json";
        json_free(json);
    }

    for (n = 0, i = 0; i < count; i++) {   /* query: repeated names become lists */
        if (items[i].kind != IT_QUERY) continue;
        for (j = 0, done = 0; j < i; j++) done |= items[j].kind == IT_QUERY && strcmp(items[j].name, items[i].name) == 0;
        if (done) continue;
        if (!n++) { member_name(out, first, "query"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_json_string(out, items[i].name, strlen(items[i].name));
        buf_add(out, ":[", 2);
        for (j = i; j < count; j++)
            if (items[j].kind == IT_QUERY && strcmp(items[j].name, items[i].name) == 0) {
                if (j != i) buf_add(out, ",", 1);
                buf_json_string(out, items[j].value, strlen(items[j].value));
            }
        buf_add(out, "]", 1);
    }
    if (n) buf_add(out, "}", 1);

    for (n = 0, i = 0; i < count; i++) {   /* headers: the last of a name wins */
        if (items[i].kind != IT_HEADER || overridden(items, count, i, 1)) continue;
        if (!n++) { member_name(out, first, "headers"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_json_string(out, items[i].name, strlen(items[i].name));
        buf_add(out, ":", 1);
        buf_json_string(out, items[i].value, strlen(items[i].value));
    }
    if (body_item >= 0 && strcmp(items[body_item].value, "-") != 0) type = type_for(items[body_item].value);
    if (type && !has_type) {
        if (!n++) { member_name(out, first, "headers"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_puts(out, "\"Content-Type\":");
        buf_json_string(out, type, strlen(type));
    }
    if (n) buf_add(out, "}", 1);

    if (data || parts) {   /* fields: a JSON object, a form, multipart parts or path parameters */
        spec->has_body = !params_mode;
        if (parts && !params_mode) { member_name(out, first, "multipart"); buf_add(out, "[", 1); }
        else { member_name(out, first, params_mode ? "params" : "body"); buf_add(out, "{", 1); }
        for (n = 0, i = 0; i < count; i++) {
            if (!(is_data(items[i].kind) || (items[i].kind == IT_PART && !params_mode))) continue;
            if (!parts && overridden(items, count, i, 0)) continue;
            if (n++) buf_add(out, ",", 1);
            if (parts && !params_mode) {
                const char *slash = strrchr(items[i].value, '/');
                buf_puts(out, "{\"name\":");
                buf_json_string(out, items[i].name, strlen(items[i].name));
                if (items[i].kind == IT_PART) {
                    if ((status = check_item_file(&items[i], 1)) != 0) { free(input); return status; }
                    buf_puts(out, ",\"filename\":");
                    buf_json_string(out, slash ? slash + 1 : items[i].value, strlen(slash ? slash + 1 : items[i].value));
                    buf_puts(out, ",\"file\":");
                    buf_json_string(out, items[i].value, strlen(items[i].value));
                } else {
                    if (items[i].kind == IT_RAW || items[i].kind == IT_RAW_FILE)
                        { free(input); return usage_error(items[i].arg, "a multipart field is text: use name=value"); }
                    buf_puts(out, ",\"text\":");
                    if ((status = field_value(out, &items[i])) != 0) { free(input); return status; }
                }
                buf_add(out, "}", 1);
            } else {
                buf_json_string(out, items[i].name, strlen(items[i].name));
                buf_add(out, ":", 1);
                if ((status = field_value(out, &items[i])) != 0) { free(input); return status; }
            }
        }
        buf_add(out, parts && !params_mode ? "]" : "}", 1);
        if (spec->form && !parts && !params_mode) buf_puts(out, ",\"bodyEncoding\":\"form\"");
    }

    if (body_item >= 0 && strcmp(items[body_item].value, "-") != 0) {   /* @file: streamed from disk */
        if ((status = check_item_file(&items[body_item], 0)) != 0) { free(input); return status; }
        member_name(out, first, "uploadFrom");
        buf_json_string(out, items[body_item].value, strlen(items[body_item].value));
        spec->has_body = 1;
    } else if (input && (input_size > 0 || body_item >= 0)) {   /* @- or piped input, sent as its bytes */
        member_name(out, first, "body");
        buf_add(out, "\"", 1);
        base64(out, (const unsigned char *)input, input_size);
        buf_puts(out, "\",\"bodyEncoding\":\"base64\"");
        spec->has_body = 1;
    }
    free(input);
    return 0;
}

int items_to_members(buf *endpoint, int *first, char **args, int count, request_spec *spec, int stdin_body,
                     int params_mode) {
    item *items = calloc((size_t)count + 1, sizeof *items);
    int i, status = 0;
    if (!items) return EXIT_FAILURE_OTHER;
    for (i = 0; i < count && status == 0; i++) status = parse_item(args[i], &items[i]);
    if (status == 0) status = emit(endpoint, first, items, count, spec, stdin_body, params_mode);
    for (i = 0; i < count; i++) free(items[i].name);
    free(items);
    return status;
}
