import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// Adapts requests with a plain function (JustNetworking's request builders).
public struct ClosureAdapter: RequestAdapter {
    let body: @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest

    public init(_ body: @escaping @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest) { self.body = body }

    public func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest {
        try body(request)
    }
}

/// Adapters applied in order, and an optional retrier: a chain of request builders
/// as one `RequestInterceptor` (the seeds' `compose`, Alamofire's `Interceptor`).
public struct InterceptorChain: RequestInterceptor {
    public var adapters: [any RequestAdapter]
    public var retrier: (any RequestRetrier)?

    public init(adapters: [any RequestAdapter] = [], retrier: (any RequestRetrier)? = nil) {
        self.adapters = adapters
        self.retrier = retrier
    }

    public func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest {
        var request = request
        for adapter in adapters { request = try adapter.adapt(request, context: context) }
        return request
    }

    public func retry(_ request: HTTPRequest, context: RequestContext, dueTo error: NetworkError) throws(NetworkError) -> RetryDecision {
        try retrier?.retry(request, context: context, dueTo: error) ?? .useDefault
    }
}

/// Composes request builders left to right into one interceptor:
/// `compose(addHeader("X-Client", "ios"), addQuery("lang", "en"))`.
public func compose(_ builders: (@Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest)...) -> InterceptorChain {
    InterceptorChain(adapters: builders.map { ClosureAdapter($0) })
}
