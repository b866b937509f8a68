import Foundation
import Glibc
import Netlayer
import Testing

/// The core client: blocking, asynchronous and batch execution, ids and
/// cancellation, and requests interrupted through the thread's descriptor.
@Suite struct NetlayerClientTests {
    private func client(startsOnLoopThread: Bool = false,
                        options: RequestOptions = RequestOptions()) throws -> NetlayerClient {
        let parts = NetlayerClient.Parts(config: NetworkConfig(baseURL: TestServer.shared.baseURL, requestOptions: options))
        let client = try NetlayerClient(parts)
        client.setStartsOnLoopThread(startsOnLoopThread)
        return client
    }

    private func request(_ client: NetlayerClient, _ path: String,
                         query: JSONObject = [:]) throws -> (HTTPRequest, any ResponseDecoder, UInt64) {
        let endpoint = Endpoint<JSON>(path: path, queryParameters: query)
        return (try client.makeRequest(for: endpoint), endpoint.responseDecoder, client.newID())
    }

    /// The JSON text of a success, or nil.
    private func text(_ result: RequestResult) -> String? {
        guard case .success(let response) = result.decoded, let text = response.value.text else { return nil }
        return String(decoding: text.bytes, as: UTF8.self)
    }

    private func kind(_ result: RequestResult) -> ErrorKind? {
        guard case .failure(let error) = result.decoded else { return nil }
        return error.kind
    }

    @Test(arguments: [false, true])
    func aBlockingRequestDecodesItsJSONBodyAsCheckedText(onLoop: Bool) throws {
        let client = try client(startsOnLoopThread: onLoop)
        defer { _ = client.shutdown() }
        let (request, decoder, id) = try request(client, "echo", query: ["page": 7])
        let result = client.perform(request, decoder: decoder, id: id)
        let body = try #require(text(result))
        #expect(body.contains("\"query\":\"page=7\""))
        #expect(result.attempts == 1)
        #expect(result.response?.statusCode == 200)
        #expect(result.error == nil)
        let document = try JSONParser.parse(result.document)
        #expect(document["ok"] == .bool(true))
        #expect(document["value"]?["query"] == .string("page=7"))
    }

    /// The config's secret query names (`log.redactQuery`) are kept out of error
    /// messages by the client itself, for Swift callers as for the C ABI.
    @Test func errorMessagesHideTheConfigsSecretQueryValues() throws {
        let config = try ConfigDocument(json: #"""
            {"baseURL": "http://127.0.0.1:9/api/", "log": {"redactQuery": ["custom"]},
             "stub": [{"path": "/api/known", "body": {}}]}
            """#)
        let client = try NetlayerClient(config: config)
        defer { _ = client.shutdown() }
        let endpoint = Endpoint<JSON>(path: "unknown", queryParameters: ["custom": "s3cr3t-value", "page": "2"])
        let result = client.perform(try client.makeRequest(for: endpoint), decoder: endpoint.responseDecoder,
                                    id: client.newID())
        let message = try #require(result.error?.message)
        #expect(message.contains("custom=<redacted>"))
        #expect(message.contains("page=2"))
        #expect(!message.contains("s3cr3t-value"))
        #expect(!String(decoding: result.document, as: UTF8.self).contains("s3cr3t-value"))
    }

    @Test func aStatusFailureKeepsTheServersAnswer() throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let (request, decoder, id) = try request(client, "status/404")
        let result = client.perform(request, decoder: decoder, id: id)
        #expect(kind(result) == .status)
        #expect(result.response?.statusCode == 404)
    }

    @Test(arguments: [false, true])
    func anAsynchronousRequestCompletesOnceOnALibraryThread(onLoop: Bool) throws {
        let client = try client(startsOnLoopThread: onLoop)
        defer { _ = client.shutdown() }
        let (request, decoder, id) = try request(client, "json")
        let done = Latch()
        let seen = Locked<[(Bool, RequestResult)]>([])
        client.start(request, decoder: decoder, id: id) { result in
            seen.withLock { $0.append((client.isLoopThread, result)) }
            done.countDown()
        }
        done.wait()
        usleep(20_000)
        let calls = seen.withLock { $0 }
        #expect(calls.count == 1)
        #expect(calls.first?.0 == true, "completions run on one of the client's threads")
        #expect(calls.first.flatMap { text($0.1) } != nil)
        #expect(!client.cancel(id: id), "a finished request cannot be cancelled")
    }

    /// Completions run on a delivery thread beside the loop, so one that takes its time
    /// leaves the loop free for other transfers.
    @Test func aSlowCompletionLeavesTheLoopRunning() throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let (request, decoder, id) = try request(client, "json")
        let (entered, release) = (Latch(), Latch())
        client.start(request, decoder: decoder, id: id) { _ in
            entered.countDown()
            release.wait()
        }
        entered.wait()
        let loopRan = Locked(false)
        client.execute { loopRan.withLock { $0 = true } }
        var waited = 0
        while !loopRan.withLock({ $0 }) && waited < 5000 {
            usleep(1000)
            waited += 1
        }
        release.countDown()
        #expect(loopRan.withLock { $0 }, "the loop waited for a completion")
    }

    @Test func cancellingByIdEndsTheRequestAsCancelled() throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let (request, decoder, id) = try request(client, "delay/3000")
        let done = Latch()
        let outcome = Locked<RequestResult?>(nil)
        client.start(request, decoder: decoder, id: id) { result in
            outcome.withLock { $0 = result }
            done.countDown()
        }
        #expect(client.cancel(id: id))
        done.wait()
        #expect(outcome.withLock { $0 }.flatMap(kind) == .cancelled)
        #expect(!client.cancel(id: id))
        #expect(!client.cancel(id: 999_999), "an unknown id")
    }

    @Test func aBatchKeepsInputOrderAndLeavesUnpreparedSlotsEmpty() throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let paths = ["delay/60", "json", "", "status/500", "delay/10"]
        let results = client.perform(count: paths.count) { index in
            paths[index].isEmpty ? nil : try? request(client, paths[index], query: ["i": .int(Int64(index))])
        }
        #expect(results.count == 5)
        #expect(results[0].flatMap(text)?.contains("\"delayed\":60") == true)
        #expect(results[1].flatMap(text) != nil)
        #expect(results[2] == nil)
        #expect(results[3].flatMap(kind) == .status)
        #expect(results[4].flatMap(text)?.contains("\"delayed\":10") == true)
    }

    @Test func idsAreUniqueAndNeverZero() throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let ids = (0..<1000).map { _ in client.newID() }
        #expect(Set(ids).count == 1000)
        #expect(!ids.contains(0))
    }

    @Test(arguments: [false, true])
    func aByteOnTheThreadsInterruptDescriptorEndsABlockingRequest(onLoop: Bool) throws {
        let client = try client(startsOnLoopThread: onLoop)
        defer { _ = client.shutdown() }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        defer { close(fds[0]); close(fds[1]) }
        #expect(Platform.ThreadInterrupt.set(fds[0]) == -1)
        defer { _ = Platform.ThreadInterrupt.set(-1) }
        let writer = fds[1]
        Thread.detachNewThread {
            usleep(150_000)
            var byte: UInt8 = 2
            _ = write(writer, &byte, 1)
        }
        let (slow, decoder, id) = try request(client, "delay/5000")
        let started = MonotonicTime.now
        let result = client.perform(slow, decoder: decoder, id: id)
        #expect(kind(result) == .cancelled)
        #expect(MonotonicTime.now - started < 1.5, "the request ended soon after the byte, not after its 5 s")
        // The byte was drained: the next request runs to its end.
        let (next, nextDecoder, nextID) = try request(client, "json")
        #expect(text(client.perform(next, decoder: nextDecoder, id: nextID)) != nil)
    }

    @Test func shutdownRefusesOnTheLoopThreadAndCancelsWhatIsInFlight() throws {
        let client = try client()
        let (request, decoder, id) = try request(client, "delay/3000")
        let done = Latch()
        let refused = Locked<Bool?>(nil)
        client.execute { refused.withLock { $0 = !client.shutdown() } }
        client.start(request, decoder: decoder, id: id) { result in
            #expect(kind(result) == .cancelled)
            done.countDown()
        }
        usleep(50_000)
        #expect(refused.withLock { $0 } == true, "waiting on its own loop thread would deadlock")
        #expect(client.shutdown())
        done.wait()
    }
}

/// Seconds on the monotonic clock.
private enum MonotonicTime {
    static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
