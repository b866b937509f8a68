import Glibc

/// Blocks a thread until another thread opens it: how a synchronous call waits for
/// the event loop. A pthread condition variable, since the waiting thread is a
/// foreign (C or Python) thread, not a Swift concurrency task.
public final class Latch: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var remaining: Int

    /// A latch that opens after `count` calls to `countDown()`.
    public init(count: Int = 1) {
        remaining = count
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// One more `countDown()` is needed before the latch opens (work whose count is
    /// only known as it starts).
    public func countUp() {
        pthread_mutex_lock(&mutex)
        remaining += 1
        pthread_mutex_unlock(&mutex)
    }

    public func countDown() {
        pthread_mutex_lock(&mutex)
        remaining -= 1
        if remaining <= 0 { pthread_cond_broadcast(&condition) }
        pthread_mutex_unlock(&mutex)
    }

    public func wait() {
        pthread_mutex_lock(&mutex)
        while remaining > 0 { pthread_cond_wait(&condition, &mutex) }
        pthread_mutex_unlock(&mutex)
    }
}
