import Glibc

extension Platform {
    /// A pthread mutex and condition variable, for threads that are not Swift concurrency
    /// tasks (the event loop's, the delivery thread, C and Python callers).
    ///
    /// They live in memory of their own rather than in stored properties: `&property` is a
    /// Swift access that lasts for the whole call, so a thread inside `pthread_cond_wait`
    /// and another taking the mutex would be overlapping accesses (a race to the
    /// exclusivity checker and ThreadSanitizer).
    package final class MutexCondition: @unchecked Sendable {
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

        package init() {
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(condition, nil)
        }

        deinit {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deallocate()
            mutex.deallocate()
        }

        @inline(__always) package func lock() { pthread_mutex_lock(mutex) }
        @inline(__always) package func unlock() { pthread_mutex_unlock(mutex) }

        /// Waits for a signal; the mutex is held before and after.
        package func wait() { pthread_cond_wait(condition, mutex) }

        /// Waits for a signal until `deadline` (CLOCK_REALTIME); false when it passed.
        package func wait(until deadline: UnsafePointer<timespec>) -> Bool {
            pthread_cond_timedwait(condition, mutex, deadline) != ETIMEDOUT
        }

        package func signal() { pthread_cond_signal(condition) }
        package func broadcast() { pthread_cond_broadcast(condition) }
    }
}
