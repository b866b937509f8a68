/*
 * ops.c — `netlayer ops`: what `netlayer call` can call, from nl_client_operations().
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <netlayer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "integer", "array of string", "object": a parameter's schema in a few words. */
static void describe_schema(const jnode *schema, buf *out) {
    const char *type = json_string(schema, "type"), *ref = json_string(schema, "$ref");
    if (type && strcmp(type, "array") == 0) {
        buf_puts(out, "array of ");
        describe_schema(json_get(schema, "items"), out);
    } else if (type) buf_puts(out, type);
    else if (ref && strrchr(ref, '/')) buf_puts(out, strrchr(ref, '/') + 1);
    else buf_puts(out, "any");
}

static void print_operation(const jnode *op) {
    const jnode *params = json_get(op, "params"), *body = json_get(op, "body"), *p;
    const char *summary = json_string(op, "summary");
    printf("%s  %s %s%s%s\n", json_string(op, "name"), json_string(op, "method"), json_string(op, "path"),
           summary ? "  — " : "", summary ? summary : "");
    for (p = params ? params->child : NULL; p; p = p->next) {
        const jnode *required = json_get(p, "required");
        buf schema = { 0 };
        describe_schema(json_get(p, "schema"), &schema);
        printf("    %s  (%s, %s%s)\n", json_string(p, "name"), json_string(p, "in"),
               required && strcmp(required->text, "true") == 0 ? "required, " : "", schema.data ? schema.data : "any");
        free(schema.data);
    }
    if (body && body->type == J_OBJECT) {
        const jnode *types = json_get(body, "contentTypes"), *required = json_get(body, "required"), *t;
        buf schema = { 0 };
        describe_schema(json_get(body, "schema"), &schema);
        printf("    --body  (%s%s;", required && strcmp(required->text, "true") == 0 ? "required, " : "",
               schema.data ? schema.data : "any");
        for (t = types ? types->child : NULL; t; t = t->next) printf(" %s", t->text);
        puts(")");
        free(schema.data);
    }
}

int list_operations(const char *config_json, const run_options *o) {
    char *error = NULL, message[128], *text;
    nl_client *client = nl_client_new(config_json, &error);
    jnode *doc, *ops, *op;
    if (!client) {
        jnode *failure = error ? json_parse(error, strlen(error), message, sizeof message) : NULL;
        fprintf(stderr, "netlayer: invalid config: %s\n",
                json_string(json_get(failure, "error"), "message") ? json_string(json_get(failure, "error"), "message") : "?");
        json_free(failure);
        nl_free(error);
        return EXIT_USAGE;
    }
    text = nl_client_operations(client);
    nl_client_free(client);
    if (!text) { fputs("netlayer: out of memory\n", stderr); return EXIT_FAILURE_OTHER; }
    doc = json_parse(text, strlen(text), message, sizeof message);
    ops = json_get(doc, "operations");
    if (o->result_document || !ops) {
        buf out = { 0 };
        if (o->pretty && doc) json_write(&out, doc, 1, 0);
        puts(out.data ? out.data : text);
        free(out.data);
    } else {
        for (op = ops->child; op; op = op->next) print_operation(op);
    }
    json_free(doc);
    nl_free(text);
    return ops ? EXIT_OK : EXIT_FAILURE_OTHER;
}
