import CCurl
import NetlayerCore
import NetlayerJSON

extension CurlSessionManager: WebSocketTransport {
    /// Opens a WebSocket over a connection libcurl makes with this transport's
    /// settings and share (DNS cache, TLS sessions, cookie jar), driven by its event
    /// loop (`CurlWebSocket`).
    public func openWebSocket(_ request: HTTPRequest, options: WebSocketOptions,
                              prepare: @escaping @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest,
                              handlers: WebSocketHandlers) -> any WebSocketConnection {
        let loop: CurlEventLoop?
        var failure: NetworkError?
        do {
            loop = try startedLoop()
        } catch {
            loop = nil
            failure = error
        }
        let socket = CurlWebSocket(request: request, options: options, prepare: prepare, handlers: handlers, loop: loop, share: share,
                                   registry: webSockets)
        if let loop {
            loop.execute { socket.prepareAndQueue() }
        } else {
            socket.connectFailed(failure ?? .cancelledBecause("the client was closed"))
        }
        return socket
    }
}
