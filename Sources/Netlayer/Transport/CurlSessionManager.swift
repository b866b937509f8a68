/// The libcurl `NetworkSessionManager`: one multi handle and one event-loop thread
/// per instance, so all its requests share connections (keep-alive, HTTP/2).
///
/// Completions run on the loop thread; keep them short. `shutdown()` (or releasing
/// the last reference) cancels what is in flight and waits for every completion.
public final class CurlSessionManager: NetworkSessionManager, @unchecked Sendable {
    private let loop: CurlEventLoop

    /// - Parameter maxConcurrent: transfers in flight at once; the rest queue in order.
    public init(maxConcurrent: Int = 64) throws(NetworkError) {
        loop = try CurlEventLoop(maxConcurrent: maxConcurrent)
    }

    deinit { loop.shutdown() }

    public func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let transfer = CurlTransfer(request: request, loop: loop, completion: completion)
        loop.start(transfer)
        return transfer
    }

    /// Runs `task` on the loop thread, in order with completions; after shutdown,
    /// on the calling thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        loop.execute(task)
    }

    /// Whether the caller is running on this manager's loop thread, where waiting
    /// for a request of the same manager would deadlock.
    public var isLoopThread: Bool { loop.isCurrentThread }

    /// Cancels every request, delivers their completions and stops the loop thread.
    /// Returns when no completion can run any more. Does nothing on the loop thread.
    public func shutdown() { loop.shutdown() }
}
