import NetlayerJSON

/// What the request engine asks of a response cache (`ResponseCache` is the one
/// Netlayer has): a lookup before an attempt, and the response after it.
public protocol ResponseCaching: Sendable {
    /// Whether requests like this one may be answered from the cache at all.
    func isCacheable(_ request: HTTPRequest) -> Bool
    /// What the cache holds for `request`, sent with `credentials` (a stored response
    /// answers only a request with exactly the credentials it was fetched with).
    func lookup(_ request: HTTPRequest, credentials: RequestCredentials) -> CacheLookup
    /// Keeps `response` for `request`, sent with `credentials`, if its headers allow it.
    func store(_ response: HTTPResponse, for request: HTTPRequest, credentials: RequestCredentials)
    /// The cached response a 304 `notModified` confirms, refreshed with its headers.
    func revalidated(_ notModified: HTTPResponse, cached: HTTPResponse, for request: HTTPRequest,
                     credentials: RequestCredentials) -> HTTPResponse
}

/// What a response cache says about a request before it is sent: nothing (a miss),
/// a fresh response to answer with, or validators to send and the response a 304
/// would confirm. (A struct of optionals: valgrind reads the tag of a multi-payload
/// enum returned through a protocol as uninitialised.)
public struct CacheLookup: Sendable {
    /// Fresh: answer with it, without the network.
    public var fresh: HTTPResponse?
    /// Stale or `no-cache`: send with `validators`; a 304 means `cached`.
    public var revalidation: Revalidation?

    public struct Revalidation: Sendable {
        public var validators: HTTPHeaders
        public var cached: HTTPResponse

        public init(validators: HTTPHeaders, cached: HTTPResponse) {
            self.validators = validators
            self.cached = cached
        }
    }

    public static let miss = CacheLookup()

    public static func fresh(_ response: HTTPResponse) -> CacheLookup { CacheLookup(fresh: response) }

    public static func revalidate(_ validators: HTTPHeaders, cached: HTTPResponse) -> CacheLookup {
        CacheLookup(revalidation: Revalidation(validators: validators, cached: cached))
    }

    public init(fresh: HTTPResponse? = nil, revalidation: Revalidation? = nil) {
        self.fresh = fresh
        self.revalidation = revalidation
    }
}
