import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// The DNS cache, TLS session cache and cookie jar of one client, for every transfer of
/// its multi handle, whichever thread drives it (the loop's, or a blocking caller's).
/// Connections are not in the share (see the shim): the multi handle is the client's
/// one connection pool.
package final class CurlShare: CookieSource, @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let locks: UnsafeMutableRawPointer
    /// Whether transfers turn libcurl's cookie engine on (over this share's jar).
    let cookiesEnabled: Bool
    /// What Netlayer knows of the jar between two listings of it.
    private let view = Locked(JarView())

    private struct JarView {
        /// The jar's cookies by lower-cased domain as last listed; nil once it may
        /// have changed.
        var cookiesByDomain: [String: [StoredCookie]]?
        /// Changes noted: a listing made before one is not kept.
        var generation: UInt64 = 0
        /// `Set-Cookie` lines and cookies added since the jar was last held to its limits.
        var addedSinceTrim = 0
        /// Whether a thread is holding the jar to its limits now.
        var trimming = false
    }

    init(cookiesEnabled: Bool = true) throws(NetworkError) {
        try CurlSessionManager.CurlGlobal.ensureInitialized()
        var locks: UnsafeMutableRawPointer?
        guard let handle = nl_share_create(&locks), let locks else {
            throw .generic("curl_share_init failed", curlCode: 27)
        }
        self.handle = handle
        self.locks = locks
        self.cookiesEnabled = cookiesEnabled
    }

    deinit { nl_share_destroy(handle, locks) }

    /// Fills a jar that holds no cookies yet (from the cookie file, or a parent's jar at
    /// a `fork()`) with `lines` (Netscape cookie-file lines, as `cookieLines()` lists
    /// them), as many as `CookieLimits` keeps; libcurl refuses the lines it cannot read,
    /// as it does in a cookie file.
    func seedCookies(_ lines: [String]) throws(NetworkError) {
        try add(CookieLimits.split(lines).kept)
    }

    /// Adds or changes cookies of the jar (lines as `seedCookies` takes), which a
    /// transfer that ran over a jar of its own changed (`CurlTransfer.CookieOverride`).
    func addCookies(_ lines: [String]) throws(NetworkError) {
        try add(lines)
        cookiesChanged(added: lines.count)
    }

    private func add(_ lines: [String]) throws(NetworkError) {
        guard !lines.isEmpty else { return }
        try withSetupHandle { easy throws(NetworkError) in
            for line in lines { _ = nl_curl_setopt_str(easy, CURLOPT_COOKIELIST, line) }
        }
    }

    /// Notes that the jar may hold other cookies than it did: a response to a transfer
    /// over it had `added` `Set-Cookie` lines (libcurl has stored what it takes of them),
    /// or cookies were added. What `cookies(for:)` read before is read again, and once
    /// enough cookies may have come in since the jar was last held to its limits, it is
    /// held to them again (so it holds at most `CookieLimits.total` and the cookies of
    /// `trimEvery` lines more, whatever servers send).
    func cookiesChanged(added: Int) {
        let counted = view.withLock { view -> Int? in
            view.cookiesByDomain = nil
            view.generation &+= 1
            view.addedSinceTrim += added
            guard view.addedSinceTrim >= Self.trimEvery, !view.trimming else { return nil }
            view.trimming = true
            return view.addedSinceTrim
        }
        guard let counted else { return }
        let dropped = CookieLimits.split(cookieLines()).dropped
        try? add(dropped.map(CookieLimits.deletion(of:)))
        view.withLock { view in
            view.cookiesByDomain = nil
            view.generation &+= 1
            view.addedSinceTrim -= counted  // what came in meanwhile counts towards the next
            view.trimming = false
        }
    }

    /// How many cookies may come in between two checks of the jar against its limits:
    /// a check lists the whole jar, which costs libcurl the square of its size.
    static let trimEvery = 100

    /// The jar's cookies within its limits, for the cookie file: the jar may hold up to
    /// `trimEvery` more.
    func limitedCookieLines() -> [String] { CookieLimits.split(cookieLines()).kept }

    /// The jar's cookies as libcurl lists them (`CURLINFO_COOKIELIST`): one Netscape
    /// cookie-file line each (domain, include-subdomains flag, path, secure flag,
    /// expiry, name, value; `#HttpOnly_` before the domain of an HttpOnly cookie).
    /// libcurl keeps the jar and its rules; this is how Netlayer asks what it holds.
    func cookieLines() -> [String] {
        var lines: [String] = []
        try? withSetupHandle { easy throws(NetworkError) in lines = Self.cookieLines(of: easy) }
        return lines
    }

    /// The cookies of the jar `easy`'s cookie engine runs over, as `cookieLines()`.
    static func cookieLines(of easy: UnsafeMutableRawPointer) -> [String] {
        var lines: [String] = []
        var list: UnsafeMutableRawPointer?
        guard nl_curl_getinfo_ptr(easy, CURLINFO_COOKIELIST, &list) == CURLE_OK, let list else { return lines }
        let head = list.assumingMemoryBound(to: curl_slist.self)
        var node: UnsafeMutablePointer<curl_slist>? = head
        while let current = node {
            if let data = current.pointee.data { lines.append(String(cString: data)) }
            node = current.pointee.next
        }
        curl_slist_free_all(head)
        return lines
    }

    /// The cookies that libcurl may send to `url`'s host. The jar is listed once and
    /// kept by domain until it changes (`cookiesChanged`), so that the requests that ask
    /// (the response cache, logs, cassettes) do not each pay for listing all of it.
    package func cookies(for url: String) -> [StoredCookie] {
        guard cookiesEnabled, let bareHost = CurlURLParser().parse(url)?.bareHost else { return [] }
        let (known, generation) = view.withLock { ($0.cookiesByDomain, $0.generation) }
        let byDomain = known ?? listedByDomain(generation: generation)
        let host = bareHost.lowercased(), now = HTTPDate.now()
        // The host's own cookies, then those of each domain it is a subdomain of.
        var found: [StoredCookie] = []
        var domain = Substring(host)
        while true {
            for cookie in byDomain[String(domain)] ?? [] where cookie.mayBeSent(to: host, now: now) {
                found.append(cookie)
            }
            guard let dot = domain.firstIndex(of: ".") else { break }
            domain = domain[domain.index(after: dot)...]
        }
        return found
    }

    /// The jar's cookies by lower-cased domain, listed now; kept for the next caller
    /// unless the jar changed meanwhile (`generation` is the change count it was asked at).
    private func listedByDomain(generation: UInt64) -> [String: [StoredCookie]] {
        var byDomain: [String: [StoredCookie]] = [:]
        for line in cookieLines() {
            guard let cookie = StoredCookie(netscapeLine: line) else { continue }
            byDomain[cookie.domain.lowercased(), default: []].append(cookie)
        }
        view.withLock { view in
            if view.generation == generation { view.cookiesByDomain = byDomain }
        }
        return byDomain
    }

    /// Takes every lock of the share before a `fork()` (see `ForkParticipant`), so that
    /// a child finds the jar as no thread was changing it and can copy it.
    func lockForFork() { nl_share_lock_all(locks) }

    /// Gives back the locks `lockForFork()` took, in the parent and in the child.
    func unlockAfterFork() { nl_share_unlock_all(locks) }

    /// An easy handle on this share with the cookie engine on, for jar operations.
    private func withSetupHandle(_ body: (UnsafeMutableRawPointer) throws(NetworkError) -> Void) throws(NetworkError) {
        guard let easy = curl_easy_init() else { throw .generic("curl_easy_init failed", curlCode: 27) }
        defer { curl_easy_cleanup(easy) }
        _ = nl_curl_setopt_ptr(easy, CURLOPT_SHARE, handle)
        _ = nl_curl_setopt_str(easy, CURLOPT_COOKIEFILE, "")
        try body(easy)
    }
}
