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
    /// Threads asleep (or about to be) on the parking spot's condition; changed under
    /// its mutex.
    private let sleepers = Atomic<Int>(0)
    /// The mutex and condition a sleeping thread waits on, made by the first thread that
    /// goes to sleep: a caller that drives its own request never sleeps, and a blocking
    /// request is itself a signal, so most never need one.
    private let parkingSpot = Atomic<Unmanaged<Platform.MutexCondition>?>(nil)

    public init() {}

    deinit {
        parkingSpot.load(ordering: .acquiring)?.release()
    }

    /// Whether it was opened (an acquiring read: what was stored before is visible).
    public final var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Opens it; false when it was open already.
    @discardableResult
    public final func signal() -> Bool {
        guard !opened.exchange(true, ordering: .sequentiallyConsistent) else { return false }
        // A sleeper makes the parking spot, then counts itself under its mutex before it
        // looks at `opened`: either it saw the store above, or it is counted here (and
        // the spot is there) and waits for the broadcast.
        if sleepers.load(ordering: .sequentiallyConsistent) > 0,
           let parking = parkingSpot.load(ordering: .acquiring)?.takeUnretainedValue() {
            parking.lock()
            parking.broadcast()
            parking.unlock()
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
            if Platform.ThreadInterrupt.arrived(interrupt, within: 0) { return false }
        }
    }

    /// Waits until opened (true), or at most `nanoseconds` (under a second).
    package final func wait(nanoseconds: Int) -> Bool {
        isOpen || sleep(untilNanoseconds: nanoseconds)
    }

    /// The parking spot, made by the first thread that needs it.
    private func parking() -> Platform.MutexCondition {
        if let parking = parkingSpot.load(ordering: .acquiring) { return parking.takeUnretainedValue() }
        let fresh = Unmanaged.passRetained(Platform.MutexCondition())
        let (stored, existing) = parkingSpot.compareExchange(expected: nil, desired: fresh,
                                                             ordering: .acquiringAndReleasing)
        if stored { return fresh.takeUnretainedValue() }
        fresh.release()
        return existing!.takeUnretainedValue()
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
        let parking = parking()
        // A library thread waiting here (a completion waiting for its LOG events) is
        // at a safe point: a fork need not wait for what it waits for.
        ForkSafePoint.atRest {
            parking.lock()
            sleepers.wrappingAdd(1, ordering: .sequentiallyConsistent)
            while !opened.load(ordering: .sequentiallyConsistent) {
                if nanoseconds == nil {
                    parking.wait()
                } else if !parking.wait(until: &deadline) {
                    break
                }
            }
            sleepers.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            parking.unlock()
        }
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
