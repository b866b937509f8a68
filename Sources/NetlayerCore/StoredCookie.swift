import Glibc
import NetlayerJSON

/// One cookie of a client's jar, as the jar lists it (a line of a Netscape cookie
/// file). The jar itself is libcurl's: it decides which cookies it stores (public
/// suffixes, host-only and Secure rules, expiry) and which it sends.
public struct StoredCookie: Sendable, Hashable {
    public var domain: String
    /// Whether the cookie goes to subdomains of `domain` too (set with a Domain attribute).
    public var includesSubdomains: Bool
    public var path: String
    public var secure: Bool
    public var httpOnly: Bool
    /// Seconds since the epoch; 0 for a session cookie.
    public var expires: Int64
    public var name: String
    public var value: String

    /// Reads one line of a Netscape cookie file; nil for a comment, a blank line or a
    /// line that is not seven tab-separated fields.
    public init?(netscapeLine line: String) {
        var text = Substring(line)
        while let last = text.last, last == "\n" || last == "\r" { text.removeLast() }
        var httpOnly = false
        if text.hasPrefix("#HttpOnly_") {
            httpOnly = true
            text = text.dropFirst("#HttpOnly_".count)
        } else if text.hasPrefix("#") || text.isEmpty {
            return nil
        }
        let fields = text.split(separator: "\t", maxSplits: 6, omittingEmptySubsequences: false)
        guard fields.count == 7, let expires = Int64(fields[4]) else { return nil }
        var domain = String(fields[0])
        if domain.hasPrefix(".") { domain.removeFirst() }
        self.domain = domain
        includesSubdomains = fields[1] == "TRUE"
        path = String(fields[2])
        secure = fields[3] == "TRUE"
        self.httpOnly = httpOnly
        self.expires = expires
        name = String(fields[5])
        value = String(fields[6])
    }

    /// Whether libcurl may send this cookie to `host`: its domain is the host, or, for
    /// a cookie set for subdomains too, a parent domain of it (RFC 6265 section 5.1.3);
    /// and it has not expired. Path and Secure are left out: this over-approximates what
    /// is sent, which is what keys and redaction need (never fewer cookies than sent).
    public func mayBeSent(to host: String, now: Int64) -> Bool {
        if expires != 0, expires < now { return false }
        let host = host.lowercased(), domain = domain.lowercased()
        if host == domain { return true }
        return includesSubdomains && host.hasSuffix("." + domain)
    }
}

/// What a transport's cookie jar holds. The response cache, logs and cassettes ask
/// it, since libcurl adds the jar's cookies to a request where Netlayer does not see
/// them; a transport without a jar has none.
public protocol CookieSource: Sendable {
    /// The jar's cookies that libcurl may send with a request to `url`.
    func cookies(for url: String) -> [StoredCookie]
}
