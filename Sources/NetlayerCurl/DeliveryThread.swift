import Glibc
import Synchronization
import NetlayerCore
import NetlayerJSON

extension CurlSessionManager {
    /// A library thread that runs completions in order, so that what a completion does
    /// after the transfer (decoding the body, writing a result document, the caller's
    /// callback and the next request it starts) runs beside the event loop instead of
    /// on it: with requests in flight the loop thread is the bottleneck, and this work
    /// is about a third of its time per request.
    ///
    /// The loop hands completions over under a mutex and signals the condition only
    /// when this thread sleeps: while both are busy, a hand-over is a lock and an append.
    /// The thread starts with the first completion handed over, so a client that only
    /// makes blocking requests never has one.
    package final class DeliveryThread: LibraryThread, @unchecked Sendable {
        private struct Queue {
            var tasks: [@Sendable () -> Void] = []
            var sleeping = false
            var stopping = false
            var started = false
            /// No thread runs the queue any more (it stopped, or never started and never
            /// will): tasks run on the caller's thread.
            var joined = false
        }

        private let gate = Platform.MutexCondition()
        private var queue = Queue()
        private var thread = pthread_t()
        private let threadStarted = Atomic<Bool>(false)
        private let name: String

        init(name: String = "delivery thread") { self.name = name }

        /// Whether the caller is this thread (inside a completion it runs).
        var isCurrentThread: Bool {
            threadStarted.load(ordering: .acquiring) && pthread_equal(pthread_self(), thread) != 0
        }

        /// Runs `task` on this thread after the tasks submitted before it (starting the
        /// thread first if needed); after `shutdown()` has drained the queue, or when no
        /// thread can be started, on the calling thread.
        func submit(_ task: @escaping @Sendable () -> Void) {
            gate.lock()
            if !queue.joined && !queue.started {
                if let thread = try? startThread(name) {
                    self.thread = thread
                    threadStarted.store(true, ordering: .releasing)
                    queue.started = true
                }
            }
            if queue.joined || !queue.started {
                gate.unlock()
                task()
                return
            }
            queue.tasks.append(task)
            let wake = queue.sleeping
            queue.sleeping = false
            gate.unlock()
            if wake { gate.signal() }
        }

        /// Runs every task submitted so far (and those they submit), then stops the thread.
        /// From this thread it does nothing.
        func shutdown() {
            if isCurrentThread { return }
            gate.lock()
            let first = !queue.stopping
            let started = queue.started
            queue.stopping = true
            queue.sleeping = false
            if !started { queue.joined = true }
            gate.unlock()
            guard first, started else { return }
            gate.signal()
            pthread_join(thread, nil)
        }

        /// The tasks this thread runs now, and their buffer between turns. A property, not
        /// a local: in a child of fork() this thread's stack is gone, and memory only it
        /// reached would be lost.
        private var running: [@Sendable () -> Void] = []

        override package func run() {
            while true {
                safePoint.rest()
                gate.lock()
                while queue.tasks.isEmpty && !queue.stopping {
                    queue.sleeping = true
                    gate.wait()
                }
                if queue.tasks.isEmpty {  // stopping, and nothing left
                    queue.joined = true
                    gate.unlock()
                    return
                }
                swap(&running, &queue.tasks)
                gate.unlock()
                safePoint.work()
                for task in running { task() }
                running.removeAll(keepingCapacity: true)
            }
        }
    }
}
