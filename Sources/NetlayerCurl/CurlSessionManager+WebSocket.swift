import CCurl
import NetlayerCore
import NetlayerJSON

extension CurlSessionManager: WebSocketTransport {
    /// Opens a WebSocket over a connection libcurl makes with this transport's
    /// settings and share (DNS cache, TLS sessions, cookie jar), driven by its event
    /// loop (`CurlWebSocket`).
    public func openWebSocket(_ request: HTTPRequest, options: WebSocketOptions,
                              prepare: @escaping @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest,
                              handlers: WebSocketHandlers) throws(NetworkError) -> any WebSocketConnection {
        let loop = try startedLoop()
        let socket = CurlWebSocket(request: request, options: options, prepare: prepare, handlers: handlers, loop: loop, share: share,
                                   registry: webSockets)
        // Nothing runs before this returns: what cannot be queued fails here, not
        // through a handler called inside the caller's open.
        guard let loop, loop.submit({ socket.prepareAndQueue() }) else {
            if loop?.isStopping ?? true { throw .cancelledBecause("the client was closed") }
            throw .generic("could not start the event-loop thread", curlCode: -1)
        }
        return socket
    }
}
