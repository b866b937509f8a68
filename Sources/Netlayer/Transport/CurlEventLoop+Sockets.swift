import CCurl
import Glibc

/// libcurl's socket and timer callbacks of the multi handle, and the epoll set they keep.
extension CurlEventLoop {
    func watch(socket: Int32, what: Int32) {
        guard socket >= 0 else { return }
        let index = Int(socket)
        if index >= registered.count { registered.append(contentsOf: repeatElement(false, count: index + 64 - registered.count)) }
        if what == CURL_POLL_REMOVE {
            // libcurl may already have closed it, which unregisters it: ENOENT is fine.
            if registered[index] { _ = nl_epoll_set(epoll, socket, what, 1) }
            registered[index] = false
        } else {
            _ = nl_epoll_set(epoll, socket, what, registered[index] ? 1 : 0)
            registered[index] = true
        }
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

func curlSocketCallback(_ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32,
                                _ context: UnsafeMutableRawPointer?, _ socketContext: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return -1 }
    Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue().watch(socket: socket, what: what)
    return 0
}

func curlTimerCallback(_ multi: UnsafeMutableRawPointer?, _ timeoutMs: Int, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return -1 }
    let loop = Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue()
    loop.timerDeadline = timeoutMs < 0 ? nil : CurlEventLoop.now() + UInt64(timeoutMs) * 1_000_000
    return 0
}
