import NetlayerCore

/// What a request's `Cache-Control` asks of the cache (RFC 9111 section 5.2.1), and
/// `Pragma: no-cache` when it has no `Cache-Control` (section 5.4).
struct RequestDirectives {
    let control: CacheControl
    /// Revalidate even a fresh response.
    let noCache: Bool
    /// Neither answer from the cache nor store.
    let noStore: Bool
    /// Answer from the cache or with a 504, never from the network.
    let onlyIfCached: Bool
    /// How stale a response may be served without revalidation (infinite for a bare
    /// `max-stale`), nil when the request says nothing.
    let maxStale: Double?
    private let maxAge: Double?
    private let minFresh: Double?

    init(_ request: HTTPRequest) {
        control = CacheControl(request.headers["cache-control"])
        let pragmaNoCache = control.isEmpty && request.headers["pragma"].map {
            CacheControl.members(of: $0).contains { $0.lowercased() == "no-cache" }
        } == true
        noCache = control.has("no-cache") || pragmaNoCache
        noStore = control.has("no-store")
        onlyIfCached = control.has("only-if-cached")
        maxAge = control.seconds("max-age")
        minFresh = control.seconds("min-fresh")
        if let argument = control.argument("max-stale") {
            maxStale = argument.isEmpty ? .infinity : CacheControl.deltaSeconds(argument) ?? 0
        } else {
            maxStale = nil
        }
    }

    /// Whether a response of `age` and freshness `lifetime` is one the request accepts
    /// by its `max-age` and `min-fresh` (staleness is judged apart).
    func accepts(age: Double, lifetime: Double) -> Bool {
        if let maxAge, age > maxAge { return false }
        if let minFresh, lifetime - age < minFresh { return false }
        return true
    }
}
