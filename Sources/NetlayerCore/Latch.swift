import Glibc
import NetlayerJSON

/// Blocks a thread until another thread opens it: how a synchronous call waits for
/// the event loop. A pthread condition variable, since the waiting thread is a
/// foreign (C or Python) thread, not a Swift concurrency task.
package final class Latch: @unchecked Sendable {
    private let gate = Platform.MutexCondition()
    private var remaining: Int

    /// A latch that opens after `count` calls to `countDown()`.
    package init(count: Int = 1) {
        remaining = count
    }

    /// One more `countDown()` is needed before the latch opens (work whose count is
    /// only known as it starts).
    package func countUp() {
        gate.lock()
        remaining += 1
        gate.unlock()
    }

    package func countDown() {
        gate.lock()
        remaining -= 1
        if remaining <= 0 { gate.broadcast() }
        gate.unlock()
    }

    package func wait() {
        gate.lock()
        while remaining > 0 { gate.wait() }
        gate.unlock()
    }

    /// Waits until the latch opens (true) or a byte arrives on `interrupt` (false; the
    /// calling thread's `Platform.ThreadInterrupt.armed()`). Without a descriptor, `wait()`.
    package func waitUnlessInterrupted(by interrupt: Int32?) -> Bool {
        guard let interrupt else {
            wait()
            return true
        }
        while true {
            if wait(milliseconds: 20) { return true }
            if Platform.ThreadInterrupt.arrived(interrupt, within: 0) { return false }
        }
    }

    /// Waits at most `milliseconds`; whether the latch is open.
    private func wait(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_nsec += milliseconds * 1_000_000
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        gate.lock()
        while remaining > 0 {
            if !gate.wait(until: &deadline) { break }
        }
        let open = remaining <= 0
        gate.unlock()
        return open
    }
}
