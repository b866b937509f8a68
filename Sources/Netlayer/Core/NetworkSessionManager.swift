
/// The transport seam: sends a built request and reports the raw response. Netlayer's
/// implementation is `CurlSessionManager`; tests may plug in their own.
public protocol NetworkSessionManager: Sendable {
    typealias CompletionHandler = @Sendable (Result<HTTPResponse, NetworkError>) -> Void

    /// Starts `request`; `completion` runs exactly once, on a transport thread.
    func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable

    /// Sends `request` and waits for it on the calling thread.
    func requestBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError>

    /// Runs `task` after `delay` seconds on a transport thread (retry back-off).
    func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void)

    /// The cookie jar whose cookies the transport adds to requests, if it has one.
    var cookieSource: (any CookieSource)? { get }
}

extension NetworkSessionManager {
    public var cookieSource: (any CookieSource)? { nil }

    /// Waits on `request(_:completion:)`; transports that can run a request on the
    /// caller's thread do better.
    public func requestBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        let slot = Locked<Result<HTTPResponse, NetworkError>?>(nil)
        let latch = Latch()
        _ = self.request(request) { result in
            slot.withLock { $0 = result }
            latch.countDown()
        }
        latch.wait()
        return slot.withLock { $0! }
    }

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        Task {
            try? await Task.sleep(nanoseconds: UInt64(max(0, delay) * 1e9))
            task()
        }
    }
}
