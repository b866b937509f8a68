import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// libcurl's socket and timer callbacks of the multi handle, and the epoll set they keep.
extension CurlEventLoop {
    /// libcurl's socket callback. A connection's socket that libcurl stops watching
    /// (`CURL_POLL_REMOVE`, at the end of each transfer) stays in the epoll set: the
    /// next transfer on that kept-alive connection wants the same events, so it costs
    /// no epoll_ctl at all, where removing and adding it again cost two per request. It
    /// leaves the set when libcurl closes it (`closing`) or when an event comes while
    /// no transfer watches it (`dropIfUnwanted`). Other sockets (a resolver's, say),
    /// whose closing this loop is not told about, leave the set at once.
    func watch(socket: Int32, what: Int32) {
        guard socket >= 0 else { return }
        let index = slot(of: socket)
        let state = sockets[index]
        if what == CURL_POLL_REMOVE {
            if state.contains(.closeReported) {
                sockets[index].remove(.wanted)
            } else {
                leaveSet(socket, keeping: [])
            }
        } else {
            let events = SocketState(rawValue: UInt8(what & CURL_POLL_INOUT))
            if !state.contains(.inSet) || state.intersection(.events) != events {
                _ = nl_epoll_set(epoll, socket, what, state.contains(.inSet) ? 1 : 0)
            }
            sockets[index] = state.intersection(.closeReported).union([.inSet, .wanted]).union(events)
        }
    }

    /// Takes an event's socket out of the set when no transfer watches it (a kept-alive
    /// connection the server closed, say); true when it did.
    func dropIfUnwanted(_ socket: Int32) -> Bool {
        let index = Int(socket)
        guard index < sockets.count, sockets[index].contains(.inSet), !sockets[index].contains(.wanted) else {
            return false
        }
        leaveSet(socket, keeping: .closeReported)
        return true
    }

    /// libcurl's open callback for the loop's connections: a new socket, whose closing
    /// `closing` will see.
    func opened(socket: Int32) {
        sockets[slot(of: socket)] = .closeReported
    }

    /// libcurl's close callback for the loop's connections: the socket leaves the set
    /// while its descriptor still names it. After the close, a copy of the descriptor
    /// in a child of fork() would keep the registration alive under a number this
    /// process may reuse, out of reach of epoll_ctl.
    func closing(socket: Int32) -> Int32 {
        if socket >= 0, Int(socket) < sockets.count { leaveSet(socket, keeping: []) }
        return close(socket) == 0 ? 0 : 1
    }

    /// The index of `socket`'s state in `sockets`, which grows to hold it.
    private func slot(of socket: Int32) -> Int {
        let index = Int(socket)
        if index >= sockets.count { sockets.append(contentsOf: repeatElement([], count: index + 64 - sockets.count)) }
        return index
    }

    /// Takes `socket` out of the epoll set if it is in it; of its state, only `kept` stays.
    private func leaveSet(_ socket: Int32, keeping kept: SocketState) {
        let index = Int(socket)
        if sockets[index].contains(.inSet) { _ = nl_epoll_set(epoll, socket, CURL_POLL_REMOVE, 1) }
        sockets[index] = sockets[index].intersection(kept)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

package func curlSocketCallback(_ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32,
                                _ context: UnsafeMutableRawPointer?, _ socketContext: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return -1 }
    Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue().watch(socket: socket, what: what)
    return 0
}

extension CurlEventLoop {
    /// What the loop knows of one descriptor's socket.
    struct SocketState: OptionSet {
        let rawValue: UInt8
        /// The events asked for (the bits of CURL_POLL_IN and CURL_POLL_OUT).
        static let events = SocketState(rawValue: UInt8(CURL_POLL_INOUT))
        /// A transfer watches it now.
        static let wanted = SocketState(rawValue: 4)
        /// It is in the epoll set, with `events`.
        static let inSet = SocketState(rawValue: 8)
        /// A connection's socket, opened through the loop's open callback: its closing goes
        /// through `closing(socket:)`.
        static let closeReported = SocketState(rawValue: 16)
    }
}

package func curlOpenSocketCallback(_ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype,
                            _ address: UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t {
    guard let address else { return CURL_SOCKET_BAD }
    // Close-on-exec, as the library's other descriptors: a program the caller runs
    // (system(), a subprocess) must not keep the connections open or reach them.
    let socket = Glibc.socket(address.pointee.family, address.pointee.socktype | DescriptorExhaustion.closeOnExec,
                              address.pointee.protocol)
    if socket >= 0, let context { Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue().opened(socket: socket) }
    return socket
}

package func curlCloseSocketCallback(_ context: UnsafeMutableRawPointer?, _ socket: curl_socket_t) -> Int32 {
    guard let context else { return close(socket) == 0 ? 0 : 1 }
    return Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue().closing(socket: socket)
}

package func curlTimerCallback(_ multi: UnsafeMutableRawPointer?, _ timeoutMs: Int, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return -1 }
    let loop = Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue()
    loop.timerDeadline = timeoutMs < 0 ? nil : CurlEventLoop.now() + UInt64(timeoutMs) * 1_000_000
    return 0
}
