import Foundation
import Netlayer
import NetlayerCurl
import Synchronization
import Testing

/// A WebSocket "server" on a thread of its own that sends `count` numbered binary
/// messages, each only while reading is not paused (as TCP flow control holds a real
/// server back), then closes. Its pause arrives late, as a pause that hops to a loop
/// thread may: the reader runs on meanwhile.
private final class FlowControlledConnection: WebSocketConnection {
    private let paused = Mutex(false)
    let pauses = Atomic(0)
    var isPaused: Bool { paused.withLock { $0 } }

    init(count: Int, handlers: WebSocketHandlers) {
        Thread.detachNewThread { [self] in
            handlers.opened(WebSocketOpening(subprotocol: nil, response: HTTPResponse(statusCode: 101)))
            for index in 0..<count {
                while paused.withLock({ $0 }) { usleep(50) }
                withUnsafeBytes(of: UInt32(index).bigEndian) { handlers.message(.binary, $0) }
            }
            handlers.closed(1000, "")
        }
    }

    func send(_ kind: WebSocketMessageKind, _ bytes: UnsafeRawBufferPointer) throws(NetworkError) {}
    func close(code: Int, reason: String) throws(NetworkError) {}
    func abandon() {}

    func pauseReading(_ paused: Bool) {
        if paused {
            pauses.add(1, ordering: .relaxed)
            usleep(2000)
        }
        self.paused.withLock { $0 = paused }
    }
}

/// The curl transport for everything but WebSockets, which a `FlowControlledConnection`
/// plays.
private final class FlowControlledTransport: NetworkSessionManager, WebSocketTransport {
    let curl: CurlSessionManager
    let count: Int
    let opened = Mutex<FlowControlledConnection?>(nil)

    init(count: Int) throws(NetworkError) {
        curl = try CurlSessionManager()
        self.count = count
    }

    func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        curl.request(request, completion: completion)
    }

    func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool {
        curl.run(start, until: done, interrupt: interrupt)
    }

    func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) { curl.schedule(after: delay, task) }
    var urlParser: any URLParsing { curl.urlParser }
    func shutdown() { curl.shutdown() }

    func openWebSocket(_ request: HTTPRequest, options: WebSocketOptions,
                       prepare: @escaping @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest,
                       handlers: WebSocketHandlers) -> any WebSocketConnection {
        let connection = FlowControlledConnection(count: count, handlers: handlers)
        opened.withLock { $0 = connection }
        return connection
    }
}

@Suite struct WebSocketFlowTests {
    /// The WebSocket pauses reading on the thread that queues messages and resumes it
    /// on the reader's; a pause that reaches the connection after the resume decided
    /// after it would leave reading paused for ever, with messages still to come.
    @Test func aLatePauseNeverOutlivesTheResumeAfterIt() async throws {
        let count = 3000
        let transport = try FlowControlledTransport(count: count)
        let client = try NetlayerClient(.init(config: NetworkConfig(baseURL: "http://127.0.0.1:1/"),
                                              makeTransport: { _ throws(NetworkError) in transport }))
        let socket = try await client.webSocket(.get("numbers"), bufferLimit: 8)
        let indexes = try await withThrowingTaskGroup(of: [Int]?.self) { group in
            group.addTask {
                var indexes: [Int] = []
                for try await message in socket {
                    guard case .binary(let bytes) = message else { continue }
                    indexes.append(bytes.reduce(0) { $0 << 8 | Int($1) })
                    // Falls behind now and then until reading pauses, then catches up
                    // while the pause is on its way: the resume is decided after it.
                    if indexes.count % 100 == 0, indexes.count < count, let connection = transport.opened.withLock({ $0 }) {
                        let pauses = connection.pauses.load(ordering: .relaxed)
                        var waited = 0
                        while waited < 2000, connection.pauses.load(ordering: .relaxed) == pauses, !connection.isPaused {
                            try await Task.sleep(for: .milliseconds(1))
                            waited += 1
                        }
                    }
                }
                return indexes
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        let received = try #require(indexes, "reading stayed paused: the reader waited for ever")
        #expect(received == Array(0..<count))
        // Pausing happened: how often depends on the threads' scheduling (a busy machine
        // saw 7 pauses in the 29 waits).
        #expect(transport.opened.withLock { $0 }!.pauses.load(ordering: .relaxed) >= 3)
        _ = client.shutdown()
    }
}
