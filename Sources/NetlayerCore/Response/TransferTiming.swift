import NetlayerJSON

extension HTTPResponse {
    /// Where the time of a response went, from libcurl's own measurements
    /// (`CURLINFO_*_TIME_T`), in milliseconds from the start of the transfer that
    /// answered: each mark is when that phase ended, so `dnsMs ≤ connectMs ≤ tlsMs ≤
    /// firstByteMs ≤ HTTPResponse.totalMs`. A phase a reused connection skipped ends at 0.
    public struct TransferTiming: Sendable, Hashable {
        /// Name resolution done.
        public var dnsMs: Double = 0
        /// TCP connected (or the proxy).
        public var connectMs: Double = 0
        /// TLS handshake done; 0 for plain HTTP.
        public var tlsMs: Double = 0
        /// The first byte of the response arrived.
        public var firstByteMs: Double = 0
        /// Spent on the redirects followed before this response (included in `totalMs`).
        public var redirectMs: Double = 0

        public init() {}
    }
}

/// `HTTPResponse.TransferTiming` by the name it is known by.
public typealias TransferTiming = HTTPResponse.TransferTiming
