import Foundation
import Netlayer
import Synchronization
import Testing

private struct Movie: Decodable, Sendable, Equatable {
    let id: Int
    let title: String
}

private struct Echo: Decodable, Sendable {
    let method: String
    let query: String
    let headers: [String: String]
    let body: String
    let connection: Int
}

@Suite(.serialized) struct DataTransferServiceTests {
    let server = TestServer.shared

    @Test func decodesATypedValueAtAKeyPathWithAsyncAwait() async throws {
        let (service, _) = try server.service()
        let movie: Movie = try await service.request(
            with: Endpoint<Movie>(path: "movies/2", responseDecoder: JSONResponseDecoder(keyPath: "data")))
        #expect(movie == Movie(id: 2, title: "Arrival"))
    }

    @Test func theAutoDecoderFollowsTheContentType() async throws {
        let (service, _) = try server.service()
        let text: String = try await service.request(with: Endpoint<String>(path: "text", responseDecoder: AutoResponseDecoder()))
        #expect(text == "hello, world")
        let bytes: String = try await service.request(with: Endpoint<String>(path: "bytes/3", responseDecoder: AutoResponseDecoder()))
        #expect(bytes == "AAEC")
        let movie: Movie = try await service.request(with: Endpoint<Movie>(path: "json", responseDecoder: AutoResponseDecoder()))
        #expect(movie == Movie(id: 1, title: "Dune"))
        #expect(AutoResponseDecoder.choice(contentType: "application/vnd.api+JSON", body: []) == .json)
        #expect(AutoResponseDecoder.choice(contentType: " text/csv ; charset=latin1", body: Array("a".utf8)) == .text)
        #expect(AutoResponseDecoder.choice(contentType: "application/pdf", body: Array("a".utf8)) == .base64)
        #expect(AutoResponseDecoder.choice(contentType: "application/pdf", body: []) == AutoResponseDecoder.Choice.none)
    }

    @Test func sendsBodyDataAsItIs() async throws {
        let (service, _) = try server.service()
        var endpoint = Endpoint<String>(path: "reflect", method: .post, responseDecoder: Base64ResponseDecoder())
        endpoint.bodyData = Data([0, 1, 255, 128])
        let echoed: String = try await service.request(with: endpoint)
        #expect(echoed == "AAH/gA==")
    }

    @Test func keepsStatusHeadersAndTimingInTheResponse() async throws {
        let (service, _) = try server.service()
        let response: DataResponse<JSON> = try await service.response(with: Endpoint<JSON>(path: "json"))
        #expect(response.statusCode == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.value["title"] == "Dune")
        #expect(response.attempts == 1)
        #expect(response.totalMs > 0)
    }

    @Test func completionHandlerFormDeliversOnce() async throws {
        let (service, _) = try server.service()
        let calls = Mutex(0)
        let movies: [Movie] = try await withCheckedThrowingContinuation { continuation in
            service.request(with: Endpoint<[Movie]>(path: "movies",
                                                    responseDecoder: JSONResponseDecoder(keyPath: "results"))) {
                (result: Result<[Movie], DataTransferError>) in
                calls.withLock { $0 += 1 }
                continuation.resume(with: result)
            }
        }
        #expect(movies.count == 3)
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func aClientErrorIsNeverSuccessAndKeepsTheBody() async throws {
        let (service, _) = try server.service()
        do {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "status/404"))
            Issue.record("a 404 was reported as success")
        } catch {
            #expect(error.kind == .status)
            #expect(error.response?.statusCode == 404)
            let body = String(decoding: error.response?.body ?? [], as: UTF8.self)
            #expect(body.contains("status 404"))
        }
    }

    @Test func acceptableStatusCanWidenSuccess() async throws {
        let (service, _) = try server.service()
        let value: JSON = try await service.request(
            with: Endpoint<JSON>(path: "status/404", acceptableStatus: AcceptableStatus([200...299, 404...404])))
        #expect(value["detail"] == "status 404")
    }

    @Test func voidEndpointsOnlyCheckTheStatus() async throws {
        let (service, _) = try server.service()
        try await service.request(with: Endpoint<Void>(path: "status/204", method: .delete))
        await #expect(throws: DataTransferError.self) {
            try await service.request(with: Endpoint<Void>(path: "status/500"))
        }
    }

    @Test func emptyBodiesFollowThe204AndHeadRule() async throws {
        let (service, _) = try server.service()
        let noContent: JSON = try await service.request(with: Endpoint<JSON>(path: "status/204"))
        #expect(noContent == .null)
        let head: JSON = try await service.request(with: Endpoint<JSON>(path: "json", method: .head))
        #expect(head == .null)
        do {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "empty"))
            Issue.record("an empty 200 decoded as JSON")
        } catch {
            #expect(error.kind == .noResponse)
        }
    }

    @Test func sendsEncodableBodiesAndMergedHeadersAndQuery() async throws {
        struct NewMovie: Encodable, Sendable { let title: String }
        let (service, _) = try server.service(headers: ["X-Client": "swift", "X-Over": "config"], query: ["k": "v"])
        let echo: Echo = try await service.request(
            with: Endpoint<Echo>(path: "echo", method: .post, headerParameters: ["x-over": "endpoint"],
                                 queryParameters: ["q": "a b"], bodyParametersEncodable: NewMovie(title: "Dune")))
        #expect(echo.method == "POST")
        #expect(echo.query == "k=v&q=a%20b")
        #expect(echo.headers["x-client"] == "swift")
        #expect(echo.headers["x-over"] == "endpoint")
        #expect(echo.headers["content-type"] == "application/json")
        #expect(echo.body == #"{"title":"Dune"}"#)
    }

    @Test func nonJSONBodiesAreParsingErrors() async throws {
        let (service, _) = try server.service()
        do {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "notjson"))
            Issue.record("decoded garbage")
        } catch {
            #expect(error.kind == .parsing)
        }
        let text: String = try await service.request(with: Endpoint<String>(path: "text",
                                                                           responseDecoder: StringResponseDecoder()))
        #expect(text == "hello, world")
    }

    @Test func aRefusedConnectionIsNotConnected() async throws {
        let session = try CurlSessionManager()
        let network = DefaultNetworkService(config: NetworkConfig(baseURL: "http://127.0.0.1:1/"), sessionManager: session)
        let service = DefaultDataTransferService(with: network)
        do {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "x"))
            Issue.record("connected to port 1")
        } catch {
            #expect(error.kind == .notConnected)
        }
    }

    @Test func theTimeoutIsExactToAboutAHundredMilliseconds() async throws {
        let (service, _) = try server.service()
        let start = ContinuousClock.now
        do {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "delay/3000", timeout: 0.3))
            Issue.record("did not time out")
        } catch {
            #expect(error.kind == .timeout)
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(290) && elapsed < .milliseconds(1500))
    }

    @Test func cancellingTheTaskCancelsTheTransfer() async throws {
        let (service, _) = try server.service()
        let start = ContinuousClock.now
        let task = Task { () async throws(DataTransferError) -> JSON in
            try await service.request(with: Endpoint<JSON>(path: "delay/10000"))
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let result = await task.result
        guard case .failure(let error as DataTransferError) = result else {
            Issue.record("the cancelled request succeeded")
            return
        }
        #expect(error.kind == .cancelled)
        // Well before the server's answer; not tighter, as the suite's tests share the
        // cooperative pool's two threads (FacadeTests.cancellingTheTaskCancelsTheTransfer).
        #expect(ContinuousClock.now - start < .seconds(8))
    }

    @Test func requestsRunConcurrentlyAndReuseConnections() async throws {
        let (service, _) = try server.service(maxConcurrent: 32)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: JSON.self) { group in
            for _ in 0..<20 {
                group.addTask { try await service.request(with: Endpoint<JSON>(path: "delay/300")) }
            }
            for try await value in group { #expect(value["delayed"] == 300) }
        }
        #expect(ContinuousClock.now - start < .seconds(2))

        // The connections that carried them, as /echo names each (the server's own
        // count would also see the suites that run beside this one).
        var connections = Set<String>()
        for _ in 0..<100 {
            let echoed: JSON = try await service.request(with: Endpoint<JSON>(path: "echo"))
            connections.insert("\(echoed["connection"] ?? .null)")
        }
        #expect(connections.count <= 2, "\(connections)")
    }

    @Test func shutdownCancelsWhatIsInFlightAndDeliversEveryCompletion() async throws {
        let (service, session) = try server.service()
        let delivered = Mutex<[ErrorKind?]>([])
        for _ in 0..<10 {
            service.request(with: Endpoint<JSON>(path: "delay/5000")) { (result: Result<JSON, DataTransferError>) in
                delivered.withLock { $0.append(result.failureKind) }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        session.shutdown()
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(delivered.withLock { $0 } == Array(repeating: .cancelled, count: 10))
    }
}

extension DataTransferServiceTests {
    /// A blocking request notices the cancel of a shutdown in libcurl's progress
    /// callback (a C function over the transfer's state): shutdown returns promptly and
    /// each blocking call reports `cancelled`.
    @Test func shutdownCancelsBlockingRequestsOfOtherThreads() async throws {
        let (service, session) = try server.service()
        let network = try #require(service.networkService as? DefaultNetworkService)
        let request = try network.makeRequest(for: Endpoint<JSON>(path: "delay/5000"))
        let results = Mutex<[ErrorKind?]>([])
        for _ in 0..<3 {
            Thread.detachNewThread {
                let outcome = network.sendBlocking(request)
                let kind: ErrorKind? = switch outcome.result {
                case .success: nil
                case .failure(let error): DataTransferError.networkFailure(error).kind
                }
                results.withLock { $0.append(kind) }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        session.shutdown()
        #expect(ContinuousClock.now - start < .seconds(1))
        for _ in 0..<100 where results.withLock({ $0.count }) < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(results.withLock { $0 } == Array(repeating: .cancelled, count: 3))
    }
}

extension Result where Failure == DataTransferError {
    var failureKind: ErrorKind? {
        if case .failure(let error) = self { return error.kind }
        return nil
    }
}
