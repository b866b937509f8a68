import NetlayerJSON

/// How a client takes URLs apart and resolves a redirect's `Location`: with the URL
/// parser of the library that sends its requests (the curl transport's is libcurl's
/// own), so that a URL is read the same way where it is checked (that a path never
/// changes the host, which origin a credential belongs to) and where it is sent.
public protocol URLParsing: Sendable {
    /// The parts of an absolute URL; nil when `url` is not one.
    func parse(_ url: String) -> ParsedURL?
    /// `reference` (a redirect's `Location`) resolved against the absolute URL `base`;
    /// nil when it cannot be. Any scheme may come back: callers check it.
    func resolve(_ reference: String, against base: String) -> ParsedURL?
    /// Why `parse` refuses `url`, in the parser's words, for an error message.
    func reason(refusing url: String) -> String?
}

extension URLParsing {
    public func reason(refusing url: String) -> String? { nil }
}

/// An absolute URL taken apart by a `URLParsing`.
public struct ParsedURL: Sendable, Hashable {
    /// The whole URL, as the parser writes it back.
    public var url: String
    /// Lower case.
    public var scheme: String
    public var user: String?
    public var password: String?
    /// As the URL writes it (an IPv6 address in brackets).
    public var host: String
    /// The port the URL names, if it names one.
    public var port: String?
    /// `port`, or the scheme's default port.
    public var effectivePort: String?
    public var path: String
    public var query: String?

    public init(url: String, scheme: String, user: String?, password: String?, host: String, port: String?,
                effectivePort: String?, path: String, query: String?) {
        self.url = url
        self.scheme = scheme
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.effectivePort = effectivePort
        self.path = path
        self.query = query
    }

    /// "scheme://host:port" in lower case with the default port filled in: what a
    /// request's credentials are bound to.
    public var origin: String { "\(scheme)://\(host.lowercased()):\(effectivePort ?? "")" }

    /// The host without the brackets of an IPv6 address, as cookies and `.netrc` name it.
    public var bareHost: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
