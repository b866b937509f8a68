import NetlayerJSON

/// A client's cookies: libcurl's cookie engine, one jar per client shared by all its
/// requests (domain, path, secure and expiry rules are libcurl's), on by default as in
/// `requests.Session`, `httpx.Client` and URLSession.
public struct CookieJar: Sendable, Hashable {
    /// Whether requests send and store cookies.
    public var enabled: Bool
    /// A Netscape cookie file read when the client starts (a missing file is an empty
    /// jar) and, with `save`, written when it stops (mode 0600, through a temporary
    /// file renamed over it). A saving client holds a lock beside it while it lives,
    /// so that a second client saving to the same file is refused.
    public var file: String?
    public var save: Bool
    /// Whether session cookies (those without an expiry) are read from the file and
    /// written to it. Off by default: like a browser, a new client starts a new
    /// session, and a session token never rests on disk.
    public var keepSessionCookies: Bool

    public init(enabled: Bool = true, file: String? = nil, save: Bool = true, keepSessionCookies: Bool = false) {
        self.enabled = enabled
        self.file = file
        self.save = save
        self.keepSessionCookies = keepSessionCookies
    }

    public static let off = CookieJar(enabled: false)
}
