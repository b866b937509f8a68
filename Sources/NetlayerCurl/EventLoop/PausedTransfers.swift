import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

extension CurlEventLoop {
    /// The transfers of one event loop that a callback paused because a local file was
    /// not ready (`TransferWait`): an upload's FIFO with nothing to read yet, a download's
    /// FIFO that is full or that no one reads yet. Each goes on (`curl_easy_pause`) when
    /// the loop's epoll reports its descriptor ready, or after a short delay when there is
    /// no descriptor to watch; the loop itself never waits for a file. Loop thread only.
    package final class PausedTransfers {
        private let epoll: Int32
        private var byDescriptor: [Int32: CurlTransfer] = [:]
        private var delayed: [(deadline: UInt64, transfer: CurlTransfer)] = []

        init(epoll: Int32) {
            self.epoll = epoll
        }

        var isEmpty: Bool { byDescriptor.isEmpty && delayed.isEmpty }

        /// When the earliest delayed transfer is due (monotonic ns).
        var nextDeadline: UInt64? { delayed.lazy.map(\.deadline).min() }

        func add(_ transfer: CurlTransfer, until wait: TransferWait, now: UInt64) {
            transfer.isPausedOnLoop = true
            switch wait {
            case .readable(let fd), .writable(let fd):
                var what = CURL_POLL_OUT
                if case .readable = wait { what = CURL_POLL_IN }
                if nl_epoll_set(epoll, fd, what, byDescriptor[fd] == nil ? 0 : 1) == 0 {
                    byDescriptor[fd] = transfer
                    return
                }
                // A descriptor epoll cannot watch: try again shortly instead.
                delayed.append((now + UInt64(nl_wait_delay_ms) * 1_000_000, transfer))
            case .delay:
                delayed.append((now + UInt64(nl_wait_delay_ms) * 1_000_000, transfer))
            }
        }

        /// Resumes the transfer that waits for `fd`; false when none does (a libcurl socket).
        func resume(descriptor fd: Int32) -> Bool {
            guard let transfer = byDescriptor.removeValue(forKey: fd) else { return false }
            _ = nl_epoll_set(epoll, fd, CURL_POLL_REMOVE, 1)
            resume(transfer)
            return true
        }

        /// Resumes the delayed transfers that are due.
        func resumeDue(now: UInt64) {
            guard delayed.contains(where: { $0.deadline <= now }) else { return }
            let due = delayed.filter { $0.deadline <= now }
            delayed.removeAll { $0.deadline <= now }
            for entry in due { resume(entry.transfer) }
        }

        /// Forgets `transfer`, which ended: its descriptors leave the epoll set before
        /// they are closed.
        func remove(_ transfer: CurlTransfer) {
            guard transfer.isPausedOnLoop else { return }
            transfer.isPausedOnLoop = false
            for (fd, paused) in byDescriptor where paused === transfer {
                byDescriptor[fd] = nil
                _ = nl_epoll_set(epoll, fd, CURL_POLL_REMOVE, 1)
            }
            delayed.removeAll { $0.transfer === transfer }
        }

        private func resume(_ transfer: CurlTransfer) {
            transfer.isPausedOnLoop = false  // held here no more: a consumer's resume reaches libcurl again
            guard let easy = transfer.easy else { return }
            // Both directions (reading only if its consumer has not paused it): one that is
            // still not ready pauses again in its callback.
            curl_easy_pause(easy, transfer.resumeAction)
        }
    }
}
