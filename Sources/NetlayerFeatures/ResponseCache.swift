import NetlayerCore
import NetlayerJSON

/// An in-memory private HTTP cache (RFC 9111, with RFC 5861's `stale-while-revalidate`
/// and `stale-if-error`) for GET and HEAD responses (the seeds' `useCache`), bounded to
/// `maxEntries` and `maxBytes` of bodies and fields with least-recently-used eviction.
///
/// What it stores (section 3): final responses other than 206 without `no-store`
/// (unless `must-understand` and a status it understands), with a status cacheable by
/// default or explicit freshness (`max-age`, `Expires`, `public`, `private`), and with
/// some freshness or a validator; never `Vary: *`; hop-by-hop fields dropped. How long
/// (section 4.2): `max-age`, else `Expires` − `Date`, else 10% of the time since
/// `Last-Modified` (at most a day), minus the response's age (`Age`, the time the
/// request took, `Date`). A stale or `no-cache` response is revalidated with
/// `If-None-Match`/`If-Modified-Since`; a 304, or a 200 to a HEAD that describes it,
/// updates its stored fields (sections 4.3.4, 4.3.5). Responses
/// served from the cache carry their current `Age`. An unsafe request invalidates its
/// target (section 4.4). Request directives `no-cache`, `no-store`, `max-age`,
/// `min-fresh`, `max-stale`, `only-if-cached` (and `Pragma: no-cache`) are honoured.
///
/// Entries are keyed by method, full URL and the request headers the response's `Vary`
/// names, normalised (`SelectingHeaders`). A stored response answers only a request
/// with exactly the credentials it was fetched with (`RequestCredentials`: credential
/// headers, digest identity and the jar's cookies for the host), so it is never served
/// to another user, to a request without them, or after the jar's session changed.
public final class ResponseCache: ResponseCaching {
    public let maxEntries: Int
    /// The bytes of bodies and header fields the cache holds at most; a larger response
    /// is not stored.
    public let maxBytes: Int
    private let entries = Locked<State>(State())

    private struct State {
        var map: [String: [StoredResponse]] = [:]
        var count = 0
        var bytes = 0
        var clock: UInt64 = 0

        mutating func added(_ entry: StoredResponse) { count += 1; bytes += entry.size }
        mutating func removed(_ entry: StoredResponse) { count -= 1; bytes -= entry.size }
    }

    /// Lower-case names of the request headers that carry credentials.
    private let credentialNames: [String]

    /// How long a background revalidation (`stale-while-revalidate`) may take before
    /// another request may start a new one for the same response.
    static let refreshTimeout: UInt64 = 60_000_000_000

    /// - Parameter credentialHeaders: request headers besides Authorization, Cookie and
    ///   Proxy-Authorization whose values tell one user from another (a config's
    ///   `log.redact` names): a response stored for one set of values is never served
    ///   to a request with other values, or with none.
    public init(maxEntries: Int = 256, maxBytes: Int = 64 * 1024 * 1024, credentialHeaders: Set<String> = []) {
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(1, maxBytes)
        credentialNames = Array(Set(["authorization", "cookie", "proxy-authorization"])
            .union(credentialHeaders.map { $0.lowercased() })).sorted()
    }

    public var count: Int { entries.withLock { $0.count } }

    /// GET and HEAD, but not a download or a stream: their answer is a file written or
    /// events delivered as the body arrives, which a stored body would skip.
    public func isCacheable(_ request: HTTPRequest) -> Bool {
        (request.method == .get || request.method == .head)
            && request.transfer.downloadTo == nil && request.transfer.stream == nil
    }

    public func lookup(_ request: HTTPRequest, credentials sent: RequestCredentials) -> CacheLookup {
        let asked = RequestDirectives(request)
        if asked.noStore { return .miss }
        let key = Self.key(request)
        let credentials = credentials(of: request, sent)
        let now = Platform.MonotonicClock.now()
        return entries.withLock { state -> CacheLookup in
            guard var variants = state.map[key],
                  let i = variants.firstIndex(where: { usable($0, for: request, credentials) })
            else { return asked.onlyIfCached ? .fresh(Self.gatewayTimeout(request)) : .miss }
            state.clock += 1
            variants[i].lastUse = state.clock
            defer { state.map[key] = variants }
            let entry = variants[i]
            let age = entry.age(at: now)
            let staleness = entry.staleness(at: now)
            let wanted = asked.accepts(age: age, lifetime: entry.freshnessLifetime)
            if wanted, !asked.noCache, !entry.control.has("no-cache") {
                if staleness < 0 { return .fresh(entry.served(at: now)) }
                if entry.mayServeStale, let maxStale = asked.maxStale, staleness <= maxStale {
                    return .fresh(entry.served(at: now))
                }
            }
            if asked.onlyIfCached { return .fresh(Self.gatewayTimeout(request)) }
            let validators = entry.validators
            if wanted, !asked.noCache, entry.mayServeStale,
               let window = entry.control.seconds("stale-while-revalidate"), staleness < window {
                // Answer now; one request at a time refreshes it in the background.
                guard entry.refreshStartedAt.map({ now &- $0 > Self.refreshTimeout }) ?? true else {
                    return .fresh(entry.served(at: now))
                }
                variants[i].refreshStartedAt = now
                return CacheLookup(fresh: entry.served(at: now),
                                   background: .init(validators: validators, cached: entry.response))
            }
            return validators.isEmpty ? .miss : .revalidate(validators, cached: entry.response)
        }
    }

    /// Stores `response` when RFC 9111 section 3 allows it (`StoredResponse`).
    /// A 200 to a HEAD also updates the stored GET responses it describes (section 4.3.5).
    public func store(_ response: HTTPResponse, for request: HTTPRequest, credentials sent: RequestCredentials) {
        guard isCacheable(request), response.downloadedFile == nil, response.streamEvents == nil else { return }
        let now = Platform.MonotonicClock.now()
        let credentials = credentials(of: request, sent)
        if request.method == .head, response.statusCode == 200 {
            updateStoredGETs(from: response, for: request, credentials: credentials, now: now)
        }
        guard let entry = StoredResponse(response, for: request, credentials: credentials, ageSource: response, now: now)
        else {
            // A newer answer that may not be stored supersedes what is (as Chromium's
            // cache drops it): a 503 stored with max-age must not answer after a retry
            // got a 200 that says nothing of caching. Not a server error, which
            // stale-if-error may answer with the stored response (RFC 5861), nor the
            // answer to a request that asked for nothing to be stored (no-store).
            if response.statusCode < 500, !RequestDirectives(request).noStore { remove(request, credentials) }
            return
        }
        insert(entry, for: request)
    }

    /// After a 304: the cached response with the 304's fields (section 4.3.4; not
    /// `Content-Length`, `Content-Encoding` or `Content-Range`, which describe the
    /// stored body, nor hop-by-hop fields), stored again with its new age and freshness.
    public func revalidated(_ notModified: HTTPResponse, cached: HTTPResponse, for request: HTTPRequest,
                            credentials sent: RequestCredentials) -> HTTPResponse {
        var response = Self.updated(cached, from: notModified)
        response.totalMs = notModified.totalMs
        response.timing = notModified.timing
        let now = Platform.MonotonicClock.now()
        let credentials = credentials(of: request, sent)
        guard let entry = StoredResponse(response, for: request, credentials: credentials, ageSource: notModified,
                                         now: now)
        else {
            // The 304 made it unstorable (`no-store`, say): answer with it this once.
            remove(request, credentials)
            response.headers["age"] = String(Int(StoredResponse.initialAge(of: notModified, now: HTTPDate.now())))
            response.fromCache = true
            return response
        }
        insert(entry, for: request)
        return entry.served(at: now)
    }

    public func staleIfError(_ request: HTTPRequest, credentials sent: RequestCredentials) -> HTTPResponse? {
        let asked = RequestDirectives(request)
        guard !asked.noStore else { return nil }
        let credentials = credentials(of: request, sent)
        let now = Platform.MonotonicClock.now()
        return entries.withLock { state -> HTTPResponse? in
            guard let entry = state.map[Self.key(request)]?.first(where: { usable($0, for: request, credentials) }),
                  entry.mayServeStale
            else { return nil }
            let windows = [entry.control.seconds("stale-if-error"), asked.control.seconds("stale-if-error")]
            guard let window = windows.compactMap({ $0 }).max(), entry.staleness(at: now) <= window else { return nil }
            return entry.served(at: now)
        }
    }

    public func invalidate(after response: HTTPResponse, to request: HTTPRequest, finalURL: String,
                           urlParser: any URLParsing) {
        guard !request.method.isSafe, let target = urlParser.parse(request.url) else { return }
        let redirected = finalURL != request.url
        // A redirect answered the target itself; otherwise only a success or a redirect counts.
        guard redirected || (200..<400).contains(response.statusCode) else { return }
        var urls: Set<String> = [request.url, target.url]
        let changed = redirected ? [finalURL] : [response.headers["location"], response.headers["content-location"]]
        for reference in changed.compactMap({ $0 }) {
            // Only the target's origin: another host's responses are not the server's to drop.
            if let url = urlParser.resolve(reference, against: request.url), url.origin == target.origin {
                urls.insert(url.url)
            }
        }
        entries.withLock { state in
            for url in urls {
                for method in ["GET", "HEAD"] {
                    for dropped in state.map.removeValue(forKey: Self.key(method: method, url: url)) ?? [] {
                        state.removed(dropped)
                    }
                }
            }
        }
    }

    public func removeAll() { entries.withLock { $0 = State(clock: $0.clock) } }

    /// Section 4.3.5: each stored GET response that `request`, a HEAD answered with
    /// `head` (a 200), could have chosen is updated from `head` as from a 304 when the
    /// validators and `Content-Length` that `head` has are the stored response's too;
    /// otherwise `head` describes another representation and the stored one is stale
    /// from now on (revalidated, or fetched again, before it answers unless it may be
    /// served stale).
    private func updateStoredGETs(from head: HTTPResponse, for request: HTTPRequest, credentials: [String: String],
                                  now: UInt64) {
        entries.withLock { state in
            let key = Self.key(method: "GET", url: request.url)
            guard var variants = state.map[key] else { return }
            for i in variants.indices.reversed() where matches(variants[i], request, credentials) {
                let stored = variants[i]
                let describesIt = ["etag", "last-modified", "content-length"].allSatisfy { name in
                    head.headers[name].map { $0 == stored.response.headers[name] } ?? true
                }
                guard describesIt else {
                    variants[i].freshnessLifetime = min(stored.freshnessLifetime, stored.age(at: now))
                    continue
                }
                state.removed(stored)
                if var updated = StoredResponse(Self.updated(stored.response, from: head), for: request,
                                                credentials: credentials, ageSource: head, now: now) {
                    updated.lastUse = stored.lastUse
                    variants[i] = updated
                    state.added(updated)
                } else {
                    variants.remove(at: i)  // the HEAD's fields make it unstorable (`no-store`, say)
                }
            }
            state.map[key] = variants.isEmpty ? nil : variants
            while state.bytes > maxBytes, state.count > 0 { Self.evictOldest(&state) }
        }
    }

    /// `stored` with the fields of `message`, a 304 or a HEAD's 200 that describes it
    /// (section 3.2): all but the hop-by-hop ones and `keptOnUpdate`.
    private static func updated(_ stored: HTTPResponse, from message: HTTPResponse) -> HTTPResponse {
        var response = stored
        for field in StoredResponse.withoutHopByHop(message.headers)
        where !keptOnUpdate.contains(field.name.lowercased()) {
            response.headers[field.name] = field.value
        }
        if message.headers["date"] == nil { response.headers["date"] = HTTPDate.format(HTTPDate.now()) }
        return response
    }

    /// Fields of a 304 that do not replace the stored ones: they describe the stored
    /// body as it was received and decoded, or are the cache's to compute.
    private static let keptOnUpdate: Set<String> = ["content-length", "content-encoding", "content-range", "age"]

    private func insert(_ entry: StoredResponse, for request: HTTPRequest) {
        var entry = entry
        let key = Self.key(request)
        let fits = entry.size <= maxBytes
        entries.withLock { state in
            state.clock += 1
            entry.lastUse = state.clock
            var variants = state.map[key] ?? []
            if let i = variants.firstIndex(where: { matches($0, request, entry.credentials) }) {
                // A newer response replaces the stored one; one too large to keep drops it.
                state.removed(variants[i])
                if fits { variants[i] = entry } else { variants.remove(at: i) }
            } else if fits {
                variants.append(entry)
            }
            if fits { state.added(entry) }
            state.map[key] = variants.isEmpty ? nil : variants
            while state.count > maxEntries || state.bytes > maxBytes { Self.evictOldest(&state) }
        }
    }

    private func remove(_ request: HTTPRequest, _ credentials: [String: String]) {
        let key = Self.key(request)
        entries.withLock { state in
            guard var variants = state.map[key],
                  let i = variants.firstIndex(where: { matches($0, request, credentials) }) else { return }
            state.removed(variants.remove(at: i))
            state.map[key] = variants.isEmpty ? nil : variants
        }
    }

    private static func evictOldest(_ state: inout State) {
        var oldest: (key: String, index: Int, use: UInt64)?
        for (key, variants) in state.map {
            for (i, entry) in variants.enumerated() where oldest == nil || entry.lastUse < oldest!.use {
                oldest = (key, i, entry.lastUse)
            }
        }
        guard let oldest else { return }
        state.removed(state.map[oldest.key]!.remove(at: oldest.index))
        if state.map[oldest.key]!.isEmpty { state.map[oldest.key] = nil }
    }

    private static func key(_ request: HTTPRequest) -> String { key(method: request.method.rawValue, url: request.url) }

    private static func key(method: String, url: String) -> String { method + " " + url }

    /// What a request with `only-if-cached` gets when the cache cannot answer it
    /// (RFC 9111 section 5.2.1.7).
    private static func gatewayTimeout(_ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse(statusCode: 504, effectiveURL: request.url)
        response.fromCache = true
        return response
    }

    private func matches(_ entry: StoredResponse, _ request: HTTPRequest, _ credentials: [String: String]) -> Bool {
        entry.credentials == credentials && entry.selecting.allSatisfy { name, value in
            SelectingHeaders.value(of: name, in: request) == value
        }
    }

    /// Whether `entry` may answer `request` at all: it matches, and it is not a redirect
    /// that the request would have followed.
    private func usable(_ entry: StoredResponse, for request: HTTPRequest, _ credentials: [String: String]) -> Bool {
        matches(entry, request, credentials) && !(request.options.followRedirects && entry.isFollowableRedirect)
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
}
