import CCurl
import CWslay
import Glibc
import NetlayerCore
import NetlayerJSON

/// Frames: wslay's I/O callbacks over `curl_easy_recv`/`curl_easy_send`, received
/// messages, the send queue, and how a connection ends. Loop thread.
extension CurlWebSocket {
    // MARK: wslay's callbacks

    func readSocket(_ buffer: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int {
        if readingPaused, let context {
            // Paused (maybe by the handler that just ran): wslay delivers what it has
            // buffered and reads no more.
            wslay_event_set_error(context, Int32(nl_wslay_err_wouldblock))
            return -1
        }
        if earlyOffset < early.count {
            let count = min(length, early.count - earlyOffset)
            early.withUnsafeBytes { buffer.update(from: $0.bindMemory(to: UInt8.self).baseAddress! + earlyOffset, count: count) }
            earlyOffset += count
            if earlyOffset == early.count {
                early = []
                earlyOffset = 0
            }
            closeCodes.follow(buffer, count)
            return count
        }
        guard let easy, let context else { return -1 }
        var count = 0
        let rc = curl_easy_recv(easy, buffer, length, &count)
        if rc == CURLE_AGAIN {
            wslay_event_set_error(context, Int32(nl_wslay_err_wouldblock))
            return -1
        }
        if rc != CURLE_OK || count == 0 {
            if rc == CURLE_OK { peerClosedSocket = true } else { socketFailure = brokenConnection(rc) }
            wslay_event_set_error(context, Int32(nl_wslay_err_callback_failure))
            return -1
        }
        lastHeard = Platform.MonotonicClock.now()
        closeCodes.follow(buffer, count)
        return count
    }

    func writeSocket(_ data: UnsafePointer<UInt8>, _ length: Int, more: Bool) -> Int {
        guard let easy, let context else { return -1 }
        if more, heldHeader.isEmpty, length <= Self.maxFrameHeaderBytes {
            heldHeader.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            return length  // taken: it leads the next send
        }
        let held = heldHeader.count
        var count = 0
        let rc: CURLcode
        if held == 0 {
            rc = curl_easy_send(easy, data, length, &count)
        } else {
            rc = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: held + length) { joined in
                _ = joined.initialize(from: heldHeader)
                joined.baseAddress!.advanced(by: held).initialize(from: data, count: length)
                return curl_easy_send(easy, joined.baseAddress, held + length, &count)
            }
        }
        if rc == CURLE_AGAIN {
            wslay_event_set_error(context, Int32(nl_wslay_err_wouldblock))
            return -1
        }
        guard rc == CURLE_OK else {
            socketFailure = brokenConnection(rc)
            wslay_event_set_error(context, Int32(nl_wslay_err_callback_failure))
            return -1
        }
        if held > 0 {
            // The held bytes went first; what is left of them leads the next send.
            heldHeader.removeFirst(min(count, held))
            count -= min(count, held)
            if count == 0 {
                wslay_event_set_error(context, Int32(nl_wslay_err_wouldblock))
                return -1
            }
        }
        return count
    }

    /// The longest frame header (2 bytes, an 8-byte length, a 4-byte mask).
    static let maxFrameHeaderBytes = 14

    private func brokenConnection(_ rc: CURLcode) -> WebSocketFailure {
        let detail = String(cString: errorBuffer)
        return WebSocketFailure(.notConnected("the WebSocket connection broke: "
                                              + (detail.isEmpty ? String(cString: curl_easy_strerror(rc)) : detail)))
    }

    /// RFC 6455 section 5.5.1: a close frame with a body starts it with a 2-byte status
    /// code. wslay takes a 1-byte body for no code (1005) and would answer with a close
    /// without one, so such a frame fails the connection as its header arrives: a close
    /// with 1002 is queued first (wslay then queues no answer of its own), reading stops,
    /// and `receive` ends the connection; `received` ignores the frame if it came whole.
    func frameStarted(_ frame: wslay_event_on_frame_recv_start_arg) {
        guard UInt32(frame.opcode) == WSLAY_CONNECTION_CLOSE.rawValue, frame.payload_length == 1, let context else { return }
        if failure == nil {
            failure = WebSocketFailure(.protocolViolation("the server sent a close frame of 1 byte, too short for its"
                                                          + " status code (closed with 1002)", curlCode: 0))
        }
        _ = wslay_event_queue_close(context, 1002, nil, 0)
        wslay_event_shutdown_read(context)
    }

    func received(_ message: wslay_event_on_msg_recv_arg) {
        let bytes = UnsafeRawBufferPointer(start: message.msg, count: message.msg_length)
        let opcode = UInt32(message.opcode)
        if message.rsv & nl_wslay_rsv1 != 0, let compression,
           opcode == WSLAY_TEXT_FRAME.rawValue || opcode == WSLAY_BINARY_FRAME.rawValue {
            return receivedCompressed(bytes, text: opcode == WSLAY_TEXT_FRAME.rawValue, compression)
        }
        switch opcode {
        case WSLAY_TEXT_FRAME.rawValue:
            deliver { $0.message(.text, bytes) }
        case WSLAY_BINARY_FRAME.rawValue:
            deliver { $0.message(.binary, bytes) }
        case WSLAY_CONNECTION_CLOSE.rawValue:
            if bytes.count == 1 { break }  // too short: failed by `frameStarted`
            closeCode = message.status_code == 0 ? 1005
                : message.status_code == 1000 ? closeCodes.rewrittenCode ?? 1000 : Int(message.status_code)
            closeReason = bytes.count > 2 ? String(decoding: bytes[2...], as: UTF8.self) : ""
        default:
            break  // ping (wslay answers it) and pong
        }
    }

    /// A deflated message: inflated within `maxMessageBytes` (a small frame can
    /// inflate to gigabytes), and text checked as UTF-8 (wslay cannot before inflating).
    private func receivedCompressed(_ bytes: UnsafeRawBufferPointer, text: Bool, _ compression: WebSocketCompression) {
        func refuse(_ code: UInt16, _ error: NetworkError) {
            if failure == nil { failure = WebSocketFailure(error) }
            if let context {
                _ = wslay_event_queue_close(context, code, nil, 0)
                wslay_event_shutdown_read(context)
            }
        }
        switch compression.inflate(bytes, limit: options.maxMessageBytes) {
        case .tooLarge:
            refuse(1009, .tooLarge("the server sent a message that inflates to more than maxMessageBytes"
                                   + " (\(options.maxMessageBytes)) bytes (closed with 1009)"))
        case .corrupt:
            refuse(1007, .protocolViolation("the server sent a compressed message that does not inflate (closed with 1007)",
                                            curlCode: 0))
        case .message(let data, let count):
            defer { free(data) }
            let inflated = UnsafeRawBufferPointer(start: data, count: count)
            if text {
                guard String(validating: inflated.bindMemory(to: UInt8.self), as: UTF8.self) != nil else {
                    return refuse(1007, .protocolViolation("the server sent a text message that is not UTF-8 (closed with 1007)",
                                                           curlCode: 0))
                }
                deliver { $0.message(.text, inflated) }
            } else {
                deliver { $0.message(.binary, inflated) }
            }
        }
    }

    // MARK: Receiving

    /// Reads what the socket has, through wslay, and acts on how the connection stands.
    func receive() {
        guard let context else { return }
        let rc = wslay_event_recv(context)
        if rc != 0 {
            if let socketFailure { return fail(socketFailure) }
            if peerClosedSocket {
                // The server hung up: after our close, that ends the closing handshake.
                if wslay_event_get_close_sent(context) != 0 { return end(sendingClose: nil) }
                return fail(WebSocketFailure(.protocolViolation(
                    "the server closed the connection without a close frame (1006)", curlCode: 0)))
            }
            return failOnMalformedHeader(context)
        }
        if wslay_event_get_read_enabled(context) == 0, failure != nil || wslay_event_get_close_received(context) == 0 {
            // wslay (or `frameStarted`, or an inflated message) failed the connection and
            // queued a close frame saying why, whose code wslay tells once it is written.
            if wslay_event_get_write_enabled(context) != 0 { _ = wslay_event_send(context) }
            let sent = Int(wslay_event_get_status_code_sent(context))
            let error: NetworkError = switch sent {
            case 1007: .protocolViolation("the server sent a text message, or a close reason, that is not UTF-8 (closed with 1007)", curlCode: 0)
            case 1009: .tooLarge("the server sent a message of more than maxMessageBytes (\(options.maxMessageBytes)) bytes"
                                 + " (closed with 1009)")
            case 1002: .protocolViolation("the server broke the WebSocket protocol: a masked frame, reserved bits, an"
                                          + " unknown opcode, a bad control frame or a close code no registry knows"
                                          + " (closed with 1002)", curlCode: 0)
            default: .protocolViolation("the server broke the WebSocket protocol (a text message that is not UTF-8, a"
                                        + " message over maxMessageBytes, a masked frame or a bad control frame)",
                                        curlCode: 0)
            }
            return fail(WebSocketFailure(error))
        }
    }

    /// A frame header wslay's parser refused (a control frame over 125 bytes or
    /// fragmented, a 64-bit length with its top bit set): wslay queues a close without
    /// a code for it, so that close is dropped and a 1002 one written in its place
    /// (RFC 6455 section 7.4.1), unless a frame of ours is half written, which a close
    /// frame cannot interrupt.
    private func failOnMalformedHeader(_ context: OpaquePointer) {
        if let easy, inFlightBytes == 0, heldHeader.isEmpty {
            wslay_event_shutdown_write(context)
            let mask = withUnsafeBytes(of: UInt32.random(in: 0...UInt32.max)) { Array($0) }
            let frame: [UInt8] = [0x88, 0x82] + mask + [0x03 ^ mask[0], 0xEA ^ mask[1]]  // close, masked, 1002
            var sent = 0
            _ = curl_easy_send(easy, frame, frame.count, &sent)  // best effort: the connection ends now
        }
        fail(WebSocketFailure(.protocolViolation("the server sent a malformed WebSocket frame header: a control frame"
                                                 + " over 125 bytes or fragmented, or a length out of range (closed"
                                                 + " with 1002)", curlCode: 0)))
    }

    // MARK: Sending

    /// The most frames wslay may hold unwritten besides the message being written
    /// before reading stops (`backlogged`): an empty pong counts no bytes but costs
    /// wslay about a hundred.
    static let maxQueuedControlFrames = 1024

    /// Whether wslay holds more unwritten frames than a server may make the client keep.
    /// wslay answers every ping with a pong, queued whether or not the socket takes it,
    /// so a server that pings without end and never reads would grow that queue without
    /// end (`maxQueuedBytes` bounds `send`, which feeds wslay one message at a time).
    /// While the frames queued besides that message are over `maxQueuedBytes` or
    /// `maxQueuedControlFrames`, the socket is not read (`readingPaused`, as when
    /// paused): the server waits (TCP flow control) until it reads what it was sent,
    /// and `pump` reads again once the socket took enough. So the one place that decides
    /// whether to read also bounds every frame wslay queues by itself, and every ping is
    /// still answered. Keeping only the latest pong (RFC 6455 section 5.5.3 allows it)
    /// would bound pongs alone and need a hand in wslay's queue, which offers none.
    /// Once a close is queued or sent, wslay queues nothing more, and the close's
    /// answer must be read.
    var backlogged: Bool {
        guard phase == .open, let context, !closeQueued, wslay_event_get_close_sent(context) == 0 else { return false }
        let frames = wslay_event_get_queued_msg_count(context) - (inFlightBytes > 0 ? 1 : 0)
        let bytes = wslay_event_get_queued_msg_length(context) - inFlightWireBytes
        return frames > Self.maxQueuedControlFrames || bytes > options.maxQueuedBytes
    }

    /// Moves queued messages (and then a requested close) into wslay one at a time and
    /// writes what the socket takes; ends the connection when both closes are done.
    func pump() {
        guard phase == .open, let context else { return }
        let wasBacklogged = backlogged
        while true {
            if wslay_event_want_write(context) == 0 {
                if inFlightBytes > 0 {
                    let done = inFlightBytes
                    inFlightBytes = 0
                    inFlightWireBytes = 0
                    fragmenting = nil
                    try! withOutbox { $0.bytes -= done }
                }
                guard wslay_event_get_write_enabled(context) != 0, queueNext(into: context) else { break }
            }
            if wslay_event_send(context) != 0 {
                return fail(socketFailure ?? WebSocketFailure(.notConnected("the WebSocket connection broke while sending")))
            }
            if wslay_event_want_write(context) != 0 { break }  // the socket is full: wait for it
        }
        if wslay_event_get_close_received(context) != 0, wslay_event_get_close_sent(context) != 0 {
            return end(sendingClose: nil)
        }
        // What wslay (or TLS) buffered is not seen by epoll; later, not from inside a read.
        if wasBacklogged, !backlogged { runOnLoop { [self] in readingResumed() } }
        updateEvents()
    }

    /// Hands wslay the next message, or the close once no message is left; false when
    /// there is nothing to hand.
    private func queueNext(into context: OpaquePointer) -> Bool {
        let next = try! withOutbox { box -> (WebSocketMessageKind, [UInt8])? in
            guard box.head < box.messages.count else { return nil }
            let message = box.messages[box.head]
            box.messages[box.head].bytes = []
            box.head += 1
            if box.head == box.messages.count {
                box.messages.removeAll(keepingCapacity: box.messages.count < 64)
                box.head = 0
            }
            return message
        }
        if let (kind, original) = next {
            let opcode = UInt8(kind == .text ? WSLAY_TEXT_FRAME.rawValue : WSLAY_BINARY_FRAME.rawValue)
            inFlightBytes = max(1, original.count)
            var bytes = original
            var rsv: UInt8 = 0
            if let compression, original.count >= WebSocketCompression.minimumBytes, let deflated = compression.deflate(original) {
                bytes = deflated
                rsv = nl_wslay_rsv1
            }
            var rc: Int32
            if let limit = options.fragmentBytes, bytes.count > limit {
                fragmenting = (bytes, 0)
                var message = wslay_event_fragmented_msg()
                message.opcode = opcode
                message.read_callback = { _, buffer, length, _, eof, user in
                    Unmanaged<CurlWebSocket>.fromOpaque(user!).takeUnretainedValue().nextFragment(buffer!, length, eof!)
                }
                rc = wslay_event_queue_fragmented_msg_ex(context, &message, rsv)
            } else {
                inFlightWireBytes = bytes.count
                rc = bytes.withUnsafeBufferPointer { buffer in
                    var message = wslay_event_msg(opcode: opcode, msg: buffer.baseAddress, msg_length: buffer.count)
                    return wslay_event_queue_msg_ex(context, &message, rsv)
                }
            }
            if original.isEmpty { try! withOutbox { $0.bytes += 1 } }  // counted as 1 until written
            return rc == 0
        }
        let close = try! withOutbox { box -> (Int, [UInt8])? in box.closeRequest.map { ($0.code, $0.reason) } }
        guard let (code, reason) = close, wslay_event_get_close_sent(context) == 0, !closeQueued else { return false }
        closeQueued = true
        _ = reason.withUnsafeBufferPointer { wslay_event_queue_close(context, UInt16(code), $0.baseAddress, $0.count) }
        return true
    }

    /// wslay's reader of a fragmented message: the next piece of `fragmenting`.
    func nextFragment(_ buffer: UnsafeMutablePointer<UInt8>, _ length: Int, _ eof: UnsafeMutablePointer<Int32>) -> Int {
        guard let (bytes, offset) = fragmenting else {
            eof.pointee = 1
            return 0
        }
        let count = min(length, options.fragmentBytes ?? length, bytes.count - offset)
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + offset, count: count) }
        fragmenting = (bytes, offset + count)
        if offset + count == bytes.count { eof.pointee = 1 }
        return count
    }

    // MARK: Ending

    /// Ends the connection with `failure` (the first one counts); `closing`, when the
    /// connection is open and has sent no close, is the close code it sends first.
    func fail(_ failure: WebSocketFailure, closing: UInt16? = nil) {
        if self.failure == nil { self.failure = failure }
        end(sendingClose: closing)
    }

    /// Closes the socket and reports the end: `failed` (if the connection failed),
    /// then `closed`. A close frame wslay queued (its answer to a server's close, or a
    /// failure it found) is written first if the socket takes it; `sendingClose` adds
    /// one when none was sent.
    func end(sendingClose code: UInt16?) {
        guard phase != .ended else { return }
        if phase == .open, let context {
            if let code, wslay_event_get_close_sent(context) == 0 {
                _ = wslay_event_queue_close(context, code, nil, 0)
            }
            if wslay_event_get_write_enabled(context) != 0 { _ = wslay_event_send(context) }
        }
        phase = .ended
        if socket >= 0 { loop?.watched.remove(socket) }
        watchedEvents = 0
        if let context { wslay_event_context_free(context) }
        context = nil
        if !queuedForOpener || openerDone {
            if let easy { curl_easy_cleanup(easy) }  // closes the socket
            easy = nil
        }
        socket = -1
        early = []
        fragmenting = nil
        try! withOutbox { box in
            box.ended = true
            box.messages = []
            box.head = 0
            box.bytes = 0
        }
        registry.remove(self)
        let failure = self.failure
        if let failure { deliver { $0.failed(failure.error, failure.response) } }
        let code = closeCode ?? 1006
        let reason = closeCode == nil ? "" : closeReason
        deliver { $0.closed(code, reason) }
    }
}
