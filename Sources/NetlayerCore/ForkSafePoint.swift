import Glibc
import Synchronization

/// Where one of the library's own threads may be when the process forks.
///
/// A child of `fork()` has only the forking thread. A lock any other thread held at
/// the fork stays held in the child for ever, and among those are the Swift runtime's
/// own: the first use of a lazy static (`swift_once`), of generic metadata or of a
/// conformance takes one. A library thread busy with the process's first requests
/// when it forks may hold one, and the child's first request then waits on it for ever.
///
/// So before a fork the library's threads are brought to a safe point: asleep (on a
/// condition, in `epoll_wait`), waiting for another thread (`atRest`), or in the
/// application's code (a C callback or hook, where the thread may wait for Python's
/// GIL that the forking thread holds). A thread that is running the library's own code
/// when the fork is announced finishes its turn and waits at its next safe point until
/// the fork is done. The fork waits for that at most `longestWait`: a thread held up by
/// something the forking thread holds cannot get there, and then the fork goes ahead
/// as it would without this. A thread waits at its safe point at most `longestPark`:
/// were the fork held up by a lock of a thread that waits for this one, the fork and
/// that thread go on after it.
package final class ForkSafePoint: @unchecked Sendable {
    /// Whether the thread runs the library's code now (not at a safe point). True from
    /// before the thread starts, so a fork waits for a new thread's first turn too.
    private let working = Atomic<Bool>(true)

    /// Every safe point of a running library thread (guarded by `gate`), a fork's
    /// announcement and the condition parked threads wait on. Built by `setUp()`,
    /// before any library thread starts, so no library thread ever initializes it.
    private final class Shared: @unchecked Sendable {
        let announced = Atomic<Bool>(false)
        /// Replaced in a child of `fork()`, where the parent's threads may have left
        /// it held or waited on.
        var gate = Platform.MutexCondition()
        /// The gates of the processes this one was forked from.
        var retiredGates: [Platform.MutexCondition] = []
        var points: [ForkSafePoint] = []
        var key = pthread_key_t()

        init() { pthread_key_create(&key, nil) }
    }

    private static let shared = Shared()

    /// Builds the shared state, with the fork handlers (a client's first registration
    /// for `fork()`): made on the thread that makes the first client, it is there
    /// before any other thread asks for it. (Any thread could build it, under the
    /// lazy static's lock, but ThreadSanitizer cannot see that lock's ordering.)
    static func setUp() { _ = shared }

    /// How long a fork waits for the library's threads to reach a safe point. (Computed,
    /// not stored: a stored static is initialized lazily, under a lock, on first use.)
    static var longestWait: UInt64 { 100_000_000 }
    /// How long a thread waits at its safe point for a fork to be done (whole seconds).
    static var longestPark: UInt64 { 2_000_000_000 }

    package init() {}

    /// Counts this point's thread among those a fork waits for; called before the
    /// thread is started, on the thread that starts it.
    package func register() {
        Platform.ProcessFork.installHandlers()
        let shared = Self.shared
        working.store(true, ordering: .sequentiallyConsistent)
        shared.gate.lock()
        shared.points.append(self)
        shared.gate.unlock()
    }

    /// Marks the calling thread as this point's thread (for `atRest`); the first
    /// thing the new thread does.
    package func enter() {
        pthread_setspecific(Self.shared.key, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The thread stops: forks no longer wait for it.
    package func leave() {
        let shared = Self.shared
        working.store(false, ordering: .sequentiallyConsistent)
        pthread_setspecific(shared.key, nil)
        shared.gate.lock()
        shared.points.removeAll { $0 === self }
        shared.gate.unlock()
    }

    /// The thread is about to sleep or to run the application's code.
    @inline(__always)
    package func rest() {
        working.store(false, ordering: .sequentiallyConsistent)
    }

    /// The thread goes back to the library's code; while a fork is announced, it
    /// waits here, at a safe point, until the fork is done.
    @inline(__always)
    package func work() {
        working.store(true, ordering: .sequentiallyConsistent)
        if Self.shared.announced.load(ordering: .sequentiallyConsistent) { waitForFork() }
    }

    private func waitForFork() {
        let shared = Self.shared
        var deadline = timespec()  // Platform.MutexCondition waits on CLOCK_REALTIME
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += Int(Self.longestPark / 1_000_000_000)
        repeat {
            working.store(false, ordering: .sequentiallyConsistent)
            let gate = shared.gate
            gate.lock()
            while shared.announced.load(ordering: .relaxed) {
                if !gate.wait(until: &deadline) {
                    gate.unlock()
                    working.store(true, ordering: .sequentiallyConsistent)
                    return
                }
            }
            gate.unlock()
            // A fork announced after the wait ended, before `working` was set again,
            // may have seen this thread at rest: wait for that one too.
            working.store(true, ordering: .sequentiallyConsistent)
        } while shared.announced.load(ordering: .sequentiallyConsistent)
    }

    /// Runs `body` with the calling library thread at a safe point, so that a fork need
    /// not wait for it to return: the application's code (a C callback or hook), or a
    /// wait for another thread that holds no lock when it returns.
    package static func atRest<T>(_ body: () throws -> T) rethrows -> T {
        guard let current = pthread_getspecific(shared.key) else { return try body() }
        let point = Unmanaged<ForkSafePoint>.fromOpaque(current).takeUnretainedValue()
        point.rest()
        defer { point.work() }
        return try body()
    }

    /// Announces a fork and waits, at most `longestWait`, until every library thread
    /// but the caller's is at a safe point (the `prepare` handler).
    static func announceFork() {
        let shared = Self.shared
        shared.announced.store(true, ordering: .sequentiallyConsistent)
        let own = pthread_getspecific(shared.key)
        let deadline = Platform.MonotonicClock.now() &+ longestWait
        let gate = shared.gate
        gate.lock()
        for point in shared.points where Unmanaged.passUnretained(point).toOpaque() != own {
            while point.working.load(ordering: .sequentiallyConsistent), Platform.MonotonicClock.now() < deadline {
                gate.unlock()  // a thread that stops takes it to leave
                sched_yield()
                gate.lock()
            }
        }
        gate.unlock()
    }

    /// The fork is done: in the parent the waiting threads go on; in the child they do
    /// not exist, and the state they left is set afresh (the `parent` and `child`
    /// handlers).
    static func forkDone(child: Bool) {
        let shared = Self.shared
        if child {
            // Kept for ever, never destroyed: destroying a condition that the parent's
            // threads wait on would wait for them.
            shared.retiredGates.append(shared.gate)
            shared.gate = Platform.MutexCondition()
            shared.points = []
            shared.announced.store(false, ordering: .sequentiallyConsistent)
            return
        }
        let gate = shared.gate
        gate.lock()
        shared.announced.store(false, ordering: .sequentiallyConsistent)
        gate.broadcast()
        gate.unlock()
    }
}
