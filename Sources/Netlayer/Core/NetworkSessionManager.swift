/// The transport seam: sends a built request and reports the raw response. Netlayer's
/// implementation is `CurlSessionManager`; tests may plug in their own.
public protocol NetworkSessionManager: Sendable {
    typealias CompletionHandler = @Sendable (Result<HTTPResponse, NetworkError>) -> Void

    /// Starts `request`; `completion` runs exactly once, on a transport thread.
    func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable
}
