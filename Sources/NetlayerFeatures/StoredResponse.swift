import NetlayerCore
import NetlayerJSON

/// A response the cache keeps, with what RFC 9111 computes its freshness and age from:
/// the freshness lifetime (section 4.2.1), and the corrected initial age and the
/// moment it arrived (section 4.2.3), from which its current age follows.
struct StoredResponse {
    /// As received, without hop-by-hop fields (section 3.1); `fromCache` false.
    var response: HTTPResponse
    /// The request's values of the headers the response's `Vary` names, normalised
    /// (`SelectingHeaders`); nil where the request had none.
    var selecting: [String: String?]
    /// The credentials of the request it was stored for: it answers only requests that
    /// carry exactly these.
    var credentials: [String: String]
    var control: CacheControl
    /// Seconds it is fresh for, counted from its age 0.
    var freshnessLifetime: Double
    /// corrected_initial_age: its age when it arrived.
    var initialAge: Double
    /// response_time on the monotonic clock (ns).
    var storedAt: UInt64
    /// When a background revalidation of it started (monotonic ns), if one is under way.
    var refreshStartedAt: UInt64?
    var lastUse: UInt64 = 0

    /// What the entry holds against the cache's `maxBytes`: its body and header fields.
    var size: Int {
        var size = response.body.count
        for field in response.headers { size += field.name.utf8.count + field.value.utf8.count + 4 }
        return size
    }

    /// Statuses a response may be stored with without explicit freshness, and given
    /// heuristic freshness (RFC 9110 section 15.1; 206 left out: the cache keeps
    /// whole responses only).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Statuses whose caching rules this cache implements, for `must-understand`
    /// (section 5.2.2.3): the above, and the redirects it stores with explicit freshness.
    static let understood = heuristicallyCacheable.union([302, 303, 307])
    /// The longest heuristic lifetime, as common caches cap it.
    static let maxHeuristicLifetime: Double = 86_400
    /// Fields that describe one connection, never stored (RFC 9110 section 7.6.1), and
    /// the Proxy- fields that belong to one hop.
    static let hopByHop = ["connection", "keep-alive", "te", "transfer-encoding", "upgrade", "proxy-connection",
                           "proxy-authenticate", "proxy-authentication-info", "proxy-authorization"]

    /// `response` to `request` as the cache would store it, or nil when RFC 9111
    /// section 3 forbids storing it (or it could never be used: neither fresh, nor
    /// validatable, nor allowed to answer stale). `ageSource` is the message its age comes from: the response
    /// itself, or the 304 that refreshed it.
    init?(_ response: HTTPResponse, for request: HTTPRequest, credentials: [String: String],
          ageSource: HTTPResponse, now: UInt64) {
        let status = response.statusCode
        guard status >= 200, status != 206, status != 304,
              !CacheControl(request.headers["cache-control"]).has("no-store") else { return nil }
        let control = CacheControl(response.headers["cache-control"])
        if control.has("must-understand") {
            guard Self.understood.contains(status) else { return nil }  // and no-store is then ignored
        } else if control.has("no-store") {
            return nil
        }
        guard let vary = SelectingHeaders.names(in: response.headers["vary"]) else { return nil }  // Vary: *
        guard Self.heuristicallyCacheable.contains(status) || control.has("max-age")
                || response.headers["expires"] != nil || control.has("public") || control.has("private")
        else { return nil }

        let wallNow = HTTPDate.now()
        var stored = response
        stored.headers = Self.withoutHopByHop(response.headers)
        // The jar took the cookies when the response arrived; a stored copy handed out
        // again would show a session that may have ended since (as Chromium's cache
        // stores responses without them).
        if stored.headers["set-cookie"] != nil { stored.headers["set-cookie"] = nil }
        if stored.headers["date"] == nil { stored.headers["date"] = HTTPDate.format(wallNow) }  // RFC 9110 6.6.1
        stored.fromCache = false
        stored.sentHeaderLines = []  // what one exchange sent: an answer from the cache sends nothing
        let lifetime = Self.freshnessLifetime(stored.headers, control, status: status, now: wallNow)
        guard lifetime > 0 || !Self.validators(of: stored.headers).isEmpty
                || (control.seconds("stale-while-revalidate") ?? 0) > 0 || (control.seconds("stale-if-error") ?? 0) > 0
        else { return nil }

        self.response = stored
        self.control = control
        self.credentials = credentials
        freshnessLifetime = lifetime
        initialAge = Self.initialAge(of: ageSource, now: wallNow)
        storedAt = now
        selecting = [:]
        for name in vary { selecting[name] = SelectingHeaders.value(of: name, in: request) }
    }

    /// current_age (section 4.2.3), in seconds.
    func age(at now: UInt64) -> Double { initialAge + Double(now &- storedAt) / 1e9 }

    func isFresh(at now: UInt64) -> Bool { freshnessLifetime > age(at: now) }

    /// Seconds past its freshness lifetime (negative while fresh).
    func staleness(at now: UInt64) -> Double { age(at: now) - freshnessLifetime }

    /// Whether it may ever be served stale (section 4.2.4): not with `no-cache` (never
    /// used unvalidated) or `must-revalidate`.
    var mayServeStale: Bool { !control.has("no-cache") && !control.has("must-revalidate") }

    /// The response as the cache answers with it: `Age` its current age (section 5.1).
    func served(at now: UInt64) -> HTTPResponse {
        var answer = response
        answer.headers["age"] = String(Int(min(age(at: now), CacheControl.maxDeltaSeconds)))
        answer.fromCache = true
        return answer
    }

    /// The conditional headers that revalidate it (section 4.3.1).
    var validators: HTTPHeaders { Self.validators(of: response.headers) }

    /// The conditional headers a response with `headers` is revalidated with: its entity
    /// tag, and its `Last-Modified` when that is an HTTP-date (RFC 9110 section 13.1.3
    /// has a server ignore an `If-Modified-Since` that is not one, so it validates nothing).
    static func validators(of headers: HTTPHeaders) -> HTTPHeaders {
        var validators = HTTPHeaders()
        if let etag = headers["etag"] { validators["If-None-Match"] = etag }
        if let modified = headers["last-modified"], HTTPDate.parse(modified) != nil {
            validators["If-Modified-Since"] = modified
        }
        return validators
    }

    /// Whether it is a redirect a request that follows redirects would follow: such a
    /// request is not answered with it.
    var isFollowableRedirect: Bool {
        [301, 302, 303, 307, 308].contains(response.statusCode) && response.headers["location"] != nil
    }

    /// Section 4.2.1: `max-age` (s-maxage is for shared caches), else `Expires` −
    /// `Date` (an invalid `Expires` is already expired, section 5.3), else a heuristic
    /// (section 4.2.2): 10% of the time since `Last-Modified`, at most a day, for
    /// statuses that allow one or a response marked `public`.
    static func freshnessLifetime(_ headers: HTTPHeaders, _ control: CacheControl, status: Int, now: Int64) -> Double {
        if let maxAge = control.seconds("max-age") { return maxAge }
        let date = headers["date"].flatMap { HTTPDate.parse($0) } ?? now
        if let expires = headers["expires"] {
            guard let end = HTTPDate.parse(expires) else { return 0 }
            return max(0, Double(end - date))
        }
        guard heuristicallyCacheable.contains(status) || control.has("public"),
              let modified = headers["last-modified"].flatMap({ HTTPDate.parse($0) }), modified <= date
        else { return 0 }
        return min(Double(date - modified) / 10, maxHeuristicLifetime)
    }

    /// corrected_initial_age (section 4.2.3) of `message` received now: the larger of
    /// its apparent age (now − `Date`) and its `Age` plus the time the request took.
    static func initialAge(of message: HTTPResponse, now: Int64) -> Double {
        let apparentAge = message.headers["date"].flatMap { HTTPDate.parse($0) }.map { max(0, Double(now - $0)) } ?? 0
        let responseDelay = message.totalMs.isFinite ? max(0, message.totalMs / 1000) : 0
        return max(apparentAge, ageValue(message.headers["age"]) + responseDelay)
    }

    /// The `Age` field's value: its first member as delta-seconds (several lines arrive
    /// joined, and the first counts); anything else (negative, fractional, text) is
    /// ignored as 0.
    static func ageValue(_ field: String?) -> Double {
        guard let field, let first = CacheControl.members(of: field).first else { return 0 }
        return CacheControl.deltaSeconds(first) ?? 0
    }

    /// `headers` without `Connection`, the fields it names and the other hop-by-hop fields.
    static func withoutHopByHop(_ headers: HTTPHeaders) -> HTTPHeaders {
        var names = hopByHop
        if let connection = headers["connection"] {
            names += CacheControl.members(of: connection).map { $0.lowercased() }
        }
        guard names.contains(where: { headers[$0] != nil }) else { return headers }  // most responses: no copy
        var kept = headers
        for name in names { kept[name] = nil }
        return kept
    }
}
