import Glibc

/// A value that threads share, guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex`, which on Linux is a bare futex:
/// ThreadSanitizer cannot see the ordering a futex gives, so every critical section
/// guarded by one was reported as a race. TSan, helgrind and valgrind all understand
/// a pthread mutex, and uncontended it costs the same. The value and the mutex live
/// in one allocation.
public final class Locked<Value>: @unchecked Sendable {
    private let storage: Storage
    // Stable for the storage's lifetime, which is ours: ManagedBuffer never moves.
    private let value: UnsafeMutablePointer<Value>
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        storage = Storage.create(minimumCapacity: 1) { _ in value } as! Storage
        (self.value, mutex) = storage.withUnsafeMutablePointers { ($0, $1) }
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {}
}
