#define _POSIX_C_SOURCE 200809L
/* httpie's request items (https://httpie.io/docs/cli/request-items), turned into
 * members of an endpoint document:
 *
 *   name==value     query parameter (repeated: a list)   name==@file    its value from a file
 *   Header:value    header (repeated: one line, values joined)  Header:@file  from a file
 *   Header:         leave the header out                 Header;        send it empty
 *   field=value     JSON string field (a form field with --form)
 *   field:=json     raw JSON field: numbers, booleans, arrays, objects
 *   field=@file     string field read from a file; field:=@file.json raw JSON from a file
 *   field@file      a file part (field@file;type=MIME): the body becomes multipart/form-data
 *   @file           the file is the body (streamed); @- reads standard input
 *
 * JSON field names are nested JSON paths (nested.c): a[b]=1, a[]=1, a[0]=1, []=1.
 * A form keeps every field of a repeated name (a=1&a=2); a JSON member set twice
 * keeps the last value, as httpie does.
 *
 * A backslash before one of : ; = @ makes it text, not a separator (a\=b=c sets the
 * field "a=b"), in the name or the value; before any other character it stays, for the
 * nested JSON path to read (a\[b\]=c sets "a[b]"). In the call command, = and := fill
 * the named endpoint's {placeholders} instead. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    IT_QUERY, IT_QUERY_FILE, IT_HEADER, IT_HEADER_EMPTY, IT_HEADER_FILE,
    IT_FIELD, IT_FIELD_FILE, IT_RAW, IT_RAW_FILE, IT_PART, IT_BODY
} item_kind;

typedef struct item {
    item_kind kind;
    char *name;
    char *value;        /* the text after the separator, or a file's bytes once read */
    size_t value_len;
    const char *arg;
} item;

/* Longest first: at one position the longest separator wins, as in httpie. */
static const struct { const char *sep; item_kind kind; } separators[] = {
    { ":=@", IT_RAW_FILE }, { "==@", IT_QUERY_FILE }, { ":=", IT_RAW }, { "==", IT_QUERY }, { "=@", IT_FIELD_FILE },
    { ":@", IT_HEADER_FILE }, { "=", IT_FIELD }, { ":", IT_HEADER }, { ";", IT_HEADER_EMPTY }, { "@", IT_PART },
};

/* What `Header:` leaves out but netlayer sends anyway (see unset_header). */
static const char *const library_headers[] = { "Host", "Content-Length", "Transfer-Encoding" };

/* The most header items one request takes: servers refuse far fewer header lines
 * (100 is common), and the library's work on a request's headers grows faster than
 * their number, so thousands would only make the command slow. */
#define MAX_HEADER_ITEMS 1000

static const char JSON_ACCEPT[] = "application/json, */*;q=0.5";   /* httpie's, for JSON requests */

static int usage_error(const char *arg, const char *why) {
    report_arg("netlayer: item '", arg, "': ");
    report_arg("", why, "\n");
    return EXIT_USAGE;
}

static int is_header(item_kind k) { return k == IT_HEADER || k == IT_HEADER_EMPTY || k == IT_HEADER_FILE; }
static int is_data(item_kind k) { return k == IT_FIELD || k == IT_RAW || k == IT_FIELD_FILE || k == IT_RAW_FILE; }
static int is_raw(item_kind k) { return k == IT_RAW || k == IT_RAW_FILE; }

/* Splits `arg` at its first separator outside a backslash escape; the name and the
 * value lose the escapes of separator characters. */
/* Gives `out` the item's text `arg` and its name and value, each NUL-terminated. */
static void finish_item(item *out, const char *arg, buf *name, buf *value) {
    buf_add(name, "", 0);
    buf_add(value, "", 0);
    out->name = name->data;
    out->value = value->data;
    out->value_len = value->len;
    out->arg = arg;
}

/* An -H header, "Name: value" or "Name;", as curl reads it (main.c checked the name). */
static int parse_header_option(const char *arg, item *out) {
    const char *colon = strchr(arg, ':'), *value;
    buf name = { 0 }, text = { 0 };
    if (colon) {
        buf_add(&name, arg, (size_t)(colon - arg));
        for (value = colon + 1; *value == ' ' || *value == '\t'; value++) {}
        buf_add(&text, value, strlen(value));
        out->kind = IT_HEADER;
    } else {
        buf_add(&name, arg, strlen(arg) - 1);  /* "Name;" */
        out->kind = IT_HEADER_EMPTY;
    }
    finish_item(out, arg, &name, &text);
    return 0;
}

static int parse_item(const char *arg, item *out) {
    buf name = { 0 }, value = { 0 }, *text = &name;
    const char *p = arg;
    size_t i;
    int found = 0;
    while (*p) {
        if (*p == '\\') {
            if (p[1] && strchr(":;=@", p[1])) buf_add(text, p + 1, 1);
            else buf_add(text, p, p[1] ? 2 : 1);
            p += p[1] ? 2 : 1;
            continue;
        }
        for (i = 0; !found && i < sizeof separators / sizeof separators[0]; i++)
            if (strncmp(p, separators[i].sep, strlen(separators[i].sep)) == 0) break;
        if (!found && i < sizeof separators / sizeof separators[0]) {
            out->kind = separators[i].kind;
            found = 1;
            text = &value;
            p += strlen(separators[i].sep);
            continue;
        }
        buf_add(text, p++, 1);
    }
    finish_item(out, arg, &name, &value);
    if (!found) {
        report_arg("netlayer: '", arg, "' is not a request item (name==value, Header:value, Header;, field=value, "
                                       "field:=json, field@file or @file; see netlayer --help)\n");
        return EXIT_USAGE;
    }
    if (out->kind == IT_PART && !name.len) out->kind = IT_BODY;
    if (is_header(out->kind) && !name.len) return usage_error(arg, "the header name before the separator is empty");
    if (out->kind == IT_HEADER_EMPTY && value.len)
        return usage_error(arg, "'Header;' sends an empty header and takes no value (a value: 'Header:value')");
    return 0;
}

/* A file read whole for an item: regular and at most CLI_READ_LIMIT bytes. */
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

/* The items whose value is a file's text (==@, :@, =@, :=@) get it, read now:
 * query and header values without their trailing newlines, as httpie sends them. */
static int read_values(item *it) {
    size_t size = 0;
    char *data;
    if (it->kind != IT_QUERY_FILE && it->kind != IT_HEADER_FILE && it->kind != IT_FIELD_FILE && it->kind != IT_RAW_FILE)
        return 0;
    if (!(data = read_item_file(it, it->value, &size))) return EXIT_USAGE;
    if (it->kind == IT_QUERY_FILE || it->kind == IT_HEADER_FILE)
        while (size && data[size - 1] == '\n') data[--size] = '\0';
    free(it->value);
    it->value = data;
    it->value_len = size;
    return 0;
}

/* Is `s` (`n` bytes) UTF-8 (RFC 3629: no overlong forms, surrogates or code points
 * above U+10FFFF)? The endpoint document is JSON, which carries nothing else. */
static int utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i], need, cp, k;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) need = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF) need = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4) need = 3, cp = c & 0x07;
        else return 0;
        if (n - i <= need) return 0;
        for (k = 1; k <= need; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += need + 1;
    }
    return 1;
}

/* Names and values are text in the endpoint document: bytes that are not UTF-8 are
 * refused here, naming the item, rather than as a document the library cannot read. */
static int check_text(const item *it) {
    if (!utf8_valid((const unsigned char *)it->name, strlen(it->name)))
        return usage_error(it->arg, "the name is not UTF-8 text");
    if (utf8_valid((const unsigned char *)it->value, it->value_len)) return 0;
    if (it->kind == IT_FIELD_FILE || it->kind == IT_RAW_FILE || it->kind == IT_QUERY_FILE || it->kind == IT_HEADER_FILE)
        return usage_error(it->arg, "the file is not UTF-8 text (a field holds text; a file part, name@file, "
                                    "or a body file, @file, sends any bytes)");
    return usage_error(it->arg, "the value is not UTF-8 text");
}

/* A file the library streams (a part, the body): checked here without opening it,
 * so that a mistake is status 2 naming the item. 0 or EXIT_USAGE. */
static int check_item_file(const item *it, const char *path, int regular_only) {
    char reason[160];
    int status = 0;
    if (check_streamed_file(path, regular_only, reason, sizeof reason) != 0) {
        buf why = { 0 };
        buf_printf(&why, "cannot read %s: %s", path, reason);
        status = usage_error(it->arg, why.data);
        free(why.data);
    }
    return status;
}

void buf_base64(buf *out, const unsigned char *s, size_t n) {
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

/* The value of a data item as a new node: a string, or the JSON after := (read with
 * the CLI's reader, so numbers keep their text). NULL after printing why. */
static jnode *field_node(const item *it) {
    char error[160], why[256];
    jnode *parsed;
    if (!is_raw(it->kind)) return json_new(J_STRING, it->value, it->value_len);
    if (!(parsed = json_parse(it->value, it->value_len, error, sizeof error))) {
        snprintf(why, sizeof why, "not valid JSON after ':=' (%s)", error);
        usage_error(it->arg, why);
    }
    return parsed;
}

/* A form or multipart field's text: a string as it is, a number or boolean after :=
 * as its JSON text (1.50, true); null, arrays and objects have no form. */
static jnode *form_text(const item *it) {
    jnode *node = field_node(it);
    if (node && (node->type == J_NULL || node->type == J_ARRAY || node->type == J_OBJECT)) {
        json_free(node);
        usage_error(it->arg, "a form field is text: ':=' takes a number, a boolean or a string here, "
                             "not null, an array or an object");
        return NULL;
    }
    if (node) node->type = J_STRING;
    return node;
}

static int is_query(item_kind k) { return k == IT_QUERY || k == IT_QUERY_FILE; }

/* The items of one class (headers, query, data) linked by name: next[i] is the next
 * item of the class with the same name (-1: none), first[i] is set for the first of
 * each name. One sort instead of a scan per item keeps many items linear-logarithmic. */
typedef struct name_links { int *next; char *first; } name_links;

typedef struct named { const char *name; int index; } named;

static int by_name(const void *a, const void *b) {
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->index - y->index;
}

static int by_name_ignoring_case(const void *a, const void *b) {
    const named *x = a, *y = b;
    int c = strcasecmp(x->name, y->name);
    return c ? c : x->index - y->index;
}

static void unlink_names(name_links *links) {
    free(links->next);
    free(links->first);
}

/* 0, or EXIT_FAILURE_OTHER when out of memory. */
static int link_names(name_links *links, const item *items, int count, int (*in_class)(item_kind), int ignore_case) {
    named *sorted = malloc(((size_t)count + 1) * sizeof *sorted);
    int i, n = 0;
    links->next = malloc(((size_t)count + 1) * sizeof *links->next);
    links->first = calloc((size_t)count + 1, 1);
    if (!sorted || !links->next || !links->first) { free(sorted); unlink_names(links); return EXIT_FAILURE_OTHER; }
    for (i = 0; i < count; i++) {
        links->next[i] = -1;
        if (in_class(items[i].kind)) { sorted[n].name = items[i].name; sorted[n++].index = i; }
    }
    qsort(sorted, (size_t)n, sizeof *sorted, ignore_case ? by_name_ignoring_case : by_name);
    for (i = 0; i < n; i++) {
        if (i > 0 && (ignore_case ? strcasecmp : strcmp)(sorted[i - 1].name, sorted[i].name) == 0)
            links->next[sorted[i - 1].index] = sorted[i].index;
        else links->first[sorted[i].index] = 1;
    }
    free(sorted);
    return 0;
}

/* Does the config (or the called endpoint of it) send header `name` on every request? */
static int config_sends(const request_spec *spec, const char *name) {
    const jnode *sources[2], *m;
    int s;
    sources[0] = json_get(spec->config, "headers");
    sources[1] = spec->call_name ? json_get(json_get(json_get(spec->config, "endpoints"), spec->call_name), "headers")
                                 : NULL;
    for (s = 0; s < 2; s++)
        for (m = sources[s] && sources[s]->type == J_OBJECT ? sources[s]->child : NULL; m; m = m->next)
            if (strcasecmp(m->key, name) == 0) return 1;
    return 0;
}

/* `Header:` (httpie: unset the header). What netlayer would send by itself is left
 * out through the config or the endpoint where it can be; what it cannot leave out is
 * refused, pointing at `Header;`. 0 or EXIT_USAGE. */
static int unset_header(const item *it, request_spec *spec, int sends_body) {
    char why[320];
    size_t i;
    for (i = 0; i < sizeof library_headers / sizeof library_headers[0]; i++)
        if (strcasecmp(it->name, library_headers[i]) == 0) {
            snprintf(why, sizeof why, "netlayer cannot leave out %s: the library writes it from the URL and the body",
                     library_headers[i]);
            return usage_error(it->arg, why);
        }
    if (spec->config && config_sends(spec, it->name)) {
        snprintf(why, sizeof why, "the config sends %s with every request, and an item cannot take it away; "
                                  "'%s;' sends it empty", it->name, it->name);
        return usage_error(it->arg, why);
    }
    if (strcasecmp(it->name, "Accept") == 0)
        return usage_error(it->arg, "netlayer cannot leave out Accept (libcurl sends 'Accept: */*' when no Accept "
                                    "is given); 'Accept;' sends it empty, 'Accept:TYPE' another value");
    if (strcasecmp(it->name, "Content-Type") == 0 && sends_body)
        return usage_error(it->arg, "a body always goes with a Content-Type; 'Content-Type;' sends it empty, "
                                    "'Content-Type:TYPE' another type");
    if (strcasecmp(it->name, "User-Agent") == 0) spec->no_user_agent = 1;
    if (strcasecmp(it->name, "Accept-Encoding") == 0) spec->no_compression = 1;
    if (strcasecmp(it->name, "Authorization") == 0 && !spec->has_auth) spec->no_auth = 1;
    return 0;
}

typedef struct header { const item *first; int unset; buf value; } header;

/* One more `name` item in a header's events. */
static void merge_header(header *h, const item *it) {
    if (it->kind == IT_HEADER && !it->value_len) {
        h->unset = 1;
        h->value.len = 0;
        return;
    }
    h->unset = 0;
    if (!h->value.data) buf_add(&h->value, "", 0);
    if (it->value_len) {
        if (h->value.len) buf_puts(&h->value, strcasecmp(it->name, "Cookie") == 0 ? "; " : ", ");
        buf_add(&h->value, it->value, it->value_len);
    }
}

/* Header items, merged by name in httpie's order of events: `Name:` unsets what came
 * before, a later value sets it again; values of one name join in one line (RFC 9110
 * section 5.3: the same as one line each; Cookie pairs join with "; "). */
static int emit_headers(buf *out, int *first, const item *items, int count, request_spec *spec, int sends_body,
                        const char *type, int json_accept) {
    header *headers = calloc((size_t)count + 1, sizeof *headers);
    name_links links;
    int i, j, n = 0, written = 0, status = 0, has_type = 0, has_accept = 0;
    if (!headers || link_names(&links, items, count, is_header, 1) != 0) { free(headers); return EXIT_FAILURE_OTHER; }
    for (i = 0; i < count; i++) {   /* in the order names first appear */
        if (!links.first[i]) continue;
        headers[n].first = &items[i];
        for (j = i; j >= 0; j = links.next[j]) merge_header(&headers[n], &items[j]);
        n++;
    }
    unlink_names(&links);
    for (j = 0; j < n && status == 0; j++) {
        has_type |= strcasecmp(headers[j].first->name, "Content-Type") == 0;
        has_accept |= strcasecmp(headers[j].first->name, "Accept") == 0;
        if (headers[j].unset) { status = unset_header(headers[j].first, spec, sends_body); continue; }
        if (!written++) { member_name(out, first, "headers"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_json_string(out, headers[j].first->name, strlen(headers[j].first->name));
        buf_add(out, ":", 1);
        buf_json_string(out, headers[j].value.data, headers[j].value.len);
    }
    if (status == 0 && type && !has_type) {
        if (!written++) { member_name(out, first, "headers"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_puts(out, "\"Content-Type\":");
        buf_json_string(out, type, strlen(type));
    }
    if (status == 0 && json_accept && !has_accept && !(spec->config && config_sends(spec, "Accept"))) {
        if (!written++) { member_name(out, first, "headers"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_puts(out, "\"Accept\":");
        buf_json_string(out, JSON_ACCEPT, strlen(JSON_ACCEPT));
    }
    if (written) buf_add(out, "}", 1);
    if (status == 0 && spec->no_auth) { member_name(out, first, "auth"); buf_puts(out, "{}"); }
    for (j = 0; j < n; j++) free(headers[j].value.data);
    free(headers);
    return status;
}

/* Query items: repeated names become lists, in the order names first appear. */
static int emit_query(buf *out, int *first, const item *items, int count) {
    name_links links;
    int i, j, n = 0;
    if (link_names(&links, items, count, is_query, 0) != 0) return EXIT_FAILURE_OTHER;
    for (i = 0; i < count; i++) {
        if (!links.first[i]) continue;
        if (!n++) { member_name(out, first, "query"); buf_add(out, "{", 1); } else buf_add(out, ",", 1);
        buf_json_string(out, items[i].name, strlen(items[i].name));
        buf_add(out, ":[", 2);
        for (j = i; j >= 0; j = links.next[j]) {
            if (j != i) buf_add(out, ",", 1);
            buf_json_string(out, items[j].value, items[j].value_len);
        }
        buf_add(out, "]", 1);
    }
    if (n) buf_add(out, "}", 1);
    unlink_names(&links);
    return 0;
}

/* A JSON body: every data item applied, in order, to one value by its nested path. */
static int emit_json_body(buf *out, int *first, const item *items, int count) {
    jnode *root = NULL, *value;
    buf why = { 0 };
    int i;
    for (i = 0; i < count; i++) {
        if (!is_data(items[i].kind)) continue;
        if (!(value = field_node(&items[i]))) { json_free(root); return EXIT_USAGE; }
        if (nested_json_set(&root, items[i].name, value, &why) != 0) {
            usage_error(items[i].arg, why.data);
            free(why.data);
            json_free(root);
            return EXIT_USAGE;
        }
    }
    member_name(out, first, "body");
    json_write(out, root, 0, 0);
    json_free(root);
    return 0;
}

/* A form body: names as written; a repeated name keeps every value (a list), in the
 * order names first appear, as httpie's a=1&a=2. */
static int emit_form_body(buf *out, int *first, const item *items, int count) {
    name_links links;
    int i, j, n = 0, values;
    jnode *text;
    if (link_names(&links, items, count, is_data, 0) != 0) return EXIT_FAILURE_OTHER;
    member_name(out, first, "body");
    buf_add(out, "{", 1);
    for (i = 0; i < count; i++) {
        if (!links.first[i]) continue;
        if (n++) buf_add(out, ",", 1);
        buf_json_string(out, items[i].name, strlen(items[i].name));
        buf_add(out, links.next[i] >= 0 ? ":[" : ":", links.next[i] >= 0 ? 2 : 1);
        for (j = i, values = 0; j >= 0; j = links.next[j]) {
            if (!(text = form_text(&items[j]))) { unlink_names(&links); return EXIT_USAGE; }
            if (values++) buf_add(out, ",", 1);
            json_write(out, text, 0, 0);
            json_free(text);
        }
        if (values > 1) buf_add(out, "]", 1);
    }
    buf_puts(out, "},\"bodyEncoding\":\"form\"");
    unlink_names(&links);
    return 0;
}

/* A multipart body: text parts and file parts (name@file, name@file;type=MIME) in order. */
static int emit_multipart(buf *out, int *first, const item *items, int count) {
    int i, n = 0, status;
    member_name(out, first, "multipart");
    buf_add(out, "[", 1);
    for (i = 0; i < count; i++) {
        const item *it = &items[i];
        if (!is_data(it->kind) && it->kind != IT_PART) continue;
        if (n++) buf_add(out, ",", 1);
        buf_puts(out, "{\"name\":");
        buf_json_string(out, it->name, strlen(it->name));
        if (it->kind == IT_PART) {
            const char *typed = strstr(it->value, ";type="), *slash;
            char *path = strndup(it->value, typed ? (size_t)(typed - it->value) : strlen(it->value));
            if (!path) return EXIT_FAILURE_OTHER;
            if ((status = check_item_file(it, path, 1)) != 0) { free(path); return status; }
            slash = strrchr(path, '/');
            buf_puts(out, ",\"filename\":");
            buf_json_string(out, slash ? slash + 1 : path, strlen(slash ? slash + 1 : path));
            buf_puts(out, ",\"file\":");
            buf_json_string(out, path, strlen(path));
            if (typed) {
                buf_puts(out, ",\"contentType\":");
                buf_json_string(out, typed + 6, strlen(typed + 6));
            }
            free(path);
        } else {
            jnode *text = form_text(it);
            if (!text) return EXIT_USAGE;
            buf_puts(out, ",\"text\":");
            json_write(out, text, 0, 0);
            json_free(text);
        }
        buf_add(out, "}", 1);
    }
    buf_add(out, "]", 1);
    return 0;
}

/* call: = and := items fill the endpoint's {placeholders}; the last of a name wins. */
static int emit_params(buf *out, int *first, const item *items, int count) {
    name_links links;
    int i, n = 0;
    jnode *value;
    if (link_names(&links, items, count, is_data, 0) != 0) return EXIT_FAILURE_OTHER;
    member_name(out, first, "params");
    buf_add(out, "{", 1);
    for (i = 0; i < count; i++) {
        if (!is_data(items[i].kind) || links.next[i] >= 0) continue;   /* a later item of the name wins */
        if (!(value = field_node(&items[i]))) { unlink_names(&links); return EXIT_USAGE; }
        if (n++) buf_add(out, ",", 1);
        buf_json_string(out, items[i].name, strlen(items[i].name));
        buf_add(out, ":", 1);
        json_write(out, value, 0, 0);
        json_free(value);
    }
    buf_add(out, "}", 1);
    unlink_names(&links);
    return 0;
}

static int emit(buf *out, int *first, item *items, int count, request_spec *spec, int stdin_body, int params_mode) {
    int i, status, data = 0, parts = 0, headers = 0, body_item = -1, sends_body;
    const char *type = NULL;
    char *input = NULL;   /* standard input, when it is the body */
    size_t input_size = 0;
    for (i = 0; i < count; i++) {
        if (is_header(items[i].kind) && ++headers > MAX_HEADER_ITEMS)
            return usage_error(items[i].arg, "too many header items: a request takes at most 1000");
        data += is_data(items[i].kind);
        parts += items[i].kind == IT_PART;
        if (items[i].kind == IT_BODY) {
            if (body_item >= 0) return usage_error(items[i].arg, "only one @file body may be given");
            body_item = i;
        }
    }
    if (body_item >= 0 && (parts || (data && !params_mode)))
        return usage_error(items[body_item].arg, "a body file cannot be mixed with fields (name=value, name@file)");

    if (body_item >= 0 && strcmp(items[body_item].value, "-") == 0 && spec->ignore_stdin)
        return usage_error(items[body_item].arg, "reads standard input, which --ignore-stdin forbids");
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
    if (body_item >= 0 && strcmp(items[body_item].value, "-") != 0) type = type_for(items[body_item].value);
    sends_body = (!params_mode && (data || parts)) || body_item >= 0 || (input && input_size > 0);

    if ((status = emit_query(out, first, items, count)) != 0) { free(input); return status; }
    status = emit_headers(out, first, items, count, spec, sends_body, type,
                          !params_mode && sends_body && !spec->form && !parts);
    if (status == 0 && (data || parts)) {
        spec->has_body = !params_mode;
        if (params_mode) status = emit_params(out, first, items, count);
        else if (parts) status = emit_multipart(out, first, items, count);
        else if (spec->form) status = emit_form_body(out, first, items, count);
        else status = emit_json_body(out, first, items, count);
    }
    if (status != 0) { free(input); return status; }

    if (body_item >= 0 && strcmp(items[body_item].value, "-") != 0) {   /* @file: streamed from disk */
        if ((status = check_item_file(&items[body_item], items[body_item].value, 0)) != 0) { free(input); return status; }
        member_name(out, first, "uploadFrom");
        buf_json_string(out, items[body_item].value, strlen(items[body_item].value));
        spec->has_body = 1;
    } else if (input && (input_size > 0 || body_item >= 0)) {   /* @- or piped input, sent as its bytes */
        member_name(out, first, "body");
        buf_add(out, "\"", 1);
        buf_base64(out, (const unsigned char *)input, input_size);
        buf_puts(out, "\",\"bodyEncoding\":\"base64\"");
        spec->has_body = 1;
    }
    free(input);
    return 0;
}

int items_to_members(buf *endpoint, int *first, char **args, int count, request_spec *spec, int stdin_body,
                     int params_mode, const unsigned char *literal) {
    item *items = calloc((size_t)count + 1, sizeof *items);
    int i, status = 0;
    if (!items) return EXIT_FAILURE_OTHER;
    for (i = 0; i < count && status == 0; i++)
        status = literal && literal[i] ? parse_header_option(args[i], &items[i]) : parse_item(args[i], &items[i]);
    for (i = 0; i < count && status == 0; i++) status = read_values(&items[i]);
    for (i = 0; i < count && status == 0; i++) status = check_text(&items[i]);
    if (status == 0) status = emit(endpoint, first, items, count, spec, stdin_body, params_mode);
    for (i = 0; i < count; i++) {
        free(items[i].name);
        free(items[i].value);
    }
    free(items);
    return status;
}
