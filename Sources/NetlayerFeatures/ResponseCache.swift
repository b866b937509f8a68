import Glibc
import NetlayerCore
import NetlayerJSON

/// An in-memory HTTP cache for GET and HEAD responses (the seeds' `useCache`),
/// bounded to `maxEntries` with least-recently-used eviction.
///
/// It follows the private-cache rules of RFC 9111 that matter to an API client:
/// `no-store` is never stored; a response is fresh for `max-age` (or until
/// `Expires`); `no-cache` and stale entries are revalidated with `If-None-Match`
/// (ETag) or `If-Modified-Since` (Last-Modified), and a 304 answers from the cache.
/// Entries are keyed by method, full URL and the request headers the response's
/// `Vary` names; `Vary: *` is not stored. A stored response answers only a request
/// with exactly the credentials it was fetched with (`RequestCredentials`: credential
/// headers, digest identity and the jar's cookies for the host), so it is never served
/// to another user, to a request without them, or after the jar's session changed.
public final class ResponseCache: ResponseCaching {
    struct Entry {
        var response: HTTPResponse
        var varyHeaders: [String: String?]
        /// The credentials of the request it was stored for (`credentials(of:_:)`): it
        /// answers only requests that carry exactly these.
        var credentials: [String: String]
        var storedAt: UInt64
        var freshFor: Double
        var mustRevalidate: Bool
        var lastUse: UInt64
    }

    public let maxEntries: Int
    private let entries = Locked<(map: [String: [Entry]], count: Int, clock: UInt64)>(([:], 0, 0))

    /// Lower-case names of the request headers that carry credentials.
    private let credentialNames: [String]

    /// - Parameter credentialHeaders: request headers besides Authorization, Cookie and
    ///   Proxy-Authorization whose values tell one user from another (a config's
    ///   `log.redact` names): a response stored for one set of values is never served
    ///   to a request with other values, or with none.
    public init(maxEntries: Int = 256, credentialHeaders: Set<String> = []) {
        self.maxEntries = max(1, maxEntries)
        credentialNames = Array(Set(["authorization", "cookie", "proxy-authorization"])
            .union(credentialHeaders.map { $0.lowercased() })).sorted()
    }

    public var count: Int { entries.withLock { $0.count } }

    public func isCacheable(_ request: HTTPRequest) -> Bool {
        request.method == .get || request.method == .head
    }

    public func lookup(_ request: HTTPRequest, credentials sent: RequestCredentials) -> CacheLookup {
        let key = Self.key(request)
        let credentials = credentials(of: request, sent)
        let now = MonotonicClock.now()
        return entries.withLock { state -> CacheLookup in
            guard var variants = state.map[key],
                  let i = variants.firstIndex(where: { matches($0, request, credentials) })
            else { return .miss }
            state.clock += 1
            variants[i].lastUse = state.clock
            state.map[key] = variants
            let entry = variants[i]
            let age = Double(now &- entry.storedAt) / 1e9
            if !entry.mustRevalidate, age < entry.freshFor { return .fresh(entry.response) }
            var validators = HTTPHeaders()
            if let etag = entry.response.headers["etag"] { validators["If-None-Match"] = etag }
            if let modified = entry.response.headers["last-modified"] { validators["If-Modified-Since"] = modified }
            return validators.isEmpty ? .miss : .revalidate(validators, cached: entry.response)
        }
    }

    /// Stores a 200 (or refreshes after a 304) when its headers allow it.
    public func store(_ response: HTTPResponse, for request: HTTPRequest, credentials sent: RequestCredentials) {
        guard isCacheable(request), response.statusCode == 200 || response.statusCode == 304,
              response.downloadedFile == nil, response.streamEvents == nil
        else { return }
        let directives = Self.directives(response.headers["cache-control"])
        if directives["no-store"] != nil { return }
        let vary = (response.headers["vary"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: " \t").lowercased() }
        if vary.contains("*") { return }
        let freshFor = Self.freshness(response.headers, directives)
        let hasValidators = response.headers["etag"] != nil || response.headers["last-modified"] != nil
        guard freshFor > 0 || hasValidators else { return }
        let credentials = credentials(of: request, sent)
        var entry = Entry(response: response, varyHeaders: [:], credentials: credentials, storedAt: MonotonicClock.now(),
                          freshFor: freshFor, mustRevalidate: directives["no-cache"] != nil, lastUse: 0)
        for name in vary where !name.isEmpty { entry.varyHeaders[name] = request.headers[name] }
        entry.response.fromCache = false
        let key = Self.key(request)
        entries.withLock { state in
            state.clock += 1
            entry.lastUse = state.clock
            var variants = state.map[key] ?? []
            if let i = variants.firstIndex(where: { matches($0, request, credentials) }) {
                variants[i] = entry
            } else {
                variants.append(entry)
                state.count += 1
            }
            state.map[key] = variants
            while state.count > maxEntries { Self.evictOldest(&state) }
        }
    }

    /// After a 304: the cached response, with the new freshness stored.
    public func revalidated(_ notModified: HTTPResponse, cached: HTTPResponse, for request: HTTPRequest,
                            credentials: RequestCredentials) -> HTTPResponse {
        var response = cached
        for field in notModified.headers where field.name != "content-length" {
            response.headers[field.name] = field.value
        }
        response.totalMs = notModified.totalMs
        response.timing = notModified.timing
        store(response, for: request, credentials: credentials)
        response.fromCache = true
        return response
    }

    public func removeAll() { entries.withLock { $0 = ([:], 0, $0.clock) } }

    private static func evictOldest(_ state: inout (map: [String: [Entry]], count: Int, clock: UInt64)) {
        var oldest: (key: String, index: Int, use: UInt64)?
        for (key, variants) in state.map {
            for (i, entry) in variants.enumerated() where oldest == nil || entry.lastUse < oldest!.use {
                oldest = (key, i, entry.lastUse)
            }
        }
        guard let oldest else { return }
        state.map[oldest.key]!.remove(at: oldest.index)
        if state.map[oldest.key]!.isEmpty { state.map[oldest.key] = nil }
        state.count -= 1
    }

    private static func key(_ request: HTTPRequest) -> String { request.method.rawValue + " " + request.url }

    private func matches(_ entry: Entry, _ request: HTTPRequest, _ credentials: [String: String]) -> Bool {
        entry.credentials == credentials && entry.varyHeaders.allSatisfy { name, value in request.headers[name] == value }
    }

    /// The key of `credentials`, with the values of this cache's own credential headers
    /// (`credentialHeaders`) that the request's options do not already count.
    private func credentials(of request: HTTPRequest, _ credentials: RequestCredentials) -> [String: String] {
        var found = credentials.cacheKey
        for name in credentialNames where found[name] == nil {
            if let value = request.headers[name] { found[name] = value }
        }
        return found
    }

    static func directives(_ header: String?) -> [String: String] {
        var out: [String: String] = [:]
        for part in (header ?? "").split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            let name = pair[0].trimmingCharacters(in: " \t").lowercased()
            let value = pair.count > 1 ? pair[1].trimmingCharacters(in: " \t\"") : ""
            if !name.isEmpty { out[name] = value }
        }
        return out
    }

    /// Seconds a response stays fresh: `max-age`, else `Expires` − `Date`, else 0.
    static func freshness(_ headers: HTTPHeaders, _ directives: [String: String]) -> Double {
        if let maxAge = directives["max-age"].flatMap(Double.init) { return max(0, maxAge) }
        if let expires = headers["expires"] {
            guard let end = HTTPDate.parse(expires) else { return 0 }  // an invalid Expires means "already expired"
            let date = headers["date"].flatMap { HTTPDate.parse($0) } ?? HTTPDate.now()
            return max(0, Double(end - date))
        }
        return 0
    }
}
