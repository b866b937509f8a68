import NetlayerJSON

/// A transport that can open WebSocket connections (RFC 6455) over the connections it
/// makes for requests, with the same settings. The curl transport is one; a stub or
/// cassette transport is not.
public protocol WebSocketTransport: Sendable {
    /// Opens a connection with the opening handshake `request` describes (a GET of an
    /// http or https URL, built as every request is) and returns at once; `handlers`
    /// report what happens, on a transport thread, one at a time. `prepare` runs first,
    /// on the transport's own thread (the client's adapter and logger, as for a
    /// request's attempt); what it throws fails the connection. Throws, and no handler
    /// runs, when the transport cannot start the connection at all (its thread cannot
    /// start): a handler must never run before this returns.
    func openWebSocket(_ request: HTTPRequest, options: WebSocketOptions,
                       prepare: @escaping @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest,
                       handlers: WebSocketHandlers) throws(NetworkError) -> any WebSocketConnection
}

/// What a WebSocket is: text (UTF-8) or binary.
public enum WebSocketMessageKind: Int32, Sendable {
    case text = 1
    case binary = 2
}

/// What a server answered to the opening handshake.
public struct WebSocketOpening: Sendable {
    /// The subprotocol the server chose (one of those offered), or nil.
    public var subprotocol: String?
    /// The `101 Switching Protocols` response (no body).
    public var response: HTTPResponse

    public init(subprotocol: String?, response: HTTPResponse) {
        self.subprotocol = subprotocol
        self.response = response
    }
}

/// The events of one WebSocket connection, each on a transport thread, one at a
/// time and in order: `opened` at most once and before any message; `failed` at most
/// once; `closed` exactly once and last (also after a failure, or when the handshake
/// never completed).
public struct WebSocketHandlers: Sendable {
    public var opened: @Sendable (WebSocketOpening) -> Void
    /// A whole message; the bytes are valid only during the call (text is valid UTF-8).
    public var message: @Sendable (WebSocketMessageKind, UnsafeRawBufferPointer) -> Void
    /// Why the connection failed, and the handshake's response when it had one (a
    /// status other than 101, say).
    public var failed: @Sendable (NetworkError, HTTPResponse?) -> Void
    /// The close code the server sent (1005 when its close frame had none; 1006 when
    /// the connection ended without one) and its reason.
    public var closed: @Sendable (Int, String) -> Void

    public init(opened: @escaping @Sendable (WebSocketOpening) -> Void,
                message: @escaping @Sendable (WebSocketMessageKind, UnsafeRawBufferPointer) -> Void,
                failed: @escaping @Sendable (NetworkError, HTTPResponse?) -> Void,
                closed: @escaping @Sendable (Int, String) -> Void) {
        self.opened = opened
        self.message = message
        self.failed = failed
        self.closed = closed
    }
}

/// One open (or opening) WebSocket connection. Every method may be called from any
/// thread, also from inside the connection's handlers.
public protocol WebSocketConnection: AnyObject, Sendable {
    /// Queues a message; throws when the connection is closing or closed
    /// (`notConnected`), when text is not UTF-8 (`invalidRequest`), or when the queue
    /// would hold more than `maxQueuedBytes` (`tooLarge`). Messages sent before the
    /// handshake completes go out after it.
    func send(_ kind: WebSocketMessageKind, _ bytes: UnsafeRawBufferPointer) throws(NetworkError)
    /// Starts the closing handshake with `code` (1000, or 3000-4999) and `reason` (at
    /// most 123 bytes of UTF-8); `closed` reports its end. Throws `invalidRequest` for
    /// a code or reason that cannot be sent; a connection already closing is left as
    /// it is.
    func close(code: Int, reason: String) throws(NetworkError)
    /// Ends the connection without waiting (a close frame with 1001 is sent if the
    /// socket takes it) and stops the handlers: when it returns, none runs any more,
    /// except the one it was called from.
    func abandon()
    /// Stops (`true`) or resumes (`false`) reading from the socket, so that a reader
    /// that cannot keep up makes the server wait (TCP flow control) instead of
    /// holding its messages. Messages whose bytes were read already are still
    /// delivered; a close (`close(code:reason:)`) reads again, to see the answer.
    func pauseReading(_ paused: Bool)
}

extension WebSocketConnection {
    /// Transports that cannot pause read on.
    public func pauseReading(_ paused: Bool) {}
}

extension WebSocketOptions {
    /// Whether `code` is one an endpoint may send in a close frame (RFC 6455 section 7.4).
    public static func isSendableCloseCode(_ code: Int) -> Bool {
        code == 1000 || (3000...4999).contains(code)
    }
}
