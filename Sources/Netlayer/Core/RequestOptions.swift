/// Per-request transport options. A config sets the defaults
/// (`NetworkConfigurable.requestOptions`); an endpoint may override some of them.
public struct RequestOptions: Sendable, Hashable {
    /// Seconds one attempt may take, connect included; nil means no limit. For a
    /// streamed request (`TransferOptions.stream`), the longest silence between received
    /// bytes instead: a stream may live as long as it keeps talking, up to `deadline`.
    public var timeout: Double? = 30
    /// Seconds the TCP/TLS connect may take.
    public var connectTimeout: Double? = 10
    public var acceptableStatus: AcceptableStatus = .successful
    public var followRedirects = true
    public var maxRedirects = 10
    /// Decoded bytes of a body held in memory beyond which the transfer fails with `tooLarge`.
    public var maxResponseBytes = 100 * 1024 * 1024
    /// Bytes one line of a `lines` or `sse` stream, or the data of one server-sent
    /// event, may hold; beyond them the transfer fails with `tooLarge`.
    public var maxStreamItemBytes = 8 * 1024 * 1024
    /// Bytes of a body written to a file (`TransferOptions.downloadTo`) beyond which the
    /// transfer fails with `tooLarge`; nil means no limit.
    public var maxDownloadBytes: Int?
    /// Offer gzip, deflate, br and zstd and decode them transparently.
    public var compression = true
    public var userAgent: String? = RequestOptions.defaultUserAgent
    /// A proxy URL for libcurl (`http://`, `socks5://`, ...); nil means none.
    public var proxy: String?
    public var tls = TLSOptions()
    /// HTTP version, Unix domain socket, DNS overrides and the local interface.
    public var transport = TransportChoices()
    /// When and how failed attempts are tried again.
    public var retry = RetryPolicy()
    /// Seconds the whole operation may take, every attempt and back-off included. In the
    /// request of one attempt, what is left of it (which bounds a streamed transfer).
    public var deadline: Double?
    /// Request headers, besides Authorization, Cookie and Proxy-Authorization, that
    /// carry secrets (a config's `log.redact`, lower case): like those, they are not
    /// sent on to another origin when a redirect is followed.
    public var secretHeaders: Set<String> = []
    /// How requests authenticate; basic and bearer become the `Authorization` header.
    public var auth: Authentication?

    public init() {}

    /// `netlayer/` and the library's version.
    public static let defaultUserAgent = "netlayer/\(Netlayer.version)"
}
