import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// An object that runs one of the library's own threads (a client's event loop, its
/// delivery thread).
package protocol LibraryThread: AnyObject {
    /// The thread's work; it returns when the thread stops.
    func run()
}

extension LibraryThread {
    /// Starts a thread that runs `run()` with process signals blocked, so that a signal
    /// reaches one of the application's threads. The thread holds `self` until it
    /// stops; nothing else is allocated for it (in a child of `fork()`, where the thread
    /// does not exist, its owner still reaches the object). `what` names it in the error.
    func startThread(_ what: String) throws(NetworkError) -> pthread_t {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self as AnyObject).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let owner = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue()
            nl_block_signals()
            (owner as! any LibraryThread).run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<AnyObject>.fromOpaque(context).release()
            throw .generic("could not start the \(what) (error \(rc))", curlCode: -1)
        }
        return thread
    }
}
