import CCurl
import Glibc

/// Starts the library's own threads (a client's event loop, its delivery thread).
enum LibraryThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// A new thread that runs `body` with process signals blocked, so that a signal
    /// reaches one of the application's threads. `what` names it in the error.
    static func start(_ what: String, _ body: @escaping () -> Void) throws(NetworkError) -> pthread_t {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            nl_block_signals()
            body.run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw .generic("could not start the \(what) (error \(rc))", curlCode: -1)
        }
        return thread
    }
}
