import CCurl
import Glibc

/// The DNS cache, TLS session cache and cookie jar of one client, shared by its event loop and
/// by blocking requests on callers' threads. Connections are not shared (see the
/// shim): the loop keeps its pool, and each pooled blocking handle its connection.
final class CurlShare: CookieSource, @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let locks: UnsafeMutableRawPointer
    /// Whether transfers turn libcurl's cookie engine on (over this share's jar).
    let cookiesEnabled: Bool
    private let cookies: CookieJar

    init(cookies: CookieJar = CookieJar()) throws(NetworkError) {
        try CurlGlobal.ensureInitialized()
        var locks: UnsafeMutableRawPointer?
        guard let handle = nl_share_create(&locks), let locks else {
            throw .generic("curl_share_init failed", curlCode: 27)
        }
        self.handle = handle
        self.locks = locks
        self.cookies = cookies
        cookiesEnabled = cookies.enabled
    }

    deinit { nl_share_destroy(handle, locks) }

    /// Reads the jar's file, when it has one.
    func loadCookiesIfAsked() throws(NetworkError) {
        if cookies.enabled, let file = cookies.file { try loadCookies(from: file) }
    }

    /// Writes the jar to its file, when it has one to save to.
    func saveCookiesIfAsked() {
        if cookies.enabled, cookies.save, let file = cookies.file { saveCookies(to: file) }
    }

    /// Adds the cookies of a Netscape cookie file to the jar; a file that does not
    /// exist is an empty jar, one that cannot be read is `invalidRequest`.
    func loadCookies(from path: String) throws(NetworkError) {
        guard let file = fopen(path, "r") else {
            if errno == ENOENT { return }
            throw .invalidRequest("cookies key 'file': cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        try withSetupHandle { easy throws(NetworkError) in
            var line: UnsafeMutablePointer<CChar>?
            var capacity = 0
            defer { free(line) }
            while getline(&line, &capacity, file) > 0, let text = line {
                // "#HttpOnly_" lines are cookies; other '#' lines are comments.
                if text[0] == 0x23, strncmp(text, "#HttpOnly_", 10) != 0 { continue }
                if text[0] == 0x0A || text[0] == 0 { continue }
                _ = nl_curl_setopt_str(easy, CURLOPT_COOKIELIST, String(cString: text))
            }
            if ferror(file) != 0 {
                throw .invalidRequest("cookies key 'file': cannot read '\(path)': \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Writes the jar to `path` as a Netscape cookie file (libcurl's own writer).
    func saveCookies(to path: String) {
        try? withSetupHandle { easy throws(NetworkError) in
            _ = nl_curl_setopt_str(easy, CURLOPT_COOKIEJAR, path)
            _ = nl_curl_setopt_str(easy, CURLOPT_COOKIELIST, "FLUSH")
            _ = nl_curl_setopt_str(easy, CURLOPT_COOKIEJAR, nil)  // cleanup must not write it again
        }
    }

    /// The jar's cookies as libcurl lists them (`CURLINFO_COOKIELIST`): one Netscape
    /// cookie-file line each (domain, include-subdomains flag, path, secure flag,
    /// expiry, name, value; `#HttpOnly_` before the domain of an HttpOnly cookie).
    /// libcurl keeps the jar and its rules; this is how Netlayer asks what it holds.
    func cookieLines() -> [String] {
        var lines: [String] = []
        try? withSetupHandle { easy throws(NetworkError) in
            var list: UnsafeMutableRawPointer?
            guard nl_curl_getinfo_ptr(easy, CURLINFO_COOKIELIST, &list) == CURLE_OK, let list else { return }
            let head = list.assumingMemoryBound(to: curl_slist.self)
            var node: UnsafeMutablePointer<curl_slist>? = head
            while let current = node {
                if let data = current.pointee.data { lines.append(String(cString: data)) }
                node = current.pointee.next
            }
            curl_slist_free_all(head)
        }
        return lines
    }

    func cookies(for url: String) -> [StoredCookie] {
        guard cookiesEnabled, let host = Self.host(of: url) else { return [] }
        let now = Self.now
        return cookieLines().compactMap(StoredCookie.init(netscapeLine:)).filter { $0.mayBeSent(to: host, now: now) }
    }

    /// An easy handle on this share with the cookie engine on, for jar operations.
    private func withSetupHandle(_ body: (UnsafeMutableRawPointer) throws(NetworkError) -> Void) throws(NetworkError) {
        guard let easy = curl_easy_init() else { throw .generic("curl_easy_init failed", curlCode: 27) }
        defer { curl_easy_cleanup(easy) }
        _ = nl_curl_setopt_ptr(easy, CURLOPT_SHARE, handle)
        _ = nl_curl_setopt_str(easy, CURLOPT_COOKIEFILE, "")
        try body(easy)
    }
}
