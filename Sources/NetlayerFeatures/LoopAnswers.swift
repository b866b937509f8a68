import NetlayerCore
import NetlayerJSON

/// Delivers answers a transport makes up itself (stub rules, a cassette) the way
/// libcurl's arrive: on the client's loop thread, never inside the call that sent
/// the request, and cancellable until they are delivered. Hooks, retries, batches
/// and timeouts then behave as they do against a server.
package struct LoopAnswers: Sendable {
    /// The client's transport, used only for its thread.
    package let loop: any NetworkSessionManager

    /// Hands `answer` to `completion` on the loop thread after `delay` seconds.
    func deliver(_ answer: Result<HTTPResponse, NetworkError>, after delay: Double,
                 to completion: @escaping NetworkSessionManager.CompletionHandler) -> any NetworkCancellable {
        let pending = PendingAnswer(completion)
        if delay > 0 {
            loop.schedule(after: delay) { pending.deliver(answer) }
        } else {
            loop.execute { pending.deliver(answer) }
        }
        return pending
    }
}

/// An answer on its way: delivered once, as the answer or, when cancelled first, as
/// `cancelled`.
private final class PendingAnswer: NetworkCancellable, @unchecked Sendable {
    private let completion: Locked<NetworkSessionManager.CompletionHandler?>

    init(_ completion: @escaping NetworkSessionManager.CompletionHandler) {
        self.completion = Locked(completion)
    }

    func deliver(_ result: Result<HTTPResponse, NetworkError>) {
        completion.withLock { handler in defer { handler = nil }; return handler }?(result)
    }

    @discardableResult
    func cancel() -> Bool {
        guard let handler = completion.withLock({ handler in defer { handler = nil }; return handler }) else { return false }
        handler(.failure(.cancelled))
        return true
    }
}
