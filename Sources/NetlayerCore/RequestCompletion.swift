import Glibc
import Synchronization
import NetlayerJSON

/// What a blocking call waits for: opened once by whichever thread completes the work
/// (`NetworkSessionManager.run(_:until:interrupt:)`); the waiting thread may be the one
/// that drives the transport meanwhile, which looks at `isOpen` between its steps.
///
/// Opening costs one atomic store when no thread sleeps on it, the common case of a
/// caller that drives its own request: the mutex and condition are only taken by a
/// thread that goes to sleep and by the opener of a signal someone sleeps on.
public class CompletionSignal: @unchecked Sendable {
    private let opened = Atomic<Bool>(false)
    /// Threads asleep (or about to be) on `condition`; changed under `mutex`.
    private let sleepers = Atomic<Int>(0)
    // Allocated, not stored properties: `&property` is a Swift access that lasts for the
    // whole call, so a waiter inside pthread_cond_wait and an opener taking the mutex
    // would be two overlapping accesses (a race to the exclusivity checker and TSan).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Whether it was opened (an acquiring read: what was stored before is visible).
    public final var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Opens it; false when it was open already.
    @discardableResult
    public final func signal() -> Bool {
        guard !opened.exchange(true, ordering: .sequentiallyConsistent) else { return false }
        // A sleeper counts itself under the mutex before it looks at `opened`: either it
        // saw the store above, or it is counted here and waits for the broadcast.
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
            pthread_mutex_lock(mutex)
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return true
    }

    /// Waits until opened (true), or a signal arrives on `interrupt` (false).
    public final func wait(interruptedBy interrupt: Int32? = nil) -> Bool {
        if isOpen { return true }
        guard let interrupt else {
            _ = sleep(untilNanoseconds: nil)
            return true
        }
        while true {
            if sleep(untilNanoseconds: 20_000_000) { return true }
            if ThreadInterrupt.arrived(interrupt, within: 0) { return false }
        }
    }

    /// Sleeps until opened, or at most `nanoseconds`; whether it is open.
    private func sleep(untilNanoseconds nanoseconds: Int?) -> Bool {
        var deadline = timespec()
        if let nanoseconds {
            clock_gettime(CLOCK_REALTIME, &deadline)
            deadline.tv_nsec += nanoseconds
            if deadline.tv_nsec >= 1_000_000_000 {
                deadline.tv_sec += 1
                deadline.tv_nsec -= 1_000_000_000
            }
        }
        pthread_mutex_lock(mutex)
        sleepers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        while !opened.load(ordering: .sequentiallyConsistent) {
            if nanoseconds == nil {
                pthread_cond_wait(condition, mutex)
            } else if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                break
            }
        }
        sleepers.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        pthread_mutex_unlock(mutex)
        return isOpen
    }
}

/// A `CompletionSignal` that carries the outcome of the work.
package final class RequestCompletion<Value>: CompletionSignal, @unchecked Sendable {
    /// Set before the signal opens; read after.
    private var value: Value?

    /// Stores `value` and opens the signal; only the first call counts (one thread
    /// completes the work: the transport delivers a completion once).
    package func open(_ value: Value) {
        guard !isOpen else { return }
        self.value = value
        signal()
    }

    /// The value `open` stored; nil before.
    package var outcome: Value? { isOpen ? value : nil }
}
