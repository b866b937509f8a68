import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// An object that runs one of the library's own threads (a client's event loop, its
/// delivery thread): a subclass overrides `run()`.
///
/// A class, not a protocol: the new thread reaches `run()` through the class's table,
/// never through the Swift runtime's conformance lookup, whose lock a thread of the
/// parent may hold at a `fork()`. A child's new thread that looked up a conformance
/// there would wait for that lock for ever.
package class LibraryThread {
    /// Where the thread waits when the process forks: a subclass marks its sleeps with
    /// `rest()` and `work()` around them (`ForkSafePoint`).
    let safePoint = ForkSafePoint()

    /// The thread's work; it returns when the thread stops.
    package func run() {}

    /// Starts a thread that runs `run()` with process signals blocked, so that a signal
    /// reaches one of the application's threads. The thread holds `self` until it
    /// stops; nothing else is allocated for it (in a child of `fork()`, where the thread
    /// does not exist, its owner still reaches the object). `what` names it in the error.
    func startThread(_ what: String) throws(NetworkError) -> pthread_t {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        safePoint.register()
        let rc = pthread_create(&thread, nil, { context in
            let owner = Unmanaged<LibraryThread>.fromOpaque(context!).takeRetainedValue()
            owner.safePoint.enter()
            nl_block_signals()
            owner.run()
            owner.safePoint.leave()
            return nil
        }, context)
        guard rc == 0 else {
            safePoint.leave()
            Unmanaged<LibraryThread>.fromOpaque(context).release()
            throw .generic("could not start the \(what) (error \(rc))", curlCode: -1)
        }
        return thread
    }
}
