import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// A connection the event loop watches beside libcurl's transfers: its socket is in
/// the loop's epoll set, and the loop calls it when the socket is ready (a WebSocket,
/// whose bytes libcurl no longer moves on its own).
package protocol WatchedDescriptor: AnyObject {
    /// The socket is ready (`CURL_CSELECT_*` flags). Loop thread.
    func descriptorReady(_ flags: Int32)
    /// The loop is stopping: end now, without waiting for the peer. Loop thread (or
    /// the thread that stops a loop without one).
    func loopStopping()
}

extension CurlEventLoop {
    /// The descriptors of one event loop that `WatchedDescriptor`s own, with the events
    /// each wants. A descriptor that wants none for now (a WebSocket whose reading is
    /// paused, with nothing to send) stays known, out of the epoll set: the loop's stop
    /// still ends its owner. Loop thread only.
    package final class WatchedDescriptors {
        private let epoll: Int32
        private var watchers: [Int32: (watcher: any WatchedDescriptor, events: Int32)] = [:]

        init(epoll: Int32) {
            self.epoll = epoll
        }

        var isEmpty: Bool { watchers.isEmpty }

        /// Watches `fd` for `events` (`CURL_POLL_IN`, `CURL_POLL_OUT`, both, or none for
        /// now) on behalf of `watcher`, or changes the events; false when epoll refuses
        /// the descriptor.
        func watch(_ fd: Int32, events: Int32, for watcher: any WatchedDescriptor) -> Bool {
            let entry = watchers[fd]
            if let entry, entry.events == events { return true }
            let known = entry?.events ?? 0
            if events == 0 {
                if known != 0 { _ = nl_epoll_set(epoll, fd, CURL_POLL_REMOVE, 1) }
            } else {
                guard nl_epoll_set(epoll, fd, events, known != 0 ? 1 : 0) == 0 else { return false }
            }
            watchers[fd] = (watcher, events)
            return true
        }

        /// Forgets `fd`, before its owner closes it.
        func remove(_ fd: Int32) {
            guard let known = watchers.removeValue(forKey: fd) else { return }
            if known.events != 0 { _ = nl_epoll_set(epoll, fd, CURL_POLL_REMOVE, 1) }
        }

        /// Hands an event to the watcher of `fd`; false when no watcher owns it.
        func dispatch(_ fd: Int32, flags: Int32) -> Bool {
            guard let watcher = watchers[fd]?.watcher else { return false }
            watcher.descriptorReady(flags)
            return true
        }

        /// Ends every watcher (the loop is stopping).
        func stopAll() {
            let all = watchers.values.map(\.watcher)
            for (fd, known) in watchers where known.events != 0 { _ = nl_epoll_set(epoll, fd, CURL_POLL_REMOVE, 1) }
            watchers.removeAll()
            for watcher in all { watcher.loopStopping() }
        }
    }
}
