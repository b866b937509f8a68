import CCurl
import Glibc
import NetlayerCore

extension CurlTransfer {
    /// A request's own cookies in place of the jar's cookies of the same name.
    ///
    /// libcurl writes one `Cookie` line: the jar's cookies for the URL, then the request's
    /// own (`CURLOPT_COOKIE`). A name in both went twice, the jar's value first, which is
    /// the one most servers read. For such a request only (the jar holds a cookie for the
    /// request's host under a name the request sets), the transfer's handle runs libcurl's
    /// cookie engine over a jar of its own: a copy of the client's jar without those
    /// cookies. libcurl keeps its rules for the cookies it adds (path, Secure, expiry), and
    /// stores what the response sets and deletes in that copy; `finish` carries those
    /// changes into the client's jar, which then holds what it would have held had the
    /// response come the usual way. The handle gets the client's jar back when it is reset
    /// (`CurlTransfer.EasyHandle.reset`). Requests without cookies of their own, or whose names the jar
    /// does not send, take libcurl's line as it is: this costs them nothing but a check of
    /// the `Cookie` header.
    final class CookieOverride {
        /// The copy's cookies as it starts: lines as libcurl lists them, and each read.
        private let seeded: [(cookie: StoredCookie, line: String)]
        private let share: CurlShare

        /// The override `request` needs, or nil (most requests: checked before anything is
        /// allocated, since every transfer asks).
        static func needed(for request: HTTPRequest, share: CurlShare) -> CookieOverride? {
            guard share.cookiesEnabled, let header = request.headers["Cookie"], !header.isEmpty else { return nil }
            return CookieOverride(header: header, url: request.url, share: share)
        }

        private init?(header: String, url: String, share: CurlShare) {
            let names = Set(header.split(separator: ";").map { pair in
                pair.prefix { $0 != "=" }.trimmingCharacters(in: " \t")
            })
            guard let host = CurlURLParser().parse(url)?.bareHost else { return nil }
            let now = HTTPDate.now()
            var overridden = false
            var seeded: [(cookie: StoredCookie, line: String)] = []
            for line in share.cookieLines() {
                guard let cookie = StoredCookie(netscapeLine: line) else { continue }
                if names.contains(cookie.name), cookie.mayBeSent(to: host, now: now) {
                    overridden = true
                } else {
                    seeded.append((cookie, line))
                }
            }
            guard overridden else { return nil }
            self.seeded = seeded
            self.share = share
        }

        /// Puts the copy under `handle`'s cookie engine (its options otherwise set).
        func install(on handle: CurlTransfer.EasyHandle, check: (CURLcode) -> Void) {
            let easy = handle.pointer
            // The client's jar stays the share's (a null file list detaches it, frees nothing).
            check(nl_curl_setopt_str(easy, CURLOPT_COOKIEFILE, nil))
            for (_, line) in seeded { check(nl_curl_setopt_str(easy, CURLOPT_COOKIELIST, line)) }
            // The engine on, over the copy (a new, empty one when nothing was seeded).
            check(nl_curl_setopt_str(easy, CURLOPT_COOKIEFILE, ""))
            handle.cookieEngineOn = true
            handle.holdsOwnCookieJar(instead: share.handle)
        }

        /// After the transfer: what the response changed in the copy goes into the client's
        /// jar (new and changed cookies as they are, deleted ones as cookies that expired).
        func finish(_ easy: UnsafeMutableRawPointer) {
            var after: [(cookie: StoredCookie, line: String)] = []
            for line in CurlShare.cookieLines(of: easy) {
                if let cookie = StoredCookie(netscapeLine: line) { after.append((cookie, line)) }
            }
            let before = Set(seeded.map(\.cookie))
            var changes = after.filter { !before.contains($0.cookie) }.map(\.line)
            let kept = Set(after.map { Self.key(of: $0.cookie) })
            for (cookie, line) in seeded where !kept.contains(Self.key(of: cookie)) {
                changes.append(CookieLimits.deletion(of: line))
            }
            try? share.addCookies(changes)
        }

        private struct Key: Hashable {
            let domain: String
            let path: String
            let name: String
        }

        /// What libcurl tells one cookie from another by (a later one replaces an earlier).
        private static func key(of cookie: StoredCookie) -> Key {
            Key(domain: cookie.domain.lowercased(), path: cookie.path, name: cookie.name)
        }
    }
}
