import NetlayerJSON

/// What a WebSocket connection agrees to beyond its opening request (`HTTPRequest`,
/// built as every request is): the subprotocols it offers and the bounds on what the
/// server may make it hold or wait for.
public struct WebSocketOptions: Sendable, Equatable {
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference. A
    /// server that picks one not offered fails the handshake.
    public var protocols: [String]
    /// The largest message (all its fragments) accepted from the server; a larger one
    /// closes the connection with 1009.
    public var maxMessageBytes: Int
    /// The most bytes `send` may have queued and not yet written to the socket; a send
    /// beyond it fails (kind `too_large`), so a server that stops reading cannot make
    /// the client hold ever more memory.
    public var maxQueuedBytes: Int
    /// How long the connection may receive nothing before it fails with `timeout`
    /// (nil: no limit).
    public var idleTimeout: Double?
    /// When nothing has arrived from the server for this long, a ping is sent; when
    /// still nothing has arrived after as long again, the connection fails with
    /// `timeout` (nil: no pings). Keeps a connection that is quiet by design alive
    /// through NATs and proxies that drop idle ones, and notices a server or a path
    /// that went away without a word.
    public var pingInterval: Double?
    /// How long a close waits for the server's close frame before the connection ends
    /// anyway (kind `timeout`).
    public var closeTimeout: Double
    /// Whether permessage-deflate (RFC 7692) is offered; when the server agrees,
    /// messages are compressed both ways.
    public var compression: Bool
    /// Messages longer than this are sent as fragments (a first frame and
    /// continuation frames) of at most this many bytes; nil sends each in one frame.
    public var fragmentBytes: Int?

    public static let defaultMaxMessageBytes = 16 << 20
    public static let defaultMaxQueuedBytes = 16 << 20
    public static let defaultCloseTimeout = 5.0
    /// The largest fragment the framing library writes at once.
    public static let maxFragmentBytes = 4096

    public init(protocols: [String] = [], maxMessageBytes: Int = defaultMaxMessageBytes,
                maxQueuedBytes: Int = defaultMaxQueuedBytes, idleTimeout: Double? = nil,
                closeTimeout: Double = defaultCloseTimeout, compression: Bool = true, fragmentBytes: Int? = nil,
                pingInterval: Double? = nil) {
        self.protocols = protocols
        self.maxMessageBytes = maxMessageBytes
        self.maxQueuedBytes = maxQueuedBytes
        self.idleTimeout = idleTimeout
        self.closeTimeout = closeTimeout
        self.compression = compression
        self.fragmentBytes = fragmentBytes
        self.pingInterval = pingInterval
    }

    /// Throws `invalidRequest` naming the key of a value that cannot be used.
    public func validate() throws(NetworkError) {
        for (index, name) in protocols.enumerated() where name.isEmpty || !name.utf8.allSatisfy(isHTTPTokenByte) {
            throw .invalidRequest("websocket key 'protocols'[\(index)] '\(name.escapedForMessage)' is not an HTTP token (RFC 6455 section 4.1)")
        }
        if Set(protocols).count != protocols.count { throw .invalidRequest("websocket key 'protocols' names a subprotocol twice") }
        guard maxMessageBytes >= 1 else { throw .invalidRequest("websocket key 'maxMessageBytes' must be at least 1") }
        guard maxQueuedBytes >= 1 else { throw .invalidRequest("websocket key 'maxQueuedBytes' must be at least 1") }
        try HTTPRequest.checkSeconds(idleTimeout, key: "websocket key 'idleTimeout'")
        try HTTPRequest.checkSeconds(pingInterval, key: "websocket key 'pingInterval'")
        try HTTPRequest.checkSeconds(closeTimeout, key: "websocket key 'closeTimeout'")
        if let fragmentBytes, !(1...Self.maxFragmentBytes).contains(fragmentBytes) {
            throw .invalidRequest("websocket key 'fragmentBytes' must be between 1 and \(Self.maxFragmentBytes)")
        }
    }

    /// Headers the opening handshake writes itself (lowercased): a caller cannot set
    /// them, nor the framing fields, since the handshake has no body.
    public static let handshakeHeaders: Set<String> = [
        "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
        "sec-websocket-extensions", "sec-websocket-accept", "content-length", "transfer-encoding",
    ]

    /// Throws `invalidRequest` for the first of `headers` the handshake writes itself.
    public static func checkHandshakeHeaders(_ headers: HTTPHeaders) throws(NetworkError) {
        for field in headers where handshakeHeaders.contains(field.name.lowercased()) {
            throw .invalidRequest("header '\(field.name)' is set by the WebSocket handshake; offer subprotocols with 'protocols'")
        }
    }

    /// `ws://` and `wss://` URLs as the `http://` and `https://` URLs a WebSocket's
    /// connection is made to (RFC 6455 section 3); anything else as it is.
    public static func httpURL(_ path: String) -> String {
        let lower = path.prefix(6).lowercased()
        if lower.hasPrefix("ws://") { return "http://" + path.dropFirst(5) }
        if lower.hasPrefix("wss://") { return "https://" + path.dropFirst(6) }
        return path
    }
}
