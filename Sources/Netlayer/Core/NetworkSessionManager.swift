
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
}

extension NetworkSessionManager {
    public var cookieSource: (any CookieSource)? { nil }

    /// Starts and waits on a latch: the work runs on the transport's own threads.
    public func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool {
        start()
        return done.wait(interruptedBy: interrupt)
    }

    /// Sends `request` and waits for it (`run(_:until:interrupt:)`).
    public func requestBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        let done = RequestCompletion<Result<HTTPResponse, NetworkError>>()
        var started: (any NetworkCancellable)?
        if !run({ started = self.request(request) { done.open($0) } }, until: done, interrupt: ThreadInterrupt.armed()) {
            started?.cancel()
            return .failure(ThreadInterrupt.error)
        }
        return done.outcome ?? .failure(.cancelled)
    }

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        Task {
            try? await Task.sleep(nanoseconds: UInt64(max(0, delay) * 1e9))
            task()
        }
    }
}
