/// What the request engine asks of a response cache (`ResponseCache` is the one
/// Netlayer has): a lookup before an attempt, and the response after it.
public protocol ResponseCaching: Sendable {
    /// Whether requests like this one may be answered from the cache at all.
    func isCacheable(_ request: HTTPRequest) -> Bool
    /// What the cache holds for `request`.
    func lookup(_ request: HTTPRequest) -> CacheLookup
    /// Keeps `response` for `request` if its headers allow it.
    func store(_ response: HTTPResponse, for request: HTTPRequest)
    /// The cached response a 304 `notModified` confirms, refreshed with its headers.
    func revalidated(_ notModified: HTTPResponse, cached: HTTPResponse, for request: HTTPRequest) -> HTTPResponse
}

/// What a response cache says about a request before it is sent.
public enum CacheLookup: Sendable {
    case miss
    /// Fresh: answer without the network.
    case fresh(HTTPResponse)
    /// Stale or `no-cache`: send with these validators; a 304 means `cached`.
    case revalidate(HTTPHeaders, cached: HTTPResponse)
}
