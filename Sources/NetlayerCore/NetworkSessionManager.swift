import NetlayerJSON


/// The transport seam: sends a built request and reports the raw response. Netlayer's
/// implementation is `CurlSessionManager`; tests may plug in their own.
public protocol NetworkSessionManager: Sendable {
    typealias CompletionHandler = @Sendable (Result<HTTPResponse, NetworkError>) -> Void

    /// Starts `request`; `completion` runs exactly once, on a transport thread.
    func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable

    /// Runs `start` (which starts requests of this transport) and waits until `done`
    /// opens: a blocking call is a start and this wait. A transport that can runs its
    /// work on the calling thread meanwhile, as libcurl's `curl_easy_perform` does,
    /// instead of waiting for one of its own threads. False when a signal arrived on
    /// `interrupt` first (the work goes on; the caller cancels it).
    func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool

    /// Runs `task` after `delay` seconds on a transport thread (retry back-off).
    func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void)

    /// The cookie jar whose cookies the transport adds to requests, if it has one.
    var cookieSource: (any CookieSource)? { get }

    /// How the transport reads URLs: the client checks and builds URLs, and follows
    /// redirects, with the same parser.
    var urlParser: any URLParsing { get }

    /// Throws `invalidRequest` naming the key of an option this transport cannot
    /// honour; a client checks its config's options with it when it is made.
    func check(_ options: RequestOptions) throws(NetworkError)

    /// Runs `task` on the transport's own thread, in order with its work.
    func execute(_ task: @escaping @Sendable () -> Void)

    /// Runs `task` beside the transport's thread, after the tasks delivered before it:
    /// what follows a completion (decoding, the caller's callback), which need not
    /// hold up transfers.
    func deliver(_ task: @escaping @Sendable () -> Void)

    /// Runs `task` on a thread of its own beside the delivery thread, after the tasks
    /// given here before it: events (a LOG hook's) that a blocking caller waits for
    /// before it returns, which must not wait behind a completion the caller's own
    /// locks may hold up.
    func deliverEvent(_ task: @escaping @Sendable () -> Void)

    /// Whether the caller runs on one of the transport's own threads (inside a
    /// completion or callback), where waiting for its work would deadlock.
    var isLibraryThread: Bool { get }

    /// Cancels what is in flight, delivers every completion and stops the transport's
    /// threads. Does nothing on one of them.
    func shutdown()

    /// Takes the locks of the state a child of `fork()` copies (a cookie jar), before
    /// the fork; `unlockAfterFork()` gives them back, in the parent and in the child.
    func lockForFork()
    func unlockAfterFork()

    /// The transport whose state (a cookie jar) a child of `fork()` copies into the one
    /// it makes: itself for a real transport, the one it wraps for a wrapper (recording,
    /// stub, replay); nil by default. An object, so that the child finds the transport's
    /// type with a class cast: a cast to a protocol takes a lock of the Swift runtime
    /// that a thread of the parent may have held at the fork, for ever in the child.
    var forkSource: AnyObject? { get }
}

extension NetworkSessionManager {
    public var cookieSource: (any CookieSource)? { nil }

    public func check(_ options: RequestOptions) throws(NetworkError) {}
    public func execute(_ task: @escaping @Sendable () -> Void) { schedule(after: 0, task) }
    public func deliver(_ task: @escaping @Sendable () -> Void) { execute(task) }
    public func deliverEvent(_ task: @escaping @Sendable () -> Void) { deliver(task) }
    public var isLibraryThread: Bool { false }
    public func shutdown() {}
    public func lockForFork() {}
    public func unlockAfterFork() {}
    public var forkSource: AnyObject? { nil }

    /// Starts and waits on a latch: the work runs on the transport's own threads.
    public func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool {
        start()
        return done.wait(interruptedBy: interrupt)
    }

    /// Sends `request` and waits for it (`run(_:until:interrupt:)`).
    public func requestBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        let done = RequestCompletion<Result<HTTPResponse, NetworkError>>()
        var started: (any NetworkCancellable)?
        if !run({ started = self.request(request) { done.open($0) } }, until: done, interrupt: Platform.ThreadInterrupt.armed()) {
            started?.cancel()
            return .failure(Platform.ThreadInterrupt.error)
        }
        return done.outcome ?? .failure(.cancelled)
    }

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        Task {
            try? await Task.sleep(nanoseconds: UInt64(min(max(0, delay), HTTPRequest.maxSeconds) * 1e9))
            task()
        }
    }
}
