import Netlayer
import Synchronization
import Testing

/// Record and replay through the Swift API: what a recording keeps of an exchange,
/// and how a replay matches requests to recorded ones.
@Suite struct CassetteTests {
    /// A transport that answers every request with `answer`, at once.
    private struct Canned: NetworkSessionManager {
        let answer: @Sendable (HTTPRequest) -> Result<HTTPResponse, NetworkError>

        func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
            completion(answer(request))
            return NoCancel()
        }
    }

    private struct NoCancel: NetworkCancellable {
        func cancel() -> Bool { false }
    }

    @Test func aRecordingKeepsNoSecretAndSkipsCancelledRequests() throws {
        let saved = Box()
        let transport = Canned { request in
            if request.url.hasSuffix("/cancelled") { return .failure(.cancelled) }
            if request.url.contains("/down") {
                return .failure(.timedOut("no answer from \(request.url)"))
            }
            let echo = "token=\(request.headers["Authorization"] ?? "") trace=\(request.headers["X-Trace"] ?? "")"
            return .success(HTTPResponse(statusCode: 200, headers: ["Set-Cookie": "sid=1", "Content-Length": "\(echo.utf8.count)"],
                                         body: Array(echo.utf8)))
        }
        let recorder = RecordingSessionManager(
            over: transport, redaction: CassetteRedaction(headers: Redaction.defaultHeaders.union(["x-trace"]),
                                                          queryNames: ["trace_id"]),
            save: { saved.set($0) })
        let headers: HTTPHeaders = ["Authorization": "Bearer s3cret-token-1", "X-Trace": "trace-value-22"]
        _ = recorder.requestBlocking(HTTPRequest(url: "https://user:pw-123456@api.test/a?api_key=k-998877&trace_id=t-55&page=2",
                                                 headers: headers))
        _ = recorder.requestBlocking(HTTPRequest(url: "https://api.test/cancelled"))
        _ = recorder.requestBlocking(HTTPRequest(url: "https://api.test/down?token=abcdef123", headers: headers))
        recorder.finish()
        recorder.finish()  // saves once

        let cassette = try #require(saved.value)
        #expect(saved.count == 1)
        #expect(cassette.exchanges.count == 2)
        let first = cassette.exchanges[0]
        #expect(first.request.url == "https://REDACTED@api.test/a?api_key=REDACTED&trace_id=REDACTED&page=2")
        #expect(first.request.headers["Authorization"] == "REDACTED")
        #expect(first.request.headers["X-Trace"] == "REDACTED")
        let response = try first.result.get()
        #expect(String(decoding: response.body, as: UTF8.self) == "token=REDACTED trace=REDACTED")
        #expect(response.headers["Set-Cookie"] == "REDACTED")
        #expect(response.headers["Content-Length"] == "\(response.body.count)")
        guard case .failure(.timedOut(let message)) = cassette.exchanges[1].result else {
            Issue.record("the timeout was not kept as one")
            return
        }
        #expect(message == "no answer from https://api.test/down?token=REDACTED")
    }

    @Test func aReplayMatchesMethodAndURLInOrderWithRedactedValuesAsWildcards() throws {
        func exchange(_ method: HTTPMethod, _ url: String, _ status: Int) -> Cassette.Exchange {
            Cassette.Exchange(request: HTTPRequest(method: method, url: url), result: .success(HTTPResponse(statusCode: status)))
        }
        let cassette = Cassette(exchanges: [
            exchange(.get, "https://REDACTED@api.test/a?api_key=REDACTED&page=2", 201),
            exchange(.get, "https://api.test/flaky", 503),
            exchange(.post, "https://api.test/flaky", 202),
            exchange(.get, "https://api.test/flaky", 200),
            Cassette.Exchange(request: HTTPRequest(url: "https://api.test/down"), result: .failure(.tls("recorded"))),
        ])
        let session = try CurlSessionManager()
        defer { session.shutdown() }
        let replay = ReplaySessionManager(cassette: cassette, redactedQuery: ["page"], loop: session)
        func status(_ url: String, _ method: HTTPMethod = .get) -> Int? {
            try? replay.requestBlocking(HTTPRequest(method: method, url: url)).get().statusCode
        }
        #expect(status("https://me:pw@api.test/a?api_key=mine&page=2#top") == 201)
        #expect(status("https://api.test/a?page=2&api_key=mine") == nil)  // another order is another URL
        #expect(status("https://api.test/flaky") == 503)
        #expect(status("https://api.test/flaky") == 200)
        #expect(status("https://api.test/flaky") == 200)  // the last answer again
        #expect(status("https://api.test/flaky", .post) == 202)
        guard case .failure(.tls("recorded")) = replay.requestBlocking(HTTPRequest(url: "https://api.test/down")) else {
            Issue.record("a recorded error did not replay as itself")
            return
        }
        guard case .failure(.notConnected(let message)) = replay.requestBlocking(
            HTTPRequest(method: .delete, url: "https://api.test/a?page=secret-page")) else {
            Issue.record("an unmatched request was not not_connected")
            return
        }
        #expect(message.contains("DELETE https://api.test/a?page=") && !message.contains("secret-page"))
    }
}

/// What a recording saved, and how many times.
private final class Box: Sendable {
    private let saved = Mutex<[Cassette]>([])

    func set(_ cassette: Cassette) { saved.withLock { $0.append(cassette) } }
    var value: Cassette? { saved.withLock { $0.last } }
    var count: Int { saved.withLock { $0.count } }
}
