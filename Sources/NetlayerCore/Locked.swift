import Glibc
import NetlayerJSON

/// A value that threads share, guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex`, which on Linux is a bare futex:
/// ThreadSanitizer cannot see the ordering a futex gives, so every critical section
/// guarded by one was reported as a race. TSan, helgrind and valgrind all understand
/// a pthread mutex, and uncontended it costs the same.
///
/// The value and the mutex share one allocation (the value is the buffer's header,
/// the mutex its one element) and the mutex is only reached through a pointer. Copies
/// of a `Locked` share the same value and mutex; keep it in a `let`.
package struct Locked<Value>: @unchecked Sendable {
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            withUnsafeMutablePointerToElements { _ = pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    package init(_ value: Value) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in value }, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_init($0, nil) }
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        let (value, mutex) = storage.withUnsafeMutablePointers { ($0, $1) }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    /// The value, read without the lock: only for `fork()` handlers, between the
    /// `lockForFork()` that took the lock and the `unlockAfterFork()` that gives it back.
    package var unsafeValue: Value { storage.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// Takes the lock without a body: only for `fork()` handlers, which take every
    /// lock before the fork and give each back after it (`ForkParticipant`).
    package func lockForFork() {
        storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0) }
    }

    /// Gives back a lock taken by `lockForFork()`.
    package func unlockAfterFork() {
        storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0) }
    }
}
