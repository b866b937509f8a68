import Glibc
import NetlayerJSON

/// Blocks a thread until another thread opens it: how a synchronous call waits for
/// the event loop. A pthread condition variable, since the waiting thread is a
/// foreign (C or Python) thread, not a Swift concurrency task.
package final class Latch: @unchecked Sendable {
    // Allocated, not stored properties: `&property` is a Swift access that lasts for the
    // whole call, so a waiter inside pthread_cond_wait and an opener taking the mutex
    // would be two overlapping accesses (a race to the exclusivity checker and TSan).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var remaining: Int

    /// A latch that opens after `count` calls to `countDown()`.
    package init(count: Int = 1) {
        remaining = count
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// One more `countDown()` is needed before the latch opens (work whose count is
    /// only known as it starts).
    package func countUp() {
        pthread_mutex_lock(mutex)
        remaining += 1
        pthread_mutex_unlock(mutex)
    }

    package func countDown() {
        pthread_mutex_lock(mutex)
        remaining -= 1
        if remaining <= 0 { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
    }

    package func wait() {
        pthread_mutex_lock(mutex)
        while remaining > 0 { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Waits until the latch opens (true) or a byte arrives on `interrupt` (false; the
    /// calling thread's `ThreadInterrupt.armed()`). Without a descriptor, `wait()`.
    package func waitUnlessInterrupted(by interrupt: Int32?) -> Bool {
        guard let interrupt else {
            wait()
            return true
        }
        while true {
            if wait(milliseconds: 20) { return true }
            if ThreadInterrupt.arrived(interrupt, within: 0) { return false }
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
        pthread_mutex_lock(mutex)
        while remaining > 0 {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
        }
        let open = remaining <= 0
        pthread_mutex_unlock(mutex)
        return open
    }
}
