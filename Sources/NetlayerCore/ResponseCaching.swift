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
    /// The stored response that may answer `request` instead of an error (a 500, 502,
    /// 503 or 504, or no response at all), as RFC 5861's `stale-if-error` allows; nil
    /// when none may.
    func staleIfError(_ request: HTTPRequest, credentials: RequestCredentials) -> HTTPResponse?
    /// Drops what is stored for the URLs an unsafe request changed (RFC 9111 section
    /// 4.4): its target, and the same-origin `Location` and `Content-Location` of its
    /// response, when that response is not an error. `finalURL` is where the request
    /// ended after redirects (then the target answered with a redirect to it).
    func invalidate(after response: HTTPResponse, to request: HTTPRequest, finalURL: String,
                    urlParser: any URLParsing)
}

extension ResponseCaching {
    public func staleIfError(_ request: HTTPRequest, credentials: RequestCredentials) -> HTTPResponse? { nil }
    public func invalidate(after response: HTTPResponse, to request: HTTPRequest, finalURL: String,
                           urlParser: any URLParsing) {}
}

extension HTTPResponse {
    /// Whether this 304 may update `stored`, the response whose validators the request
    /// sent (RFC 9111 section 4.3.4): with an entity tag, `stored` has the same one
    /// (compared strongly when this one is strong, weakly when it is `W/`); else with a
    /// `Last-Modified`, `stored` has the same date; with neither, it may.
    public func selects(stored: HTTPResponse) -> Bool {
        if let tag = headers["etag"] {
            guard let storedTag = stored.headers["etag"] else { return false }
            let weak = tag.hasPrefix("W/")
            if !weak { return !storedTag.hasPrefix("W/") && storedTag == tag }
            return tag.dropFirst(2) == (storedTag.hasPrefix("W/") ? storedTag.dropFirst(2) : Substring(storedTag))
        }
        if let modified = headers["last-modified"] { return stored.headers["last-modified"] == modified }
        return true
    }
}

/// What a response cache says about a request before it is sent: nothing (a miss),
/// a fresh response to answer with, or validators to send and the response a 304
/// would confirm; or a stale response to answer with at once while a request with
/// validators refreshes it in the background (RFC 5861 `stale-while-revalidate`). (A struct of optionals: valgrind reads the tag of a multi-payload
/// enum returned through a protocol as uninitialised.)
public struct CacheLookup: Sendable {
    /// Fresh: answer with it, without the network.
    public var fresh: HTTPResponse?
    /// Stale or `no-cache`: send with `validators`; a 304 means `cached`.
    public var revalidation: Revalidation?
    /// Set with `fresh` (a stale response the cache may still answer with): send a
    /// request with these validators in the background, whose answer refreshes the cache.
    public var background: Revalidation?

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

    public init(fresh: HTTPResponse? = nil, revalidation: Revalidation? = nil, background: Revalidation? = nil) {
        self.fresh = fresh
        self.revalidation = revalidation
        self.background = background
    }
}
