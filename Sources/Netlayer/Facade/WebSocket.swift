import NetlayerCore
import NetlayerCurl
import NetlayerJSON

/// A WebSocket connection made with a client's settings (base URL, headers, `auth`,
/// cookies, TLS, proxy, timeouts): its messages as an `AsyncSequence`, and `send`.
///
/// ```swift
/// let socket = try await client.webSocket(.get("chat"), options: WebSocketOptions(protocols: ["chat"]))
/// try await socket.send("hello")
/// for try await message in socket { print(message) }
/// ```
///
/// The sequence ends when the connection closes (`closeCode` and `closeReason` then
/// say how) and throws the `NetworkError` of a connection that failed. It can be
/// iterated once. Releasing the last reference ends the connection. A reader that
/// falls behind makes the server wait: once `bufferLimit` messages wait for it, the
/// connection stops reading from its socket until half of them were taken.
public final class WebSocket: AsyncSequence, Sendable {
    /// One message: text (UTF-8) or binary.
    public enum Message: Sendable, Equatable {
        case text(String)
        case binary([UInt8])
    }

    public typealias Element = Message

    /// The subprotocol the server chose, if any.
    public let subprotocol: String?
    /// The server's `101 Switching Protocols` response.
    public let response: HTTPResponse
    private let connection: any WebSocketConnection
    private let messages: AsyncThrowingStream<Message, any Error>
    private let ending: Locked<(code: Int, reason: String)?>
    private let flow: ReadingFlow

    fileprivate init(opening: WebSocketOpening, connection: any WebSocketConnection,
                     messages: AsyncThrowingStream<Message, any Error>, ending: Locked<(code: Int, reason: String)?>,
                     flow: ReadingFlow) {
        subprotocol = opening.subprotocol
        response = opening.response
        self.connection = connection
        self.messages = messages
        self.ending = ending
        self.flow = flow
    }

    deinit { connection.abandon() }

    /// The messages in order; each one taken lets the connection read again once the
    /// reader has caught up by half.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncThrowingStream<Message, any Error>.AsyncIterator
        fileprivate let flow: ReadingFlow

        public mutating func next() async throws -> Message? {
            let message = try await base.next()
            if message != nil { flow.took() }
            return message
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: messages.makeAsyncIterator(), flow: flow)
    }

    /// Queues a text message; throws `notConnected` once the connection is closing
    /// and `tooLarge` when the queue already holds `maxQueuedBytes` the server has not
    /// taken.
    public func send(_ text: String) async throws(NetworkError) {
        var text = text
        try text.withUTF8 { bytes in
            Result { () throws(NetworkError) in try connection.send(.text, UnsafeRawBufferPointer(bytes)) }
        }.get()
    }

    /// Queues a binary message (see `send(_:)` for text).
    public func send(_ bytes: [UInt8]) async throws(NetworkError) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(NetworkError) in try connection.send(.binary, buffer) }
        }.get()
    }

    /// Starts the closing handshake; the sequence ends when the server answers (or
    /// fails with `timeout` after `closeTimeout`).
    public func close(code: Int = 1000, reason: String = "") async throws(NetworkError) {
        try connection.close(code: code, reason: reason)
    }

    /// The server's close code once the connection ended (1005: its close frame had
    /// none; 1006: it ended without one); nil while open.
    public var closeCode: Int? { ending.withLock { $0?.code } }
    /// The reason of the server's close frame, once the connection ended.
    public var closeReason: String? { ending.withLock { $0?.reason } }
}

extension NetlayerClient {
    /// Opens a WebSocket to `endpoint` (a GET; its path may be a `ws://` or `wss://`
    /// URL with `isFullPath`) and waits for the handshake. Throws the handshake's
    /// failure: `invalidRequest` for what cannot open one, `status` for an answer
    /// other than 101, `protocol`, `tls`, `timeout`, ...
    ///
    /// - Parameter bufferLimit: messages held for a reader that has not taken them
    ///   yet before the connection stops reading from its socket (the server then
    ///   waits, by TCP flow control); it reads again when half of them were taken.
    ///   Over a transport that cannot pause, a reader more than `bufferLimit` plus
    ///   4096 messages behind fails the connection with `tooLarge` rather than let a
    ///   fast server fill memory.
    public func webSocket(_ endpoint: Endpoint<JSON>, options: WebSocketOptions = WebSocketOptions(),
                          bufferLimit: Int = 4096) async throws(NetworkError) -> WebSocket {
        var endpoint = endpoint
        endpoint.path = WebSocketOptions.httpURL(endpoint.path)
        let (messages, continuation) = AsyncThrowingStream.makeStream(of: WebSocket.Message.self, throwing: (any Error).self,
                                                                      bufferingPolicy: .bufferingOldest(ReadingFlow.hardLimit(for: max(1, bufferLimit))))
        let opened = OneShot<Result<WebSocketOpening, NetworkError>>()
        let ending = Locked<(code: Int, reason: String)?>(nil)
        let failure = Locked<NetworkError?>(nil)
        let connectionBox = Locked<(any WebSocketConnection)?>(nil)
        let flow = ReadingFlow(limit: max(1, bufferLimit))
        let handlers = WebSocketHandlers(opened: { opened.fulfil(.success($0)) }, message: { kind, bytes in
            let message: WebSocket.Message = kind == .text ? .text(String(decoding: bytes, as: UTF8.self)) : .binary([UInt8](bytes))
            if case .dropped = continuation.yield(message) {
                failure.withLock { $0 = $0 ?? .tooLarge("the WebSocket's reader is \(flow.hardLimit) messages behind") }
                connectionBox.withLock { $0 }?.abandon()
                continuation.finish(throwing: failure.withLock { $0 })
                return
            }
            flow.received()
        }, failed: { error, _ in
            failure.withLock { $0 = $0 ?? error }
            opened.fulfil(.failure(error))
        }, closed: { code, reason in
            ending.withLock { $0 = (code, reason) }
            let error = failure.withLock { $0 }
            opened.fulfil(.failure(error ?? .notConnected("the server closed the WebSocket (\(code)) before it opened")))
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        })
        if Task.isCancelled { throw .cancelled }
        let connection = try openWebSocket(endpoint, options: options, handlers: handlers)
        connectionBox.withLock { $0 = connection }
        flow.attach { connection.pauseReading($0) }
        // Cancelling the awaiting Task ends the handshake, as it ends a request: the
        // caller has no WebSocket to close until it opens.
        let outcome = await withTaskCancellationHandler {
            await opened.value
        } onCancel: {
            opened.fulfil(.failure(.cancelled))
        }
        switch outcome {
        case .success(let opening):
            return WebSocket(opening: opening, connection: connection, messages: messages, ending: ending, flow: flow)
        case .failure(let error):
            connection.abandon()
            throw error
        }
    }
}

/// A value set once, from any thread, and awaited.
private final class OneShot<Value: Sendable>: Sendable {
    private let state = Locked<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    func fulfil(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
