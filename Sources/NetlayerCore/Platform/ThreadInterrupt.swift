import Glibc
import NetlayerJSON

extension Platform {
    /// The descriptor that interrupts the calling thread's blocking requests: the read
    /// end of a self-pipe a signal handler writes to (Python's `signal.set_wakeup_fd`),
    /// so that Ctrl-C ends a blocking call at once instead of when its timeout expires.
    /// One per thread; a pthread key holds it (`fd + 1`, so that 0 means none).
    package enum ThreadInterrupt {
        private static let key: pthread_key_t? = {
            var key = pthread_key_t()
            return pthread_key_create(&key, nil) == 0 ? key : nil
        }()

        /// The calling thread's descriptor, if it has one.
        package static var current: Int32? {
            guard let key else { return nil }
            let stored = Int(bitPattern: pthread_getspecific(key))
            return stored == 0 ? nil : Int32(truncatingIfNeeded: stored - 1)
        }

        /// Sets (or with a negative `fd`, removes) the calling thread's descriptor;
        /// returns the one set before, or -1.
        package static func set(_ fd: Int32) -> Int32 {
            guard let key else { return -1 }
            let previous = current ?? -1
            _ = pthread_setspecific(key, fd < 0 ? nil : UnsafeRawPointer(bitPattern: Int(fd) + 1))
            return previous
        }

        /// What a request interrupted this way fails with.
        package static let error = NetworkError.cancelledBecause(
            "interrupted: a signal arrived while the thread waited for the request")

        /// The calling thread's descriptor, made ready for a blocking call: what waits on
        /// it is discarded (signals that came before the call were handled already). nil
        /// when the thread has none, or when it can never deliver a byte again (closed, or
        /// a pipe whose write end is closed): a careless caller's stale descriptor neither
        /// interrupts every call nor keeps the poll spinning.
        package static func armed() -> Int32? {
            guard let fd = current, drain(fd) else { return nil }
            return fd
        }

        /// Discards what waits on `fd`: the signal that interrupted a call, which the
        /// caller handles itself.
        package static func discard(_ fd: Int32) { _ = drain(fd) }

        /// Whether a signal arrived on `fd` within `milliseconds`; it is then drained.
        package static func arrived(_ fd: Int32, within milliseconds: Int32) -> Bool {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&watched, 1, milliseconds) > 0,
                  watched.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { return false }
            discard(fd)
            return true
        }

        /// Reads what waits on the non-blocking `fd`; false when it can never deliver a
        /// byte again (end of file, or an error other than "try again").
        private static func drain(_ fd: Int32) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 { continue }
                if n == 0 { return false }
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
            }
        }
    }
}
