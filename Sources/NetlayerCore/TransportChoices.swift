import Glibc
import NetlayerJSON

/// How a client reaches servers, beyond the URL: the HTTP version, a Unix domain
/// socket (Docker's API), DNS overrides like curl's `--resolve`, and the local
/// interface or address. The transport does each (libcurl's `CURLOPT_HTTP_VERSION`,
/// `CURLOPT_UNIX_SOCKET_PATH`, `CURLOPT_RESOLVE`, `CURLOPT_INTERFACE`), and checks
/// what only it can know (`NetworkSessionManager.check(_:)`: HTTP/3 needs a libcurl
/// built with it).
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

    /// Throws `invalidRequest` naming the key of a choice that cannot work. libcurl
    /// takes each of them without a word and fails (or ignores it) at the first
    /// transfer, so the limits it has are checked here, when the client is made.
    public func validate() throws(NetworkError) {
        if let path = unixSocket {
            // sockaddr_un.sun_path holds 108 bytes with its NUL.
            if path.utf8.contains(0) {
                throw .invalidRequest("'unixSocket' holds a NUL byte (\\u0000), which no file path can hold")
            }
            guard !path.isEmpty, path.utf8.count < 108 else {
                throw .invalidRequest("'unixSocket' must be a socket path of 1 to 107 bytes, not '\(path.escapedForMessage)'")
            }
        }
        // libcurl applies the list to its DNS cache at the start of every transfer, at a
        // cost that grows with the square of its length, outside any timeout.
        if resolve.count > Self.maxResolveEntries {
            throw .invalidRequest("'resolve' holds \(resolve.count) entries; at most \(Self.maxResolveEntries)")
        }
        for entry in resolve { try Self.validate(resolveEntry: entry) }
        if let name = interface {
            if name.isEmpty || name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
                throw .invalidRequest("'interface' must be an interface name, IP address or host name, not '\(name.escapedForMessage)'")
            }
            // libcurl 7.88 binds to a name only when it is shorter than 255 bytes, and
            // silently leaves a longer one unbound (cf-socket.c, bindlocal).
            if name.utf8.count > Self.maxInterfaceBytes {
                throw .invalidRequest("'interface' must be at most \(Self.maxInterfaceBytes) bytes (libcurl would not bind to a longer name), not \(name.utf8.count)")
            }
        }
    }

    /// The most `resolve` entries a config may give (curl users give a few).
    static let maxResolveEntries = 1000

    /// The longest `interface` libcurl applies.
    static let maxInterfaceBytes = 254

    /// `[+]HOST:PORT:ADDRESS[,ADDRESS...]` as libcurl 7.88 reads it (hostip.c,
    /// Curl_loadhostpairs): a host of at most 255 bytes, a port, and addresses that are
    /// each an IPv4 or IPv6 literal, an IPv6 one possibly in brackets. libcurl refuses
    /// anything else only when a transfer starts, as a `generic` failure.
    private static func validate(resolveEntry entry: String) throws(NetworkError) {
        let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        // A leading "-" would make the entry remove a cached address instead (libcurl's
        // own syntax), which a config has no use for: it is not a host.
        let host = parts.first.map { $0.hasPrefix("+") ? $0.dropFirst() : $0 } ?? ""
        if host.hasPrefix("-") {
            throw .invalidRequest("'resolve' entry '\(entry.escapedForMessage)' starts with '-', which libcurl reads as removing an entry; a host name cannot start with it")
        }
        guard parts.count == 3, !host.isEmpty, host.utf8.count <= 255, let port = Int(parts[1]), (1...65535).contains(port),
              !parts[2].isEmpty, !entry.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F })
        else {
            throw .invalidRequest("'resolve' entry '\(entry.escapedForMessage)' is not HOST:PORT:ADDRESS[,ADDRESS...]")
        }
        for address in parts[2].split(separator: ",", omittingEmptySubsequences: false) where !isIPLiteral(address) {
            throw .invalidRequest("'resolve' entry '\(entry.escapedForMessage)': '\(address)' is not an IPv4 or IPv6 address (an IPv6 address may be in brackets); the entry answers name resolution, so it gives addresses, not names")
        }
    }

    /// Whether `text` is an IPv4 or IPv6 address as `inet_pton` reads it (libcurl's own
    /// test of a resolve address), an IPv6 one also in brackets.
    private static func isIPLiteral(_ text: Substring) -> Bool {
        var bare = text
        if bare.hasPrefix("[") {
            guard bare.hasSuffix("]"), bare.count > 2 else { return false }
            bare = bare.dropFirst().dropLast()
        }
        var storage = in6_addr()
        return withUnsafeMutableBytes(of: &storage) { buffer in
            String(bare).withCString { text in
                inet_pton(AF_INET, text, buffer.baseAddress) == 1 || inet_pton(AF_INET6, text, buffer.baseAddress) == 1
            }
        }
    }
}
