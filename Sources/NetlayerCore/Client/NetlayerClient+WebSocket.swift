import NetlayerJSON

extension NetlayerClient {
    /// Opens a WebSocket to what `endpoint` describes, built as every request of the
    /// client is (base URL, query, default headers, `auth`, the cookie jar) and sent
    /// over a connection made with the client's settings (TLS, proxy, Unix socket,
    /// `resolve`, timeouts). The client's adapter and logger see the handshake's
    /// request as an attempt, and the logger its response and the connection's
    /// failure, as for a request. Returns at once; `handlers` report the rest.
    ///
    /// Throws `invalidRequest` for what cannot open a WebSocket (a method other than
    /// GET, a body, a header the handshake writes itself, digest authentication, a
    /// transport without WebSockets) and for options out of range, and `generic` when
    /// the transport's thread cannot start; later failures (an adapter's header the
    /// handshake writes) go to `handlers.failed`. No handler runs before it returns.
    public func openWebSocket(_ endpoint: some Requestable, options: WebSocketOptions,
                              handlers: WebSocketHandlers) throws(NetworkError) -> any WebSocketConnection {
        try options.validate()
        let request = try makeRequest(for: endpoint)
        try WebSocketOptions.checkHandshakeHeaders(request.headers)
        guard request.method == .get else {
            throw .invalidRequest("a WebSocket opens with GET, not \(request.method.rawValue)")
        }
        if request.body != nil || request.transfer.multipart != nil || request.transfer.uploadFrom != nil {
            throw .invalidRequest("a WebSocket's opening request has no body")
        }
        if case .digest? = request.options.auth {
            throw .invalidRequest("auth digest cannot open a WebSocket (its challenge needs a request of its own); use basic or bearer")
        }
        guard let transport = transport as? any WebSocketTransport else {
            throw .invalidRequest("this client's transport (a stub or cassette) cannot open WebSockets")
        }
        let context = RequestContext(id: newID(), attempt: 1, cookies: transport.cookieSourceIfAny)
        let (adapter, logger) = (interceptor, self.logger)
        // The request as sent (adapted), for the logger's response and error events.
        let sent = Locked<HTTPRequest?>(nil)
        let logged = WebSocketHandlers(opened: { opening in
            if let request = sent.withLock({ $0 }) { logger.log(response: opening.response, request: request, context: context) }
            handlers.opened(opening)
        }, message: handlers.message, failed: { error, response in
            if let request = sent.withLock({ $0 }) {
                if let response { logger.log(response: response, request: request, context: context) }
                logger.log(error: error, request: request, context: context)
            }
            handlers.failed(error, response)
        }, closed: handlers.closed)
        return try transport.openWebSocket(request, options: options, prepare: { request throws(NetworkError) in
            var request = request
            if let adapter {
                request = try adapter.adapt(request, context: context)
                try request.headers.validate()
                try WebSocketOptions.checkHandshakeHeaders(request.headers)
            }
            logger.log(request: request, context: context)
            sent.withLock { $0 = request }
            return request
        }, handlers: logger.isEnabled ? logged : handlers)
    }
}

extension WebSocketTransport {
    /// The transport's cookie jar, when it is also a `NetworkSessionManager` with one.
    var cookieSourceIfAny: (any CookieSource)? { (self as? any NetworkSessionManager)?.cookieSource }
}
