import Foundation
import Netlayer
import Synchronization
import Testing

/// Retries, the interceptor, the error resolver and the logger, through the Swift API.
@Suite(.serialized) struct FeaturesTests {
    let server = TestServer.shared

    private func service(retry: RetryPolicy = RetryPolicy(), deadline: Double? = nil,
                         interceptor: (any RequestInterceptor)? = nil,
                         resolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver(),
                         logger: NetworkLogger = NetworkLogger()) throws -> DefaultDataTransferService {
        var options = RequestOptions()
        options.retry = retry
        options.deadline = deadline
        let config = NetworkConfig(baseURL: server.baseURL, requestOptions: options)
        let network = DefaultNetworkService(config: config, sessionManager: try CurlSessionManager(),
                                            interceptor: interceptor, logger: logger)
        return DefaultDataTransferService(with: network, errorResolver: resolver, errorLogger: logger)
    }

    private static func key() -> String { "swift-\(UInt64.random(in: 0...UInt64.max))" }

    @Test func retriesA503UntilItSucceedsAndCountsAttempts() async throws {
        var retry = RetryPolicy()
        retry.maxAttempts = 3
        retry.backoff = 0.05
        let key = Self.key()
        let response: DataResponse<JSON> = try await service(retry: retry)
            .response(with: Endpoint<JSON>(path: "flaky/\(key)", queryParameters: ["fails": 2, "status": 503]))
        #expect(response.attempts == 3)
        #expect(response.value["hits"] == 3)
    }

    @Test func neverRetriesAPostUnlessAsked() async throws {
        var retry = RetryPolicy()
        retry.maxAttempts = 3
        retry.backoff = 0.01
        let key = Self.key()
        let svc = try service(retry: retry)
        await #expect(throws: DataTransferError.self) {
            let _: JSON = try await svc.request(with: Endpoint<JSON>(path: "flaky/\(key)", method: .post,
                                                                     queryParameters: ["fails": 5, "status": 503]))
        }
        let hits: JSON = try await svc.request(with: Endpoint<JSON>(path: "hits/\(key)"))
        #expect(hits["hits"] == 1)
    }

    @Test func theDeadlineStopsRetries() async throws {
        var retry = RetryPolicy()
        retry.maxAttempts = 50
        retry.backoff = 0.2
        let svc = try service(retry: retry, deadline: 1.0)
        let start = ContinuousClock.now
        await #expect(throws: DataTransferError.self) {
            let _: JSON = try await svc.request(with: Endpoint<JSON>(path: "flaky/\(Self.key())",
                                                                     queryParameters: ["fails": 1000, "status": 503]))
        }
        let elapsed = ContinuousClock.now - start
        // Attempts run while the next back-off ends before the deadline; then the last
        // error comes at once, rather than at the deadline no attempt could use.
        #expect(elapsed > .milliseconds(250) && elapsed < .milliseconds(1300))
    }

    @Test func anInterceptorAddsATokenAndRefreshesItOnceFor401s() async throws {
        final class TokenInterceptor: RequestInterceptor {
            let token = Mutex("wrong")
            let refreshes = Mutex(0)
            let base: String
            init(base: String) { self.base = base }

            func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest {
                var request = request
                request.headers["Authorization"] = "Bearer " + token.withLock { $0 }
                return request
            }

            func retry(_ request: HTTPRequest, context: RequestContext, dueTo error: NetworkError) throws(NetworkError) -> RetryDecision {
                guard case .error(401, _) = error else { return .doNotRetry }
                let sent = request.headers["Authorization"]
                if sent == "Bearer " + token.withLock({ $0 }) {
                    // The token that failed is still current: fetch the server's.
                    let session = try CurlSessionManager()
                    let response = try session.requestBlocking(HTTPRequest(url: base + "token/current")).get()
                    let current = try? JSONParser.parse(response.body)["token"]?.stringValue
                    token.withLock { $0 = current ?? "" }
                    refreshes.withLock { $0 += 1 }
                }
                return .retry(delay: 0)
            }
        }
        let interceptor = TokenInterceptor(base: server.baseURL)
        var retry = RetryPolicy()
        retry.maxAttempts = 3
        let svc = try service(retry: retry, interceptor: interceptor)
        let key = Self.key()
        try await withThrowingTaskGroup(of: JSON.self) { group in
            for _ in 0..<20 { group.addTask { try await svc.request(with: Endpoint<JSON>(path: "auth/\(key)")) } }
            for try await value in group { #expect(value["ok"] == true) }
        }
        #expect(interceptor.refreshes.withLock { $0 } == 1)
    }

    /// A cancel that comes while a retrier decides to retry later finds no back-off to
    /// end yet: the request still ends when the decision is made, not after the delay.
    @Test func aCancelWhileTheRetrierDecidesDoesNotWaitOutTheBackOff() async throws {
        final class SlowRetrier: RequestInterceptor {
            let deciding = Mutex(false)
            func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest { request }
            func retry(_ request: HTTPRequest, context: RequestContext, dueTo error: NetworkError) throws(NetworkError) -> RetryDecision {
                deciding.withLock { $0 = true }
                usleep(300_000)
                return .retry(delay: 5)
            }
        }
        var retry = RetryPolicy()
        retry.maxAttempts = 2
        let retrier = SlowRetrier()
        let svc = try service(retry: retry, interceptor: retrier)
        let task = Task { try await svc.request(with: Endpoint<JSON>(path: "status/503")) }
        for _ in 0..<500 where !retrier.deciding.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelled < .seconds(2))
        guard case .failure(let error) = result else { Issue.record("a cancelled request succeeded"); return }
        #expect((error as? DataTransferError)?.kind == .cancelled)
    }

    @Test func resolverRulesNameStatusFailuresWithTheBodysMessage() async throws {
        let resolver = RuleBasedErrorResolver(rules: [
            .init(status: AcceptableStatus([500...599]), code: "server", messageKeyPath: "error.message"),
        ])
        let svc = try service(resolver: resolver)
        do {
            let _: JSON = try await svc.request(with: Endpoint<JSON>(path: "error-json/502", queryParameters: ["message": "boom"]))
            Issue.record("a 502 succeeded")
        } catch {
            #expect(error.kind == .resolved)
            #expect(error.code == "server")
            #expect(error.message == "boom")
            #expect(error.response?.statusCode == 502)
        }
    }

    @Test func theLoggerRedactsSecretsInEveryEvent() async throws {
        let events = Mutex<[String]>([])
        let logger = NetworkLogger(level: .debug) { event in
            events.withLock { $0.append(String(decoding: JSONWriter.serialize(event.json), as: UTF8.self)) }
        }
        let svc = try service(logger: logger)
        let canary = "CANARY-swift-77"
        let _: JSON = try await svc.request(with: Endpoint<JSON>(path: "echo", headerParameters: [
            "Authorization": "Bearer \(canary)", "Cookie": "s=\(canary)", "X-Visible": "yes",
        ]))
        await #expect(throws: DataTransferError.self) {
            let _: JSON = try await svc.request(with: Endpoint<JSON>(path: "status/404",
                                                                     headerParameters: ["Authorization": canary]))
        }
        let all = events.withLock { $0 }
        #expect(all.count >= 4)
        #expect(all.allSatisfy { !$0.contains(canary) })
        #expect(all.contains { $0.contains("\"event\":\"request\"") && $0.contains("<redacted>") && $0.contains("\"curl\":\"curl ") })
        #expect(all.contains { $0.contains("\"event\":\"error\"") && $0.contains("\"status\":404") })
    }

    @Test func userInfoIsRedactedInMessagesAndCommands() {
        #expect(Redaction.userInfo(in: "GET http://bob:s3cret@host:1/x failed") == "GET http://<redacted>@host:1/x failed")
        let logger = NetworkLogger(level: .debug)
        let command = logger.curlCommand(for: HTTPRequest(method: .post, url: "http://u:p@h/x",
                                                          headers: ["Authorization": "t", "A": "it's"], body: Array("b".utf8)))
        #expect(command == #"curl -X POST 'http://<redacted>@h/x' -H 'Authorization: <redacted>' -H 'A: it'\''s' --data-binary 'b'"#)
    }

    @Test func retryAfterAcceptsSecondsAndHTTPDates() {
        #expect(RetryPolicy.retryAfter(HTTPResponse(statusCode: 503, headers: ["retry-after": "2"])) == 2)
        let date = RetryPolicy.retryAfter(HTTPResponse(statusCode: 503, headers: ["retry-after": "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(date == 0)  // in the past
        #expect(RetryPolicy.retryAfter(HTTPResponse(statusCode: 503, headers: ["retry-after": "soon"])) == nil)
        // delay-seconds is digits only (RFC 9110 section 10.2.3): other numbers are not one.
        for value in ["1.5", "-1", "+3", "0x10", "4e0", "inf", "nan", "1 2"] {
            #expect(RetryPolicy.retryAfter(HTTPResponse(statusCode: 503, headers: ["retry-after": value])) == nil, "\(value)")
        }
        #expect(RetryPolicy.retryAfter(HTTPResponse(statusCode: 503, headers: ["retry-after": " 120 "])) == 120)
        #expect(RetryPolicy.retryAfter(HTTPResponse(statusCode: 503, headers: ["retry-after": String(repeating: "9", count: 400)])) == 2_147_483_648)
    }
}

/// HTTP dates as RFC 9110 section 5.6.7 has recipients read them: the IMF-fixdate and
/// the two obsolete forms, nothing else.
@Suite struct HTTPDateTests {
    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",  // asctime
    ])
    func theThreeFormsAreRead(text: String) {
        #expect(HTTPDate.parse(text) == 784_111_777)
    }

    @Test(arguments: [
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 06-Nov-1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT x", "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sux, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:49:37 GMT", "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 GMT\nSun, 06 Nov 1994 08:49:37 GMT", "", "0", "-1",
    ])
    func anythingElseIsNotADate(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func aLeapDayAndTheFormBackAgree() {
        let leap = HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT")
        #expect(leap == 1_709_251_199)
        #expect(HTTPDate.format(1_709_251_199) == "Thu, 29 Feb 2024 23:59:59 GMT")
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}

/// RFC 9111 section 4.1 through the Swift API, which can send a field as several lines
/// (documents carry one line per name): a response's `Vary` compares those lines joined.
@Suite struct VaryLinesTests {
    private func request(_ lines: [String]) -> HTTPRequest {
        var headers = HTTPHeaders()
        for line in lines { headers.add(name: "Accept-Language", value: line) }
        return HTTPRequest(url: "http://127.0.0.1:1/vary-lines", headers: headers)
    }

    @Test func severalLinesOfAVariedFieldMatchTheirJoinedValue() {
        let cache = ResponseCache(maxEntries: 4)
        let stored = request(["en", "fr"])
        let response = HTTPResponse(statusCode: 200, headers: ["Cache-Control": "max-age=600", "Vary": "Accept-Language"],
                                    body: Array("hello".utf8))
        cache.store(response, for: stored, credentials: RequestCredentials(of: stored))
        for lines in [["en", "fr"], ["en, fr"], ["EN ,fr"], ["en,", "fr"]] {
            let asked = request(lines)
            #expect(cache.lookup(asked, credentials: RequestCredentials(of: asked)).fresh != nil, "\(lines)")
        }
        for lines in [["fr", "en"], ["en"], ["en", "fr", "de"], []] {
            let asked = request(lines)
            #expect(cache.lookup(asked, credentials: RequestCredentials(of: asked)).fresh == nil, "\(lines)")
        }
    }
}
