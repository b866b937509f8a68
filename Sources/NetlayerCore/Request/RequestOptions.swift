import NetlayerJSON

extension HTTPRequest {
    /// Per-request transport options. A config sets the defaults
    /// (`NetworkConfigurable.requestOptions`); an endpoint may override some of them.
    ///
    /// Every request copies its options several times on its way, so the parts that hold
    /// strings, sets and arrays live in one copy-on-write box: a copy retains one object
    /// instead of a dozen, and two requests of one client share the box until one changes.
    public struct RequestOptions: Sendable, Hashable {
        /// Seconds one attempt may take, connect included; nil means no limit. For a
        /// streamed request (`TransferOptions.stream`), the longest silence between received
        /// bytes instead: a stream may live as long as it keeps talking, up to `deadline`.
        public var timeout: Double? = 30
        /// Seconds the TCP/TLS connect may take.
        public var connectTimeout: Double? = 10
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
        /// Seconds the whole operation may take, every attempt and back-off included. In the
        /// request of one attempt, what is left of it (which bounds a streamed transfer).
        public var deadline: Double?

        private var boxed = CopyOnWrite(Boxed())

        public init() {}

        public var acceptableStatus: AcceptableStatus {
            get { boxed.value.acceptableStatus }
            set { boxed.value.acceptableStatus = newValue }
        }
        public var userAgent: String? {
            get { boxed.value.userAgent }
            set { boxed.value.userAgent = newValue }
        }
        /// A proxy URL for libcurl (`http://`, `socks5://`, ...); nil means none.
        public var proxy: String? {
            get { boxed.value.proxy }
            set { boxed.value.proxy = newValue }
        }
        public var tls: TLSOptions {
            get { boxed.value.tls }
            set { boxed.value.tls = newValue }
        }
        /// HTTP version, Unix domain socket, DNS overrides and the local interface.
        public var transport: TransportChoices {
            get { boxed.value.transport }
            set { boxed.value.transport = newValue }
        }
        /// When and how failed attempts are tried again.
        public var retry: RetryPolicy {
            get { boxed.value.retry }
            set { boxed.value.retry = newValue }
        }
        /// Request headers, besides Authorization, Cookie and Proxy-Authorization, that
        /// carry secrets (a config's `log.redact`, lower case): like those, they are not
        /// sent on to another origin when a redirect is followed.
        public var secretHeaders: Set<String> {
            get { boxed.value.secretHeaders }
            set { boxed.value.secretHeaders = newValue }
        }
        /// How requests authenticate; basic and bearer become the `Authorization` header.
        public var auth: Authentication? {
            get { boxed.value.auth }
            set { boxed.value.auth = newValue }
        }
        /// Keep the request and header lines the transport sent, as it sent them
        /// (`HTTPResponse.sentHeaderLines`), the ones it adds itself included: what a debug
        /// log shows. A client sets it when its logger asks (`NetworkErrorLogger.wantsSentHeaders`).
        public var recordsSentHeaders: Bool {
            get { boxed.value.recordsSentHeaders }
            set { boxed.value.recordsSentHeaders = newValue }
        }

        /// `netlayer/` and the library's version.
        public static let defaultUserAgent = "netlayer/\(Netlayer.version)"

        /// Whether the boxed options (user agent, proxy, TLS, transport, auth and the rest)
        /// equal `other`'s: at once when both share one box, as a client's requests do.
        package func sameBoxedOptions(as other: RequestOptions) -> Bool {
            boxed.sharesBox(with: other.boxed) || boxed.value == other.boxed.value
        }

        public static func == (lhs: RequestOptions, rhs: RequestOptions) -> Bool {
            lhs.timeout == rhs.timeout && lhs.connectTimeout == rhs.connectTimeout
                && lhs.followRedirects == rhs.followRedirects && lhs.maxRedirects == rhs.maxRedirects
                && lhs.maxResponseBytes == rhs.maxResponseBytes && lhs.maxStreamItemBytes == rhs.maxStreamItemBytes
                && lhs.maxDownloadBytes == rhs.maxDownloadBytes && lhs.compression == rhs.compression
                && lhs.deadline == rhs.deadline && lhs.sameBoxedOptions(as: rhs)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(timeout)
            hasher.combine(maxResponseBytes)
            hasher.combine(deadline)
            hasher.combine(userAgent)
            hasher.combine(tls)
        }

        /// The options that hold strings, sets and arrays (see `CopyOnWrite`).
        private struct Boxed: Sendable, Equatable {
            var acceptableStatus: AcceptableStatus = .successful
            var userAgent: String? = RequestOptions.defaultUserAgent
            var proxy: String?
            var tls = TLSOptions()
            var transport = TransportChoices()
            var retry = RetryPolicy()
            var secretHeaders: Set<String> = []
            var auth: Authentication?
            var recordsSentHeaders = false
        }
    }
}

/// `HTTPRequest.RequestOptions` by the name it is known by.
public typealias RequestOptions = HTTPRequest.RequestOptions
