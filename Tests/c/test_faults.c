/*
 * test_faults.c — hostile and broken servers (docs: reliability-notes rows 3, 8, 9,
 * 11, 14-19): each fault yields the exact error kind within a bounded wall time,
 * and the same client still works for a normal request right after it.
 *
 * The faults come from Tests/server/faulty.py (one mode per path on one port),
 * which this test starts itself; the normal requests go to the regular test
 * server (NETLAYER_TEST_URL, run through Tests/server/with_server.py).
 *
 * Under valgrind (NETLAYER_TEST_SLOW set) time bounds widen and RSS bounds are
 * not checked (valgrind's own memory dominates).
 */
#define _POSIX_C_SOURCE 200809L
#define NLT_TEST_TIMEOUT 120
#include "harness.h"
#include "fault_helpers.h"
#include "async_one.h"

static fh_server g_faulty = { -1, -1, 0, "" };

/* The faulty server's port (started on first use). */
static int faulty_port(void)
{
    if (g_faulty.port <= 0) {
        REQUIRE_MSG(fh_server_start(&g_faulty, "faulty.py", NULL), "cannot start faulty.py");
    }
    return g_faulty.port;
}

/* Time bounds in ms, widened under valgrind. */
static double bound_ms(double ms)
{
    return fh_slow_mode() ? ms * 4.0 + 4000.0 : ms;
}

/* A request to the faulty server: {"path": "http://127.0.0.1:P/<mode>", "isFullPath": true,
 * <extra members>}; `*elapsed_ms` gets the wall time. */
static json_t *fault_request(nl_client *c, const char *mode, const char *extra, double *elapsed_ms)
{
    double t0 = now_ms();
    json_t *r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/%s\", \"isFullPath\": true%s%s}",
                             faulty_port(), mode, extra ? ", " : "", extra ? extra : "");
    if (elapsed_ms != NULL)
        *elapsed_ms = now_ms() - t0;
    return r;
}

/* The next normal request on the same client still works. */
static void check_client_still_works(nl_client *c)
{
    json_t *r = request_json(c, "{\"path\": \"json\"}");
    CHECK_OK(r);
    CHECK_INT_EQ(jpath_num(r, "value.id", -1), 1);
    json_decref(r);
}

/* How many requests faulty.py saw for `path` (from its /stats). */
static long faulty_count(const char *path)
{
    nl_client *c = client_for(NULL);
    json_t *r = fault_request(c, "stats", NULL, NULL);
    json_t *n;
    long v = -1;
    CHECK_OK(r);
    n = json_object_get(json_object_get(json_object_get(r, "value"), "requests"), path);
    v = json_is_integer(n) ? (long)json_integer_value(n) : 0;
    json_decref(r);
    nl_client_free(c);
    return v;
}

static long faulty_tls_hellos(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = fault_request(c, "stats", NULL, NULL);
    long v;
    CHECK_OK(r);
    v = (long)jpath_num(r, "value.tlsHellos", -1);
    json_decref(r);
    nl_client_free(c);
    return v;
}

/* A fault that must end in error kind `kind` within `max_ms`. */
static void expect_fault(const char *mode, const char *config_extra, const char *endpoint_extra,
                         const char *kind, double max_ms)
{
    nl_client *c = client_for(config_extra);
    double elapsed;
    json_t *r = fault_request(c, mode, endpoint_extra, &elapsed);
    CHECK_KIND(r, kind);
    CHECK_MSG(elapsed <= bound_ms(max_ms), "%s took %.0f ms (bound %.0f ms)", mode, elapsed,
              bound_ms(max_ms));
    nlt_note("%s -> %s (%s) in %.0f ms", mode, result_ok(r) ? "ok" : error_kind(r), error_message(r),
             elapsed);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- connection level (rows 14, 16) -------------------------------------------------- */

static void test_connection_refused_is_not_connected_fast(void)
{
    nl_client *c = client_for(NULL);
    double t0 = now_ms(), elapsed;
    json_t *r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/json\", \"isFullPath\": true}",
                             fh_closed_port());
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "not_connected");
    CHECK_MSG(elapsed <= bound_ms(2000), "refused took %.0f ms", elapsed);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_dns_failure_of_invalid_host_is_not_connected(void)
{
    nl_client *c = client_for(NULL);
    double t0 = now_ms(), elapsed;
    json_t *r = request_doc(c, "{\"path\": \"http://nothing.invalid/\", \"isFullPath\": true}");
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "not_connected");
    CHECK_MSG(elapsed <= bound_ms(10000), "DNS failure took %.0f ms", elapsed);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_server_that_never_answers_times_out(void)
{
    nl_client *c = client_for("\"timeout\": 1");
    double elapsed;
    json_t *r = fault_request(c, "never-answer", NULL, &elapsed);
    CHECK_KIND(r, "timeout");
    CHECK_MSG(elapsed >= 900 && elapsed <= bound_ms(3000), "timeout 1 s fired after %.0f ms", elapsed);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_slowloris_body_is_cut_by_the_total_timeout(void)
{
    nl_client *c = client_for("\"timeout\": 1.5");
    double elapsed;
    json_t *r = fault_request(c, "slowloris", NULL, &elapsed);
    CHECK_KIND(r, "timeout");
    CHECK_MSG(elapsed >= 1400 && elapsed <= bound_ms(3500), "timeout 1.5 s fired after %.0f ms",
              elapsed);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_listener_that_never_accepts_hits_the_connect_timeout(void)
{
    nl_client *c = client_for("\"connectTimeout\": 0.5, \"timeout\": 5");
    fh_blackhole bh;
    double t0, elapsed;
    json_t *r;
    if (!fh_blackhole_open(&bh)) {
        nlt_note("connects to a full backlog do not hang on this kernel; skipping");
        fh_blackhole_close(&bh);
        nl_client_free(c);
        return;
    }
    t0 = now_ms();
    r = request_json(c, "{\"path\": \"http://127.0.0.1:%d/json\", \"isFullPath\": true}", bh.port);
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "timeout");
    CHECK_MSG(elapsed >= 400 && elapsed <= bound_ms(2500), "connectTimeout 0.5 s fired after %.0f ms",
              elapsed);
    json_decref(r);
    fh_blackhole_close(&bh);
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- framing (rows 11, 15) ------------------------------------------------------------- */

static void test_close_mid_body_is_protocol(void)
{
    expect_fault("close-mid-body", "\"timeout\": 10", NULL, "protocol", 3000);
}

static void test_short_content_length_is_protocol(void)
{
    expect_fault("short-length", "\"timeout\": 10", NULL, "protocol", 3000);
}

static void test_chunked_without_final_chunk_is_protocol(void)
{
    expect_fault("chunked-no-final", "\"timeout\": 10", NULL, "protocol", 3000);
}

static void test_bad_chunk_size_is_protocol(void)
{
    expect_fault("bad-chunk-size", "\"timeout\": 10", NULL, "protocol", 3000);
}

static void test_bad_status_line_is_protocol(void)
{
    expect_fault("bad-status-line", "\"timeout\": 10", NULL, "protocol", 3000);
}

/* reliability-notes row 11: bare LF framing is a typed protocol error, never success. */
static void test_bare_lf_response_is_protocol(void)
{
    expect_fault("bare-lf", "\"timeout\": 10", NULL, "protocol", 3000);
}

/* RFC 9112 6.3: differing Content-Length values are unrecoverable; never success. */
static void test_conflicting_content_lengths_are_protocol(void)
{
    expect_fault("conflicting-length", "\"timeout\": 10", NULL, "protocol", 3000);
}

/* RFC 9110 5.1: a field name is a token; whitespace before the colon is not allowed. */
static void test_a_field_name_that_is_not_a_token_is_protocol(void)
{
    expect_fault("bad-field-name", "\"timeout\": 10", NULL, "protocol", 3000);
}

/* RFC 9112 5.2: a user agent reads an obsolete line folding as a space. */
static void test_a_folded_header_value_is_read_with_spaces(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = fault_request(c, "folded", NULL, NULL);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.x-folded"), "a b c");
    CHECK_STR_EQ(jpath_str(r, "headers.content-length"), "2");
    json_decref(r);
    nl_client_free(c);
}

/* A body longer than Content-Length: the response is the first 10 bytes (or a
 * protocol error), never the excess; the excess (which looks like a second
 * response) must not be read as the answer to the next request on that connection. */
static void test_body_longer_than_content_length_never_leaks_into_the_next_response(void)
{
    nl_client *c = client_for("\"timeout\": 10, \"maxConcurrent\": 1");
    double elapsed;
    int i;
    json_t *r = fault_request(c, "long-length", NULL, &elapsed);
    if (result_ok(r)) {
        CHECK_INT_EQ(jpath_num(r, "value.a", -1), 1234);
    } else {
        CHECK_KIND(r, "protocol");
    }
    nlt_note("long-length -> %s", result_ok(r) ? "ok, the 10 bytes of Content-Length" : error_kind(r));
    CHECK(elapsed <= bound_ms(3000));
    json_decref(r);
    for (i = 0; i < 2; i++) {
        r = fault_request(c, "plain", NULL, NULL);
        CHECK_OK(r);
        CHECK(json_is_true(jpath(r, "value.plain")));
        CHECK(jpath_str(r, "headers.x-smuggled") == NULL);
        json_decref(r);
    }
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- sizes (rows 8, 9) ------------------------------------------------------------------- */

static void test_endless_headers_are_protocol_or_too_large(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    double elapsed;
    long rss0 = fh_rss_kb(), rss1;
    json_t *r = fault_request(c, "endless-headers", NULL, &elapsed);
    const char *kind = error_kind(r);
    CHECK_MSG(!result_ok(r) && (strcmp(kind, "protocol") == 0 || strcmp(kind, "too_large") == 0),
              "endless headers -> ok=%d kind \"%s\" (%s)", result_ok(r), kind, error_message(r));
    CHECK_MSG(elapsed <= bound_ms(5000), "endless headers took %.0f ms", elapsed);
    nlt_note("endless-headers -> %s (%s) in %.0f ms", kind, error_message(r), elapsed);
    rss1 = fh_rss_kb();
    if (!fh_slow_mode() && rss0 > 0 && rss1 > 0)
        CHECK_MSG(rss1 - rss0 < 64 * 1024, "RSS grew by %ld KiB", rss1 - rss0);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

/* Trailer fields (after a chunked body) are not header fields: they change neither
 * the headers the result lists, nor how the body is decoded, nor the jar (RFC 9110
 * 6.5.1); an endless trailer section is cut at 64 KiB, as libcurl keeps every line. */
static void test_trailers_are_left_out_and_bounded(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    double elapsed;
    long rss0, rss1;
    json_t *r = fault_request(c, "trailer-fields", NULL, &elapsed);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.content-type") ? jpath_str(r, "headers.content-type") : "", "text/plain");
    CHECK(jpath(r, "headers.content-encoding") == NULL && jpath(r, "headers.set-cookie") == NULL
          && jpath(r, "headers.x-checksum") == NULL);
    CHECK_STR_EQ(jpath_str(r, "decoder") ? jpath_str(r, "decoder") : "", "text");
    CHECK_STR_EQ(jpath_str(r, "value") ? jpath_str(r, "value") : "", "{\"a\":1}");
    json_decref(r);
    /* A trailer line without a colon is the server's framing error, as in the header section. */
    r = fault_request(c, "trailer-fields", "\"query\": {\"bad\": 1}", &elapsed);
    CHECK_MSG(!result_ok(r) && strcmp(error_kind(r), "protocol") == 0 && strstr(error_message(r), "trailer"),
              "a trailer line without a colon -> ok=%d kind \"%s\" (%s)", result_ok(r), error_kind(r), error_message(r));
    json_decref(r);

    rss0 = fh_rss_kb();
    r = fault_request(c, "endless-trailers", NULL, &elapsed);
    CHECK_MSG(!result_ok(r) && strcmp(error_kind(r), "protocol") == 0 && strstr(error_message(r), "trailer"),
              "endless trailers -> ok=%d kind \"%s\" (%s)", result_ok(r), error_kind(r), error_message(r));
    CHECK_MSG(elapsed <= bound_ms(5000), "endless trailers took %.0f ms", elapsed);
    rss1 = fh_rss_kb();
    if (!fh_slow_mode() && rss0 > 0 && rss1 > 0)
        CHECK_MSG(rss1 - rss0 < 64 * 1024, "RSS grew by %ld KiB", rss1 - rss0);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

/* A server that closes before the blank line ending the header section sent no whole
 * response: never ok with the fields so far (libcurl calls it a success), and a download
 * leaves no file. */
static void test_header_section_cut_by_a_close_is_protocol(void)
{
    char dir[] = "/tmp/netlayer-cut-XXXXXX";
    char *target, *download;
    struct stat st;
    expect_fault("unterminated-headers", NULL, NULL, "protocol", 2000);
    expect_fault("unterminated-headers", NULL, "\"query\": {\"cut\": \"status\"}", "protocol", 2000);
    expect_fault("unterminated-headers", NULL, "\"method\": \"HEAD\"", "protocol", 2000);
    REQUIRE(mkdtemp(dir) != NULL);
    target = nlt_format("%s/body.txt", dir);
    download = nlt_format("\"downloadTo\": \"%s\"", target);
    expect_fault("unterminated-headers", NULL, download, "protocol", 2000);
    CHECK_MSG(stat(target, &st) != 0, "a download of a cut response left %s (%ld bytes)", target, (long)st.st_size);
    unlink(target);
    CHECK_MSG(rmdir(dir) == 0, "the download left a temporary file in %s", dir);
    free(download);
    free(target);
}

static void test_one_huge_header_line_is_protocol_or_too_large(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    double elapsed;
    json_t *r = fault_request(c, "huge-header", NULL, &elapsed);
    const char *kind = error_kind(r);
    CHECK_MSG(!result_ok(r) && (strcmp(kind, "protocol") == 0 || strcmp(kind, "too_large") == 0),
              "1 MB header line -> ok=%d kind \"%s\" (%s)", result_ok(r), kind, error_message(r));
    CHECK_MSG(elapsed <= bound_ms(5000), "huge header took %.0f ms", elapsed);
    nlt_note("huge-header -> %s (%s) in %.0f ms", kind, error_message(r), elapsed);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_endless_body_stops_at_max_response_bytes(void)
{
    nl_client *c = client_for("\"timeout\": 20, \"maxResponseBytes\": 1048576");
    double elapsed;
    long rss0 = fh_rss_kb(), rss1;
    json_t *r = fault_request(c, "endless-body", "\"response\": {\"decoder\": \"none\"}", &elapsed);
    CHECK_KIND(r, "too_large");
    CHECK_MSG(elapsed <= bound_ms(5000), "endless body took %.0f ms", elapsed);
    rss1 = fh_rss_kb();
    nlt_note("endless-body -> %s in %.0f ms, RSS %ld -> %ld KiB", error_kind(r), elapsed, rss0, rss1);
    if (!fh_slow_mode() && rss0 > 0 && rss1 > 0)
        CHECK_MSG(rss1 - rss0 < 64 * 1024, "RSS grew by %ld KiB", rss1 - rss0);
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_huge_content_length_is_too_large_without_preallocating(void)
{
    static const char *const configs[] = {
        "\"timeout\": 20, \"maxResponseBytes\": 1048576",
        "\"timeout\": 20", /* the default limit (100 MB) is below 10^12 too */
    };
    size_t i;
    for (i = 0; i < NLT_COUNT(configs); i++) {
        nl_client *c = client_for(configs[i]);
        double elapsed;
        long rss0 = fh_rss_kb(), rss1;
        json_t *r = fault_request(c, "huge-length", NULL, &elapsed);
        CHECK_KIND(r, "too_large");
        CHECK_MSG(elapsed <= bound_ms(5000), "huge Content-Length took %.0f ms", elapsed);
        rss1 = fh_rss_kb();
        nlt_note("huge-length (%s) -> %s in %.0f ms, RSS %ld -> %ld KiB", configs[i], error_kind(r),
                 elapsed, rss0, rss1);
        if (!fh_slow_mode() && rss0 > 0 && rss1 > 0)
            CHECK_MSG(rss1 - rss0 < 64 * 1024, "RSS grew by %ld KiB", rss1 - rss0);
        json_decref(r);
        check_client_still_works(c);
        nl_client_free(c);
    }
}

/* ---- what a server sends that HTTP does not allow (audit) ------------------------------------- */

/* RFC 9110 5.3 makes "3, 5" the same as two fields, and RFC 9112 6.3 differing lengths an error. */
static void test_a_content_length_that_lists_two_lengths_is_protocol(void)
{
    expect_fault("listed-length", "\"timeout\": 10", NULL, "protocol", 3000);
}

/* RFC 9110 5.1: an empty name is no token either. */
static void test_a_field_with_an_empty_name_is_protocol(void)
{
    expect_fault("empty-field-name", "\"timeout\": 10", NULL, "protocol", 3000);
}

/* RFC 9110 5.5: a CR within a value is replaced by a space, so no reader meets a line end. */
static void test_a_cr_inside_a_header_value_is_read_as_a_space(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = fault_request(c, "cr-in-value", NULL, NULL);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.x-c"), "a b");
    json_decref(r);
    nl_client_free(c);
}

/* 25,000 fields (200 KB; libcurl takes 300 KiB) cost their number, not its square (43,000
 * once cost 7.8 s of CPU, past a 1 s timeout, which the header callbacks never looked at). */
static void test_tens_of_thousands_of_header_fields_cost_their_number(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    double elapsed;
    json_t *r = fault_request(c, "many-fields", NULL, &elapsed);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.x0"), "v, again");
    CHECK_STR_EQ(jpath_str(r, "headers.x24998"), "v");
    CHECK_MSG(elapsed <= bound_ms(1000), "25,000 header fields took %.0f ms", elapsed);
    json_decref(r);
    nl_client_free(c);
}

/* maxResponseBytes counts decoded bytes: a body of 1,000 that gzip makes 1,023 is not
 * refused for its Content-Length; 999 is too few for it. */
static void test_the_response_limit_counts_decoded_bytes_not_the_encoded_length(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = fault_request(c, "gzip-incompressible", "\"maxResponseBytes\": 1000", NULL);
    CHECK_OK(r);
    json_decref(r);
    r = fault_request(c, "gzip-incompressible", "\"maxResponseBytes\": 999", NULL);
    CHECK_KIND(r, "too_large");
    json_decref(r);
    nl_client_free(c);
}

/* Bytes after the end of a gzip body are the server's fault: kind protocol, as bad gzip
 * data is (once kind generic, "Failed writing received data to disk/application"). */
static void test_bytes_after_a_gzip_body_are_protocol(void)
{
    nl_client *c = client_for(NULL);
    json_t *r = fault_request(c, "gzip-trailing-bytes", NULL, NULL);
    CHECK_KIND(r, "protocol");
    CHECK_MSG(strstr(error_message(r), "Content-Encoding") != NULL, "message: %s", error_message(r));
    json_decref(r);
    nl_client_free(c);
}

/* A HEAD response announces a length it does not carry: a 10^12-byte file's size can be asked. */
static void test_a_head_request_is_not_refused_for_the_length_it_announces(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    json_t *r = fault_request(c, "huge-length", "\"method\": \"HEAD\"", NULL);
    CHECK_OK(r);
    CHECK_STR_EQ(jpath_str(r, "headers.content-length"), "1000000000000");
    json_decref(r);
    nl_client_free(c);
}

/* curl's --max-time covers the redirects it follows; so do timeout and deadline (four hops
 * of 0.7 s each once took 2.8 s against a 1 s timeout). */
static void test_timeout_and_deadline_cover_the_redirects_of_an_attempt(void)
{
    nl_client *c = client_for(NULL);
    double elapsed;
    json_t *r = fault_request(c, "slow-redirect?n=4", "\"timeout\": 1", &elapsed);
    CHECK_KIND(r, "timeout");
    CHECK_MSG(strstr(error_message(r), "redirects") != NULL, "message: %s", error_message(r));
    CHECK_INT_EQ((long)jpath_num(r, "attempts", -1), 1);
    CHECK_MSG(elapsed >= 900 && elapsed <= bound_ms(1800), "timeout 1 s over redirects: %.0f ms", elapsed);
    json_decref(r);
    r = fault_request(c, "slow-redirect?n=4", "\"timeout\": 10, \"deadline\": 1", &elapsed);
    CHECK_KIND(r, "timeout");
    CHECK_MSG(elapsed >= 900 && elapsed <= bound_ms(1800), "deadline 1 s over redirects: %.0f ms", elapsed);
    json_decref(r);
    nl_client_free(c);
}

/* A POST that a 303 turned into a GET is not sent again when the GET fails: the next
 * attempt would send the POST, which is not among the retried methods. */
static void test_a_post_is_not_repeated_when_the_page_it_redirects_to_fails(void)
{
    nl_client *c = client_for(NULL);
    long posts = faulty_count("/see-other"), gets = faulty_count("/unavailable");
    json_t *r = fault_request(c, "see-other",
                              "\"method\": \"POST\", \"body\": {\"order\": 1}, \"retry\": {\"maxAttempts\": 3, \"backoff\": 0.01}",
                              NULL);
    CHECK_KIND(r, "status");
    CHECK_INT_EQ((long)jpath_num(r, "error.status", jpath_num(r, "status", -1)), 503);
    CHECK_INT_EQ((long)jpath_num(r, "attempts", -1), 1);
    json_decref(r);
    CHECK_INT_EQ(faulty_count("/see-other") - posts, 1);
    CHECK_INT_EQ(faulty_count("/unavailable") - gets, 1);
    nl_client_free(c);
}

/* nl_cancel during a back-off ends the request at once, not when the wait would have. */
static void test_a_cancel_during_a_back_off_answers_at_once(void)
{
    nl_client *c = client_for(NULL);
    async_one a;
    char *doc = nlt_format("{\"path\": \"http://127.0.0.1:%d/unavailable\", \"isFullPath\": true, "
                           "\"retry\": {\"maxAttempts\": 3, \"backoff\": 8, \"maxBackoff\": 8}}",
                           faulty_port());
    uint64_t id;
    double t0;
    async_one_init(&a);
    id = nl_request_async(c, doc, async_one_cb, &a);
    CHECK(id != 0);
    sleep_ms(fh_slow_mode() ? 2500 : 500); /* the 503 is in: the back-off of 4 to 8 s runs */
    t0 = async_one_now();
    CHECK_INT_EQ(nl_cancel(c, id), 1);
    CHECK_MSG(async_one_wait(&a, 2.0), "no completion 2 s after the cancel");
    CHECK_MSG(async_one_now() - t0 <= (fh_slow_mode() ? 3.0 : 1.0), "completion %.2f s after the cancel",
              async_one_now() - t0);
    if (a.result != NULL) {
        CHECK_KIND(a.result, "cancelled");
        CHECK_INT_EQ((long)jpath_num(a.result, "attempts", -1), 1);
    }
    async_one_destroy(&a);
    free(doc);
    nl_client_free(c);
}

/* ---- redirects (row 3) ------------------------------------------------------------------- */

static void test_redirect_loop_stops_at_max_redirects(void)
{
    nl_client *c = client_for("\"maxRedirects\": 5, \"timeout\": 10");
    long before = faulty_count("/redirect-loop"), after;
    double elapsed;
    json_t *r = fault_request(c, "redirect-loop", NULL, &elapsed);
    CHECK(!result_ok(r));
    /* docs/documents.md: "generic: anything else (for example too many redirects)" */
    CHECK_KIND(r, "generic");
    CHECK_MSG(elapsed <= bound_ms(3000), "redirect loop took %.0f ms", elapsed);
    nlt_note("redirect loop -> %s (%s), curlCode %.0f", error_kind(r), error_message(r),
             jpath_num(r, "error.curlCode", -1));
    json_decref(r);
    after = faulty_count("/redirect-loop");
    CHECK_MSG(after - before == 6, "the server saw %ld requests (1 + maxRedirects 5 expected)",
              after - before);
    check_client_still_works(c);
    nl_client_free(c);
}

static void test_redirect_to_file_url_is_refused(void)
{
    nl_client *c = client_for("\"timeout\": 10");
    double elapsed;
    json_t *r = fault_request(c, "redirect-file", NULL, &elapsed);
    CHECK(!result_ok(r));
    /* docs/documents.md: "protocol: ... or a redirect to a scheme other than http/https" */
    CHECK_KIND(r, "protocol");
    CHECK_MSG(strstr(error_message(r), "root:") == NULL, "the error message shows /etc/passwd content");
    CHECK(jpath_str(r, "value") == NULL);
    nlt_note("redirect to file:// -> %s (%s)", error_kind(r), error_message(r));
    CHECK(elapsed <= bound_ms(3000));
    json_decref(r);
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- pooled connections (row 19) ---------------------------------------------------------- */

static void test_keepalive_connection_closed_by_server_is_replaced_transparently(void)
{
    nl_client *c = client_for("\"timeout\": 10, \"maxConcurrent\": 1");
    int i;
    for (i = 0; i < 4; i++) {
        json_t *r = fault_request(c, "keepalive-close", NULL, NULL);
        CHECK_OK(r);
        CHECK(json_is_true(jpath(r, "value.keepalive")));
        CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
        json_decref(r);
    }
    check_client_still_works(c);
    nl_client_free(c);
}

/* The server closes the idle connection just as the client reuses it: the request
 * sent on it gets nothing back; an idempotent request must still succeed, without
 * the caller's retry policy (maxAttempts 1). */
static void test_keepalive_closed_as_it_is_reused_is_retried_transparently(void)
{
    nl_client *c = client_for("\"timeout\": 10, \"maxConcurrent\": 1");
    long before = faulty_count("/keepalive-close(late reuse)"), after;
    int i;
    for (i = 0; i < 3; i++) {
        json_t *r = fault_request(c, "keepalive-close?late=1", NULL, NULL);
        CHECK_OK(r);
        CHECK(json_is_true(jpath(r, "value.keepalive")));
        json_decref(r);
        r = fault_request(c, "plain", NULL, NULL);
        CHECK_OK(r);
        CHECK(json_is_true(jpath(r, "value.plain")));
        json_decref(r);
    }
    after = faulty_count("/keepalive-close(late reuse)");
    nlt_note("requests that met a connection closing under them: %ld", after - before);
    CHECK_MSG(after - before >= 1, "the pooled connection was never reused (the case was not exercised)");
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- retries (row 17) -------------------------------------------------------------------- */

static void test_503_with_retry_after_is_retried_after_the_delay(void)
{
    nl_client *c = client_for("\"timeout\": 10, \"retry\": {\"maxAttempts\": 2, \"backoff\": 0}");
    double elapsed;
    char *mode = nlt_format("retry-after?k=ra-%ld-%.0f", (long)getpid(), now_ms());
    json_t *r = fault_request(c, mode, NULL, &elapsed);
    CHECK_OK(r);
    CHECK_INT_EQ(result_status(r), 200);
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 2);
    CHECK_INT_EQ(jpath_num(r, "value.hit", -1), 2);
    CHECK_MSG(elapsed >= 990 && elapsed <= bound_ms(4000), "Retry-After: 1 retried after %.0f ms", elapsed);
    nlt_note("Retry-After: 1 -> ok after %.0f ms", elapsed);
    json_decref(r);
    free(mode);
    check_client_still_works(c);
    nl_client_free(c);
}

/* ---- TLS to a plaintext server (row 18) ---------------------------------------------------- */

static void test_https_url_to_plaintext_server_is_tls_without_retry_storm(void)
{
    nl_client *c = client_for("\"timeout\": 10, \"retry\": {\"maxAttempts\": 3, \"backoff\": 0}");
    long before = faulty_tls_hellos(), after;
    double t0 = now_ms(), elapsed;
    json_t *r = request_json(c, "{\"path\": \"https://127.0.0.1:%d/plain\", \"isFullPath\": true}",
                             faulty_port());
    elapsed = now_ms() - t0;
    CHECK_KIND(r, "tls");
    CHECK_INT_EQ(jpath_num(r, "attempts", -1), 1);
    CHECK_MSG(elapsed <= bound_ms(3000), "took %.0f ms", elapsed);
    nlt_note("https to a plaintext server -> %s (%s)", error_kind(r), error_message(r));
    json_decref(r);
    after = faulty_tls_hellos();
    CHECK_MSG(after - before == 1, "the server saw %ld TLS handshakes (1 expected)", after - before);
    check_client_still_works(c);
    nl_client_free(c);
}

int main(int argc, char **argv)
{
    static const nlt_test tests[] = {
        NLT_TEST(test_connection_refused_is_not_connected_fast),
        NLT_TEST(test_dns_failure_of_invalid_host_is_not_connected),
        NLT_TEST(test_server_that_never_answers_times_out),
        NLT_TEST(test_slowloris_body_is_cut_by_the_total_timeout),
        NLT_TEST(test_listener_that_never_accepts_hits_the_connect_timeout),
        NLT_TEST(test_close_mid_body_is_protocol),
        NLT_TEST(test_short_content_length_is_protocol),
        NLT_TEST(test_chunked_without_final_chunk_is_protocol),
        NLT_TEST(test_bad_chunk_size_is_protocol),
        NLT_TEST(test_bad_status_line_is_protocol),
        NLT_TEST(test_bare_lf_response_is_protocol),
        NLT_TEST(test_conflicting_content_lengths_are_protocol),
        NLT_TEST(test_a_field_name_that_is_not_a_token_is_protocol),
        NLT_TEST(test_a_folded_header_value_is_read_with_spaces),
        NLT_TEST(test_body_longer_than_content_length_never_leaks_into_the_next_response),
        NLT_TEST(test_endless_headers_are_protocol_or_too_large),
        NLT_TEST(test_trailers_are_left_out_and_bounded),
        NLT_TEST(test_header_section_cut_by_a_close_is_protocol),
        NLT_TEST(test_one_huge_header_line_is_protocol_or_too_large),
        NLT_TEST(test_endless_body_stops_at_max_response_bytes),
        NLT_TEST(test_huge_content_length_is_too_large_without_preallocating),
        NLT_TEST(test_a_content_length_that_lists_two_lengths_is_protocol),
        NLT_TEST(test_a_field_with_an_empty_name_is_protocol),
        NLT_TEST(test_a_cr_inside_a_header_value_is_read_as_a_space),
        NLT_TEST(test_tens_of_thousands_of_header_fields_cost_their_number),
        NLT_TEST(test_the_response_limit_counts_decoded_bytes_not_the_encoded_length),
        NLT_TEST(test_bytes_after_a_gzip_body_are_protocol),
        NLT_TEST(test_a_head_request_is_not_refused_for_the_length_it_announces),
        NLT_TEST(test_timeout_and_deadline_cover_the_redirects_of_an_attempt),
        NLT_TEST(test_a_post_is_not_repeated_when_the_page_it_redirects_to_fails),
        NLT_TEST(test_a_cancel_during_a_back_off_answers_at_once),
        NLT_TEST(test_redirect_loop_stops_at_max_redirects),
        NLT_TEST(test_redirect_to_file_url_is_refused),
        NLT_TEST(test_keepalive_connection_closed_by_server_is_replaced_transparently),
        NLT_TEST(test_keepalive_closed_as_it_is_reused_is_retried_transparently),
        NLT_TEST(test_503_with_retry_after_is_retried_after_the_delay),
        NLT_TEST(test_https_url_to_plaintext_server_is_tls_without_retry_storm),
    };
    int rc = nlt_main(argc, argv, tests, NLT_COUNT(tests));
    fh_server_stop(&g_faulty);
    return rc;
}
