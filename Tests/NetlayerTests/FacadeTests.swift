import Foundation
import Netlayer
import Testing

/// The Swift facade: `NetlayerClient(baseURL:)`, `send`, named endpoints from the
/// same config JSON C and Python use, streams and progress as `AsyncSequence`s, and
/// the configurable `JSONDecoder`.
@Suite struct FacadeTests {
    struct Movie: Codable, Sendable, Equatable { let id: Int; let title: String }
    struct Page: Decodable, Sendable { let page: Int; let results: [Movie] }

    private var base: String { TestServer.shared.baseURL }

    @Test func sendDecodesATypedValueFromAShortForm() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        let page: Page = try await client.send(.get("movies")).value
        #expect(page.results.first == Movie(id: 1, title: "Dune"))
        let echoed = try await client.send(Endpoint<JSON>.post("echo", query: ["page": 2], body: Movie(id: 9, title: "Heat")))
        #expect(echoed.statusCode == 200)
        #expect(echoed.value["method"] == "POST")
        #expect(echoed.value["query"] == "page=2")
        #expect(echoed.value["body"] == #"{"id":9,"title":"Heat"}"#)
    }

    @Test func aFailedStatusThrowsItsKind() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        await #expect(throws: DataTransferError.self) { try await client.send(Endpoint<JSON>.get("status/404")) }
        do {
            _ = try await client.send(Endpoint<JSON>.delete("status/503"))
            Issue.record("a 503 succeeded")
        } catch {
            #expect(error.kind == .status)
        }
    }

    @Test func aShortFormPathCannotLeaveTheBaseURL() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        do {
            _ = try await client.send(Endpoint<JSON>.get("http://127.0.0.1:1/elsewhere"))
            Issue.record("a full URL as a path was sent")
        } catch {
            #expect(error.kind == .urlGeneration)
        }
    }

    @Test func aBadBaseURLFailsTheClientNotTheFirstRequest() {
        #expect(throws: NetworkError.self) { try NetlayerClient(baseURL: "not a url") }
    }

    @Test func theConfigDocumentIsTheOneCAndPythonUse() async throws {
        let json = #"""
        {"baseURL": "\#(base)", "headers": {"X-Client": "swift"},
         "endpoints": {"getMovie": {"path": "movies/{id}", "response": {"keyPath": "data"}},
                       "echo": {"path": "echo/{what}", "response": {"keyPath": "headers"}}}}
        """#
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("netlayer-facade-\(getpid()).json")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for config in [try ConfigDocument(json: json), try ConfigDocument(contentsOfFile: file.path)] {
            let client = try NetlayerClient(config: config)
            defer { _ = client.shutdown() }
            #expect(Set(client.endpointNames) == ["getMovie", "echo"])
            #expect(try await client.call("getMovie", params: ["id": 2]).value == ["id": 2, "title": "Arrival"])
            #expect(try await client.call("getMovie", params: ["id": 3], as: Movie.self).value == Movie(id: 3, title: "Heat"))
            let headers = try await client.call("echo", params: ["what": "x"], overlay: ["headers": ["X-Extra": "1"]])
            #expect(headers.value["x-client"] == "swift")
            #expect(headers.value["x-extra"] == "1")
        }
    }

    @Test func documentErrorsNameTheKey() async throws {
        #expect { try ConfigDocument(json: #"{"baseURl": "http://127.0.0.1/"}"#) } throws: {
            "\($0)".contains("baseURl")
        }
        #expect { try ConfigDocument(contentsOfFile: "/nonexistent/netlayer.json") } throws: {
            "\($0)".contains("/nonexistent/netlayer.json")
        }
        #expect { try EndpointDocument(json: #"{"path": "x", "timeout": "5"}"#) } throws: { "\($0)".contains("timeout") }
        let client = try NetlayerClient(config: ConfigDocument(json: #"{"baseURL": "\#(base)"}"#))
        defer { _ = client.shutdown() }
        do {
            _ = try await client.call("missing")
            Issue.record("an unknown name was called")
        } catch {
            #expect(error.kind == .invalidRequest)
            #expect(error.message.contains("missing"))
        }
    }

    @Test func anEndpointDocumentSendsAsItsJSONSays() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        let doc = try EndpointDocument(json: #"{"path": "echo", "method": "PUT", "query": {"a": "1 2"}}"#)
        let response = try await client.send(doc.endpoint)
        #expect(response.value["method"] == "PUT")
        #expect(response.value["query"] == "a=1%202")
        let text = try await client.send(EndpointDocument(json: #"{"path": "text"}"#).endpoint)
        #expect(text.value == "hello, world")  // the decoder follows Content-Type
    }

    @Test func theJSONDecoderIsConfigurablePerClientAndPerEndpoint() async throws {
        struct Release: Decodable, Sendable { let movieTitle: String; let releasedAt: Date }
        let body = #"{"movie_title":"Dune","released_at":"2021-10-22T00:00:00Z"}"#
        let query: JSONObject = ["type": "application/json", "body": .string(body)]
        let snakeCase: @Sendable () -> JSONDecoder = {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            decoder.dateDecodingStrategy = .iso8601
            return decoder
        }
        let client = try NetlayerClient(baseURL: base, makeJSONDecoder: snakeCase)
        defer { _ = client.shutdown() }
        let release: Release = try await client.send(.get("typed", query: query)).value
        #expect(release.movieTitle == "Dune")
        #expect(release.releasedAt == Date(timeIntervalSince1970: 1_634_860_800))

        let plain = try NetlayerClient(baseURL: base)
        defer { _ = plain.shutdown() }
        await #expect(throws: DataTransferError.self) {
            let _: Release = try await plain.send(.get("typed", query: query)).value
        }
        let perEndpoint: Release = try await plain.send(.get("typed", query: query,
                                                             decoder: JSONResponseDecoder(makeDecoder: snakeCase))).value
        #expect(perEndpoint.movieTitle == "Dune")
    }

    @Test func serverSentEventsArriveAsAnAsyncSequence() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        var data: [String] = []
        for try await event in client.events(Endpoint<JSON>.get("sse")) {
            if case .serverSent(_, let text, _, _) = event { data.append(text) }
        }
        #expect(data.prefix(3) == ["first", "two\nlines", "crlf"])
        var lines: [String] = []
        for try await event in client.events(Endpoint<JSON>.get("lines"), as: .lines) {
            if case .line(let line) = event { lines.append(line) }
        }
        #expect(lines == ["first line", "second line", "third", "", "last without newline"])
    }

    @Test func aStreamThatFailsThrowsAndLeavingEarlyCancels() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        await #expect(throws: DataTransferError.self) {
            for try await _ in client.events(Endpoint<JSON>.get("status/500")) {}
        }
        // A slow endless stream: leaving after the first event must not wait for it.
        let started = ContinuousClock.now
        for try await _ in client.events(Endpoint<JSON>.get("sse-slow"), as: .sse) { break }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// 20,000 events written as fast as the server can, to a reader that reads none for
    /// half a second: the transfer stops reading at 64 waiting, so that none is lost
    /// and memory does not grow. A transfer that went on reading would hold them all
    /// and pass the hard limit (64 + 4096): the request would fail with `tooLarge`.
    @Test func aReaderThatFallsBehindPausesTheTransferAndGetsEveryEvent() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        let events = client.events(Endpoint<JSON>.get("sse-slow", query: ["count": 20000, "interval_ms": 0]), as: .sse,
                                   bufferLimit: 64)
        try await Task.sleep(for: .milliseconds(500))  // read nothing while the body arrives
        var ticks = 0
        for try await event in events {
            guard case .serverSent(_, let text, _, _) = event else { continue }
            if text != "tick \(ticks)" {
                Issue.record("event \(ticks) is '\(text)'")
                break
            }
            ticks += 1
        }
        #expect(ticks == 20000)
    }

    @Test func progressIsAnAsyncSequenceBesideTheResponse() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        let transfer = client.transfer(Endpoint<Data>.get("bytes/300000", decoder: RawDataResponseDecoder()))
        var last: TransferProgress?
        for await progress in transfer.progress where progress.direction == .download { last = progress }
        let body = try await transfer.response.value
        #expect(body.count == 300_000)
        #expect(last?.done == 300_000)
    }

    @Test func cancellingTheTaskCancelsTheTransfer() async throws {
        let client = try NetlayerClient(baseURL: base)
        defer { _ = client.shutdown() }
        let started = ContinuousClock.now
        let task = Task { try await client.send(Endpoint<JSON>.get("delay/10000")) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        let result = await task.result
        // Well before the server's 10 s answer, not within a tight bound: the suite runs
        // its tests in parallel on the cooperative pool (two threads on two cores), where
        // tests that block their thread can hold up this task's start and resumption.
        #expect(ContinuousClock.now - started < .seconds(8))
        guard case .failure(let error) = result else { Issue.record("a cancelled request succeeded"); return }
        #expect((error as? DataTransferError)?.kind == .cancelled)
    }
}
