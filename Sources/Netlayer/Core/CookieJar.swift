/// A client's cookies: libcurl's cookie engine, one jar per client shared by all its
/// requests (domain, path, secure and expiry rules are libcurl's), on by default as in
/// `requests.Session`, `httpx.Client` and URLSession.
public struct CookieJar: Sendable, Hashable {
    /// Whether requests send and store cookies.
    public var enabled: Bool
    /// A Netscape cookie file read when the client starts (a missing file is an empty
    /// jar) and, with `save`, written when it stops.
    public var file: String?
    public var save: Bool

    public init(enabled: Bool = true, file: String? = nil, save: Bool = true) {
        self.enabled = enabled
        self.file = file
        self.save = save
    }

    public static let off = CookieJar(enabled: false)
}
