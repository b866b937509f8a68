import NetlayerJSON

/// Where a request is in its life: its id (shared with logs and the C ABI's async
/// ids) and which attempt this is, from 1.
public struct RequestContext: Sendable {
    public var id: UInt64
    public var attempt: Int
    /// The jar of the transport that sends the request, for those that must know every
    /// credential it carries (a logger redacting an echo of the jar's cookies).
    public var cookies: (any CookieSource)?

    public init(id: UInt64, attempt: Int, cookies: (any CookieSource)? = nil) {
        self.id = id
        self.attempt = attempt
        self.cookies = cookies
    }
}

/// Changes a request before each attempt, such as adding a token (Alamofire's
/// `RequestAdapter`). Throwing fails the request with that error; throw
/// `NetworkError.cancelled` to cancel it.
public protocol RequestAdapter: Sendable {
    func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest
}

/// What to do after a failed attempt.
public enum RetryDecision: Sendable, Equatable {
    /// Follow the request's `RetryPolicy`.
    case useDefault
    /// Try again after `delay` seconds (bounded by `maxAttempts` and the deadline).
    case retry(delay: Double)
    case doNotRetry
}

/// Decides whether a failed attempt is tried again, such as after refreshing a token
/// on a 401 (Alamofire's `RequestRetrier`). Calls are serialised per service, so a
/// retrier that refreshes a shared token sees the refresh of the one before it.
public protocol RequestRetrier: Sendable {
    func retry(_ request: HTTPRequest, context: RequestContext, dueTo error: NetworkError) throws(NetworkError) -> RetryDecision
}

/// Adapts and retries (Alamofire's `RequestInterceptor`).
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    public func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest { request }
    public func retry(_ request: HTTPRequest, context: RequestContext,
                      dueTo error: NetworkError) throws(NetworkError) -> RetryDecision { .useDefault }
}
