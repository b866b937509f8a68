import CCurl

/// How a client reaches servers, beyond the URL: the HTTP version, a Unix domain
/// socket (Docker's API), DNS overrides like curl's `--resolve`, and the local
/// interface or address. libcurl does each (`CURLOPT_HTTP_VERSION`,
/// `CURLOPT_UNIX_SOCKET_PATH`, `CURLOPT_RESOLVE`, `CURLOPT_INTERFACE`).
public struct TransportChoices: Sendable, Hashable {
    public enum HTTPVersion: String, Sendable, CaseIterable {
        /// HTTP/1.1 only.
        case http1_1 = "1.1"
        /// HTTP/2 where the server agrees: ALPN over https, an Upgrade over http.
        case http2 = "2"
        /// HTTP/2 from the first byte, without asking (h2c to servers known to speak it).
        case http2PriorKnowledge = "2-prior-knowledge"
        /// HTTP/3 over QUIC, when this libcurl was built with it.
        case http3 = "3"
    }

    /// nil: libcurl's default (HTTP/2 over https where offered, else HTTP/1.1).
    public var httpVersion: HTTPVersion?
    /// Every connection goes to this Unix domain socket; the URL still names the host.
    public var unixSocket: String?
    /// `HOST:PORT:ADDRESS[,ADDRESS...]` entries that answer DNS for that host and port.
    public var resolve: [String] = []
    /// The local interface name, IP address or host name connections leave from.
    public var interface: String?

    public init() {}

    /// Whether libcurl was built with HTTP/3.
    public static var hasHTTP3: Bool {
        guard let info = nl_version_info() else { return false }
        return info.pointee.features & (1 << 22) != 0  // CURL_VERSION_HTTP3, a macro Swift cannot import
    }

    /// Throws `invalidRequest` naming the key of a choice that cannot work.
    public func validate() throws(NetworkError) {
        if httpVersion == .http3, !Self.hasHTTP3 {
            let version = nl_version_info().map { String(cString: $0.pointee.version) } ?? "?"
            throw .invalidRequest("httpVersion '3' needs a libcurl built with HTTP/3, and this one (\(version)) is not")
        }
        if let path = unixSocket {
            // sockaddr_un.sun_path holds 108 bytes with its NUL.
            guard !path.isEmpty, path.utf8.count < 108, !path.utf8.contains(0) else {
                throw .invalidRequest("unixSocket must be a socket path of 1 to 107 bytes, not '\(path.escapedForMessage)'")
            }
        }
        for entry in resolve {
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, let port = Int(parts[1]), (1...65535).contains(port),
                  !parts[2].isEmpty, !entry.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F })
            else {
                throw .invalidRequest("resolve entry '\(entry.escapedForMessage)' is not HOST:PORT:ADDRESS[,ADDRESS...]")
            }
        }
        if let name = interface, name.isEmpty || name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw .invalidRequest("interface must be an interface name, IP address or host name, not '\(name.escapedForMessage)'")
        }
    }
}
