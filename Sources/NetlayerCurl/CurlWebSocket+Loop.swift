import CCurl
import CWslay
import Glibc
import NetlayerCore
import NetlayerJSON

/// The loop-thread side of a WebSocket: the handshake over the connected socket, then
/// frames through wslay, the send queue, the close handshake and the time limits.
extension CurlWebSocket {
    /// The opener is done: the socket joins the loop and the handshake starts.
    func attach(_ fd: Int32) {
        guard phase == .connecting else { return }
        if registry.isShutDown || (try! withOutbox { $0.abandoned }) {
            fail(WebSocketFailure(.cancelled))
            return
        }
        socket = fd
        phase = .handshaking
        updateEvents()
        let remaining = handshakeLimit - Double(Platform.MonotonicClock.now() &- startedAt) / 1e9
        after(max(0, remaining)) { socket in
            guard socket.phase == .handshaking else { return }
            socket.fail(WebSocketFailure(.timedOut("the WebSocket handshake did not complete within \(socket.handshakeLimit) s (timeout)")))
        }
    }

    /// Runs `task` with this connection on the loop after `seconds`, unless it is gone.
    func after(_ seconds: Double, _ task: @escaping @Sendable (CurlWebSocket) -> Void) {
        guard let loop else { return }
        loop.execute(after: seconds) { [weak self] in
            guard let self, self.phase != .ended else { return }
            task(self)
        }
    }

    // MARK: WatchedDescriptor

    package func descriptorReady(_ flags: Int32) {
        switch phase {
        case .handshaking:
            advanceHandshake()
        case .open:
            if flags & (CURL_CSELECT_IN | CURL_CSELECT_ERR) != 0 {
                if !readingPaused {
                    receive()
                } else if flags & CURL_CSELECT_ERR != 0 {
                    // epoll reports an error or hang-up whatever it is asked: a write
                    // may find it now; else the socket is left alone until reading
                    // resumes and finds it.
                    pump()
                    if phase == .open, socket >= 0, let loop {
                        _ = loop.watched.watch(socket, events: 0, for: self)  // known still, for the loop's stop
                        watchedEvents = 0
                    }
                    return
                }
            }
            if phase == .open { pump() }
        case .connecting, .ended:
            break
        }
    }

    package func loopStopping() {
        watchedEvents = 0  // the loop took the socket out of its set
        if failure == nil { failure = WebSocketFailure(.cancelledBecause("the client was closed")) }
        end(sendingClose: 1001)
    }

    /// Watches the socket for what the connection waits for now.
    func updateEvents() {
        guard phase != .ended, socket >= 0, let loop else { return }
        var events: Int32 = 0
        switch phase {
        case .handshaking:
            events = handshakeSent < (handshake?.requestBytes.count ?? 0) ? CURL_POLL_OUT : CURL_POLL_IN
        case .open:
            if let context {
                if wslay_event_get_read_enabled(context) != 0, !readingPaused { events |= CURL_POLL_IN }
                if wslay_event_want_write(context) != 0 { events |= CURL_POLL_OUT }
            }
        default:
            break
        }
        if events == watchedEvents { return }
        // None (paused, nothing to send) leaves the socket known to the loop, whose
        // stop ends the connection.
        if !loop.watched.watch(socket, events: events, for: self) {
            fail(WebSocketFailure(.generic("the event loop cannot watch the WebSocket's socket", curlCode: -1)))
            return
        }
        watchedEvents = events
    }

    // MARK: Opening handshake

    private func advanceHandshake() {
        guard let easy, let handshake else { return }
        while handshakeSent < handshake.requestBytes.count {
            var sent = 0
            let rc = handshake.requestBytes.withUnsafeBytes {
                curl_easy_send(easy, $0.baseAddress! + handshakeSent, $0.count - handshakeSent, &sent)
            }
            if rc == CURLE_AGAIN { break }
            guard rc == CURLE_OK else { return fail(brokenConnection(rc, while: "sending the WebSocket handshake")) }
            handshakeSent += sent
        }
        if handshakeSent == handshake.requestBytes.count {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while WebSocketHandshake.headerEnd(in: received) == nil {
                var count = 0
                let rc = chunk.withUnsafeMutableBytes { curl_easy_recv(easy, $0.baseAddress, $0.count, &count) }
                if rc == CURLE_AGAIN { break }
                guard rc == CURLE_OK else { return fail(brokenConnection(rc, while: "reading the WebSocket handshake")) }
                guard count > 0 else {
                    return fail(WebSocketFailure(.protocolViolation(
                        "the server closed the connection before answering the WebSocket handshake", curlCode: 0)))
                }
                received += chunk[0..<count]
                if received.count > WebSocketHandshake.maxResponseBytes, WebSocketHandshake.headerEnd(in: received) == nil {
                    return fail(WebSocketFailure(.protocolViolation(
                        "the server's WebSocket handshake response is longer than \(WebSocketHandshake.maxResponseBytes) bytes",
                        curlCode: 0)))
                }
            }
            if let end = WebSocketHandshake.headerEnd(in: received) {
                switch handshake.check(received[0..<end], url: request.url) {
                case .failure(let failure):
                    return fail(failure)
                case .success(let agreed):
                    early = Array(received[end...])
                    received = []
                    compression = agreed.compression
                    return open(agreed.response, subprotocol: agreed.subprotocol)
                }
            }
        }
        updateEvents()
    }

    private func brokenConnection(_ rc: CURLcode, while doing: String) -> WebSocketFailure {
        let detail = String(cString: errorBuffer)
        return WebSocketFailure(.notConnected("the connection broke while \(doing): "
                                              + (detail.isEmpty ? String(cString: curl_easy_strerror(rc)) : detail)))
    }

    private func open(_ response: HTTPResponse, subprotocol: String?) {
        var callbacks = wslay_event_callbacks()
        callbacks.recv_callback = { _, buffer, length, _, user in
            Unmanaged<CurlWebSocket>.fromOpaque(user!).takeUnretainedValue().readSocket(buffer!, length)
        }
        callbacks.send_callback = { _, data, length, flags, user in
            Unmanaged<CurlWebSocket>.fromOpaque(user!).takeUnretainedValue()
                .writeSocket(data!, length, more: flags & Int32(nl_wslay_msg_more) != 0)
        }
        callbacks.genmask_callback = { _, buffer, length, _ in nl_ws_random(buffer, length) }
        callbacks.on_msg_recv_callback = { _, argument, user in
            Unmanaged<CurlWebSocket>.fromOpaque(user!).takeUnretainedValue().received(argument!.pointee)
        }
        callbacks.on_frame_recv_start_callback = { _, argument, user in
            Unmanaged<CurlWebSocket>.fromOpaque(user!).takeUnretainedValue().frameStarted(argument!.pointee)
        }
        var made: OpaquePointer?
        guard wslay_event_context_client_init(&made, &callbacks, Unmanaged.passUnretained(self).toOpaque()) == 0,
              let made else {
            return fail(WebSocketFailure(.generic("out of memory for the WebSocket", curlCode: 27)))
        }
        context = made
        wslay_event_config_set_max_recv_msg_length(made, UInt64(options.maxMessageBytes))
        if compression != nil { wslay_event_config_set_allowed_rsv_bits(made, nl_wslay_rsv1) }
        phase = .open
        lastHeard = Platform.MonotonicClock.now()
        deliver { $0.opened(WebSocketOpening(subprotocol: subprotocol, response: response)) }
        if let idle = options.idleTimeout { watchIdleness(idle) }
        if let interval = options.pingInterval { keepAlive(every: interval) }
        if !early.isEmpty { receive() }
        if phase == .open { pump() }
    }

    private func watchIdleness(_ idle: Double) {
        let due = lastHeard &+ UInt64(idle * 1e9)
        let now = Platform.MonotonicClock.now()
        after(due > now ? Double(due - now) / 1e9 : 0) { socket in
            guard socket.phase == .open else { return }
            // While reading is paused the silence is the reader's, not the server's.
            if socket.readingPaused { socket.lastHeard = Platform.MonotonicClock.now() }
            if Platform.MonotonicClock.now() &- socket.lastHeard >= UInt64(idle * 1e9) {
                socket.fail(WebSocketFailure(.timedOut("nothing arrived on the WebSocket for \(idle) s (idleTimeout)")),
                            closing: 1001)
            } else {
                socket.watchIdleness(idle)
            }
        }
    }

    /// `pingInterval`: after `interval` of silence from the server a ping goes out
    /// (wslay sends control frames between the fragments of a message); after twice
    /// `interval` the connection fails. Anything that arrives, the pong included,
    /// ends the silence.
    private func keepAlive(every interval: Double) {
        let step = max(UInt64(interval * 1e9), 1_000_000)  // a millisecond at least: a ping before the verdict
        let now = Platform.MonotonicClock.now()
        let silence = now &- lastHeard
        let due = lastHeard &+ (silence >= step ? 2 * step : step)
        after(due > now ? Double(due - now) / 1e9 : 0) { socket in
            guard socket.phase == .open, let context = socket.context else { return }
            // While reading is paused the silence is the reader's, not the server's.
            if socket.readingPaused { socket.lastHeard = Platform.MonotonicClock.now() }
            let silence = Platform.MonotonicClock.now() &- socket.lastHeard
            if silence >= 2 * step {
                return socket.fail(WebSocketFailure(.timedOut(
                    "nothing arrived on the WebSocket for \(interval) s after a ping (pingInterval)")), closing: 1001)
            }
            if silence >= step, wslay_event_get_close_sent(context) == 0 {
                var ping = wslay_event_msg(opcode: UInt8(WSLAY_PING.rawValue), msg: nil, msg_length: 0)
                _ = wslay_event_queue_msg(context, &ping)
                socket.pump()
            }
            if socket.phase == .open { socket.keepAlive(every: interval) }
        }
    }

    /// Reading goes on (resumed, or a close was requested): what wslay or the
    /// handshake's read left buffered is delivered now (epoll does not see it), then
    /// the socket is watched for more.
    func readingResumed() {
        guard phase == .open, !readingPaused else { return }
        lastHeard = Platform.MonotonicClock.now()
        receive()
        if phase == .open { pump() }
    }
}
