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

    init(cookiesEnabled: Bool = true) throws(NetworkError) {
        try CurlGlobal.ensureInitialized()
        var locks: UnsafeMutableRawPointer?
        guard let handle = nl_share_create(&locks), let locks else {
            throw .generic("curl_share_init failed", curlCode: 27)
        }
        self.handle = handle
        self.locks = locks
        self.cookiesEnabled = cookiesEnabled
    }

    deinit { nl_share_destroy(handle, locks) }

    /// Adds cookies to the jar, each a Netscape cookie-file line (what `cookieLines()`
    /// gives); libcurl refuses the lines it cannot read, as it does in a cookie file.
    func addCookies(_ lines: [String]) throws(NetworkError) {
        guard !lines.isEmpty else { return }
        try withSetupHandle { easy throws(NetworkError) in
            for line in lines { _ = nl_curl_setopt_str(easy, CURLOPT_COOKIELIST, line) }
        }
    }

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

    package func cookies(for url: String) -> [StoredCookie] {
        guard cookiesEnabled, let host = CurlURLParser().parse(url)?.bareHost else { return [] }
        let now = HTTPDate.now()
        return cookieLines().compactMap(StoredCookie.init(netscapeLine:)).filter { $0.mayBeSent(to: host, now: now) }
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
