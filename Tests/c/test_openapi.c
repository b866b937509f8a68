/*
 * test_openapi.c — the config's "openapi" key through the header: the published
 * Swagger Petstore 3 document (YAML) as the client's endpoint table, its operations
 * called with nl_call(), arguments checked before anything is sent, security schemes
 * filled from the config's credentials, responses checked on request, discovery
 * with nl_client_operations(), and broken configs refused with the key named.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

/* "<dir of this file>/../openapi/<name>" (malloc'ed). */
static char *spec_path(const char *name)
{
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');
    if (slash == NULL) return nlt_format("../openapi/%s", name);
    return nlt_format("%.*s/../openapi/%s", (int)(slash - file), file, name);
}

/* A client of the Petstore document whose base is the test server's /petstore/. */
static nl_client *petstore_client(const char *extra_members)
{
    char *spec = spec_path("petstore-openapi.yaml");
    nl_client *c = client_with_config(nlt_format(
        "{\"baseURL\": \"%spetstore/\", \"openapi\": {\"file\": \"%s\", "
        "\"credentials\": {\"api_key\": \"k-123\", \"petstore_auth\": \"tok-9\"}%s%s}}",
        base_url(), spec, extra_members ? ", " : "", extra_members ? extra_members : ""));
    free(spec);
    return c;
}

static json_t *call_json(nl_client *c, const char *name, const char *overlay)
{
    char *text = nl_call(c, name, overlay);
    json_t *j = nlt_parse(text, name);
    nl_free(text);
    return j;
}

/* Requests the test server has seen (the /stats call itself included). */
static long long server_requests(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = request_json(c, "{\"path\": \"stats\"}");
    long long n = (long long)jpath_num(r, "value.requests", -1);
    json_decref(r);
    nl_client_free(c);
    return n;
}

static void test_get_pet_by_id_with_the_api_key(void)
{
    nl_client *c = petstore_client(NULL);
    json_t *r = call_json(c, "getPetById", "{\"params\": {\"petId\": 7}}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.id", 0), 7);
    CHECK_STR_EQ(jpath_str(r, "value.name"), "doggie");
    json_decref(r);

    /* The echo behind the other routes shows what went on the wire. */
    r = call_json(c, "findPetsByTags", "{\"params\": {\"tags\": [\"a b\", \"c\"]}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/petstore/pet/findByTags");
    CHECK_STR_EQ(jpath_str(r, "value.query"), "tags=a%20b&tags=c");
    CHECK_STR_EQ(jpath_str(r, "value.headers.authorization"), "Bearer tok-9");
    json_decref(r);
    r = call_json(c, "getInventory", NULL);
    CHECK_STR_EQ(jpath_str(r, "value.headers.api_key"), "k-123");
    CHECK_MSG(jpath_str(r, "value.headers.authorization") == NULL, "no bearer token where the api key suffices");
    json_decref(r);
    r = call_json(c, "deletePet", "{\"params\": {\"petId\": 3, \"api_key\": \"hdr\"}}");
    CHECK_STR_EQ(jpath_str(r, "value.method"), "DELETE");
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/petstore/pet/3");
    CHECK_STR_EQ(jpath_str(r, "value.headers.api_key"), "hdr");
    json_decref(r);
    nl_client_free(c);
}

static void test_bodies_follow_the_operation_media_types(void)
{
    nl_client *c = petstore_client(NULL);
    json_t *r = call_json(c, "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": [], \"category\": {\"id\": 1, \"name\": \"Dogs\"}}}");
    CHECK_STR_EQ(jpath_str(r, "value.method"), "POST");
    CHECK_STR_EQ(jpath_str(r, "value.headers.content-type"), "application/json");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "{\"name\":\"rex\",\"photoUrls\":[],\"category\":{\"id\":1,\"name\":\"Dogs\"}}");
    json_decref(r);
    r = call_json(c, "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": [\"u\"]}, \"bodyEncoding\": \"form\"}");
    CHECK_STR_EQ(jpath_str(r, "value.headers.content-type"), "application/x-www-form-urlencoded");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "name=rex&photoUrls=u");
    json_decref(r);
    r = call_json(c, "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": []}, \"bodyEncoding\": \"xml\"}");
    CHECK_MSG(jpath_str(r, "value.body") && strstr(jpath_str(r, "value.body"), "<pet><name>rex</name>"), "%s",
              jpath_str(r, "value.body"));
    json_decref(r);
    r = call_json(c, "uploadFile", "{\"params\": {\"petId\": 5, \"additionalMetadata\": \"m\"}, \"body\": \"aGk=\"}");
    CHECK_STR_EQ(jpath_str(r, "value.headers.content-type"), "application/octet-stream");
    CHECK_STR_EQ(jpath_str(r, "value.body"), "hi");
    CHECK_STR_EQ(jpath_str(r, "value.query"), "additionalMetadata=m");
    json_decref(r);
    r = call_json(c, "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": []}, \"bodyEncoding\": \"multipart\"}");
    CHECK_KIND(r, "invalid_request");
    CHECK_MSG(strstr(error_message(r), "multipart"), "%s", error_message(r));
    json_decref(r);
    nl_client_free(c);
}

static void test_wrong_arguments_are_named_and_nothing_is_sent(void)
{
    static const struct { const char *operation, *overlay, *expected; } cases[] = {
        { "getPetById", "{}", "missing required path parameter 'petId'" },
        { "getPetById", "{\"params\": {\"petid\": 7}}", "no parameter 'petid' (did you mean 'petId'?)" },
        { "getPetById", "{\"params\": {\"petId\": \"seven\"}}", "parameter 'petId'" },
        { "findPetsByStatus", "{\"params\": {\"status\": \"lost\"}}", "parameter 'status'" },
        { "addPet", "{}", "missing required body" },
        { "addPet", "{\"body\": {\"name\": \"rex\"}}", "photoUrls" },
        { "addPet", "{\"body\": {\"name\": 5, \"photoUrls\": []}}", "'/name'" },
        { "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": [], \"category\": {\"id\": \"one\"}}}", "'/category/id'" },
        { "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": [], \"status\": \"lost\"}}", "'/status'" },
        { "addPet", "{\"body\": {\"name\": \"rex\", \"photoUrls\": [1]}}", "'/photoUrls/0'" },
        { "getInventory", "{\"body\": {}}", "takes no request body" },
        { "getPetById", "{\"params\": {\"petId\": 1}, \"path\": \"x\"}", "call key 'path' is not allowed" },
        { "getPetByld", "{}", "did you mean 'getPetById'?" },
    };
    nl_client *c = petstore_client(NULL);
    long long before = server_requests();
    size_t i;
    for (i = 0; i < NLT_COUNT(cases); i++) {
        json_t *r = call_json(c, cases[i].operation, cases[i].overlay);
        CHECK_KIND(r, "invalid_request");
        CHECK_MSG(error_message(r) && strstr(error_message(r), cases[i].expected), "%s %s: %s (expected '%s')",
                  cases[i].operation, cases[i].overlay, error_message(r), cases[i].expected);
        json_decref(r);
    }
    /* One more request: the /stats call itself. */
    CHECK_INT_EQ(server_requests(), before + 1);
    nl_client_free(c);
}

static void test_responses_are_checked_when_asked(void)
{
    nl_client *c = petstore_client("\"validateResponses\": true");
    json_t *r = call_json(c, "getPetById", "{\"params\": {\"petId\": 7}}");
    CHECK_OK(r);
    json_decref(r);
    r = call_json(c, "getPetById", "{\"params\": {\"petId\": 666}}");
    CHECK_KIND(r, "parsing");
    CHECK_MSG(strstr(error_message(r), "'/id'") && strstr(error_message(r), "getPetById"), "%s", error_message(r));
    CHECK_INT_EQ(jpath_num(r, "status", 0), 200);
    json_decref(r);
    nl_client_free(c);
    /* Without the switch the same body is a success. */
    c = petstore_client(NULL);
    r = call_json(c, "getPetById", "{\"params\": {\"petId\": 666}}");
    CHECK_OK(r);
    json_decref(r);
    nl_client_free(c);
}

static void test_operations_are_listed(void)
{
    nl_client *c = petstore_client(NULL);
    char *text = nl_client_operations(c);
    json_t *doc = nlt_parse(text, "nl_client_operations");
    json_t *ops = json_object_get(doc, "operations");
    size_t i, found = 0;
    CHECK_INT_EQ(json_array_size(ops), 19);
    for (i = 0; i < json_array_size(ops); i++) {
        json_t *op = json_array_get(ops, i);
        if (strcmp(json_string_value(json_object_get(op, "name")), "getPetById") != 0) continue;
        found++;
        CHECK_STR_EQ(jpath_str(op, "method"), "GET");
        CHECK_STR_EQ(jpath_str(op, "path"), "/pet/{petId}");
        CHECK_STR_EQ(jpath_str(op, "source"), "openapi");
        CHECK_STR_EQ(jpath_str(op, "params.0.name"), "petId");
        CHECK_STR_EQ(jpath_str(op, "params.0.in"), "path");
        CHECK(json_is_true(jpath(op, "params.0.required")));
    }
    CHECK_INT_EQ(found, 1);
    json_decref(doc);
    nl_free(text);
    text = nl_client_operations(NULL);
    CHECK_MSG(text && strstr(text, "invalid_request"), "%s", text ? text : "(null)");
    nl_free(text);
    nl_client_free(c);
}

static void test_inline_document_relative_server_and_named_endpoints_first(void)
{
    nl_client *c = client_with_config(nlt_format(
        "{\"baseURL\": \"%s\", \"endpoints\": {\"ping\": {\"path\": \"json\"}},"
        " \"openapi\": {\"document\": {\"openapi\": \"3.1.0\", \"info\": {\"title\": \"t\", \"version\": \"1\"},"
        "  \"servers\": [{\"url\": \"/echo/{v}\", \"variables\": {\"v\": {\"default\": \"v3\"}}}],"
        "  \"paths\": {\"/items/{id}\": {\"parameters\": [{\"name\": \"id\", \"in\": \"path\", \"required\": true,"
        "     \"schema\": {\"type\": \"array\", \"items\": {\"type\": \"integer\"}}, \"style\": \"label\"}],"
        "   \"get\": {\"operationId\": \"ping\"}, \"put\": {\"parameters\": [{\"name\": \"X-Trace\", \"in\": \"header\","
        "     \"schema\": {\"type\": \"string\"}}, {\"name\": \"sid\", \"in\": \"cookie\", \"schema\": {\"type\": \"string\"}}]}}}}}}",
        base_url()));
    json_t *r = call_json(c, "ping", NULL);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.title"), "Dune");  /* the named endpoint won */
    json_decref(r);
    r = call_json(c, "PUT /items/{id}", "{\"params\": {\"id\": [1, 2], \"X-Trace\": \"t1\", \"sid\": \"s 1\"}}");
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "value.path"), "/echo/v3/items/.1,2");
    CHECK_STR_EQ(jpath_str(r, "value.headers.x-trace"), "t1");
    CHECK_STR_EQ(jpath_str(r, "value.headers.cookie"), "sid=s%201");
    json_decref(r);
    nl_client_free(c);
}

static void test_broken_openapi_configs_are_refused(void)
{
    char *spec = spec_path("petstore-openapi.yaml");
    char *configs[] = {
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": \"/nonexistent/petstore.yaml\"}"),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"document\": {\"swagger\": \"2.0\"}}}"),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"file\": \"%s\", \"credentials\": {\"api-key\": \"k\"}}}", spec),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"file\": \"%s\", \"validateResponse\": true}}", spec),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"document\": \"openapi: [unclosed\"}}"),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": 5}"),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": {\"file\": \"/tmp\"}}"),
        nlt_format("{\"baseURL\": \"http://127.0.0.1:9/\", \"openapi\": \"/dev/zero\"}"),
    };
    static const char *const expected[] = {
        "config key 'openapi': cannot open '/nonexistent/petstore.yaml'", "Swagger 2.0", "did you mean 'api_key'?",
        "did you mean 'validateResponses'?", "line 1", "config key 'openapi'",
        "config key 'openapi' key 'file': '/tmp' is not a regular file", "config key 'openapi': '/dev/zero'",
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(configs); i++) {
        char *error = NULL;
        nl_client *c = nl_client_new(configs[i], &error);
        CHECK_MSG(c == NULL && error && strstr(error, expected[i]), "%s -> %s (expected '%s')", configs[i],
                  error ? error : "(accepted)", expected[i]);
        /* A config that names an unusable file is a bad config: the header's kind for it. */
        CHECK_MSG(error && strstr(error, "\"kind\":\"invalid_request\""), "%s -> %s", configs[i], error ? error : "");
        if (c) nl_client_free(c);
        nl_free(error);
        free(configs[i]);
    }
    free(spec);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_get_pet_by_id_with_the_api_key),
        NLT_TEST(test_bodies_follow_the_operation_media_types),
        NLT_TEST(test_wrong_arguments_are_named_and_nothing_is_sent),
        NLT_TEST(test_responses_are_checked_when_asked),
        NLT_TEST(test_operations_are_listed),
        NLT_TEST(test_inline_document_relative_server_and_named_endpoints_first),
        NLT_TEST(test_broken_openapi_configs_are_refused),
    };
    return nlt_main(argc, argv, tests, NLT_COUNT(tests));
}
