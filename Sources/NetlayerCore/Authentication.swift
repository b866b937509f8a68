import FoundationEssentials
import NetlayerJSON

/// How requests prove who sends them: a config's default, or an endpoint's own.
///
/// Basic, bearer and `.netrc` become an `Authorization` header when the request is
/// built (`.netrc` with the file's entry for the request's host, read by `Netrc`), so
/// they get every rule that header has: redacted in logs and cassettes, dropped on a
/// redirect to another scheme, host or port, part of the response cache's key. Digest
/// needs the server's challenge, so libcurl answers it (`CURLOPT_HTTPAUTH`); its user
/// and password are part of the cache's key, and the answer it sends is redacted
/// wherever a server echoes it (`RequestCredentials`).
public enum Authentication: Sendable, Hashable {
    /// RFC 7617; `user` cannot hold a colon.
    case basic(user: String, password: String)
    /// RFC 6750: `Authorization: Bearer <token>`.
    case bearer(token: String)
    /// RFC 7616, answered to the server's challenge by libcurl.
    case digest(user: String, password: String)
    /// Credentials for the request's host from a `.netrc` file (`file`, or `~/.netrc`),
    /// sent as basic authentication; a host the file does not list is sent none.
    case netrc(file: String?)

    /// The `Authorization` value of basic and bearer; nil for digest, which libcurl
    /// answers, and for `.netrc`, whose value depends on the host (`authorization(for:)`).
    public var headerValue: String? {
        switch self {
        case .basic(let user, let password):
            return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case .bearer(let token):
            return "Bearer " + token
        case .digest, .netrc:
            return nil
        }
    }

    /// The `Authorization` value a request to `url` carries: `headerValue`, or for
    /// `.netrc` the file's entry for the URL's host as basic authentication (none when
    /// the file lists neither the host nor a default, or the URL carries its own user).
    public func authorization(for url: String, parser: any URLParsing, key: String = "auth") throws(NetworkError) -> String? {
        guard case .netrc(let file) = self else { return headerValue }
        guard let parsed = parser.parse(url), parsed.user == nil else { return nil }
        let host = parsed.bareHost
        let netrc = try Netrc.load(Netrc.path(file), key: key)
        guard let entry = netrc.credentials(forHost: host) else { return nil }
        if entry.login.utf8.contains(UInt8(ascii: ":")) || (entry.login + entry.password).utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw .invalidRequest("\(key): the netrc entry for '\(host.escapedForMessage)' has a login with ':' or a control character, which basic authentication cannot carry")
        }
        return Authentication.basic(user: entry.login, password: entry.password).headerValue
    }

    /// Throws `invalidRequest` naming `key` for what cannot be sent; a `.netrc` file
    /// that is missing, not a regular file, too large or unreadable included.
    public func validate(key: String = "auth") throws(NetworkError) {
        switch self {
        case .basic(let user, let password), .digest(let user, let password):
            if user.utf8.contains(UInt8(ascii: ":")) {
                throw .invalidRequest("\(key): a user name cannot hold ':' (RFC 7617)")
            }
            if (user + password).utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw .invalidRequest("\(key): user and password cannot hold control characters")
            }
        case .bearer(let token):
            if token.isEmpty || token.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
                throw .invalidRequest("\(key): a bearer token is printable ASCII without spaces (RFC 6750 token68)")
            }
        case .netrc(let file):
            if let file, file.isEmpty { throw .invalidRequest("\(key): netrc needs a file path, or true for ~/.netrc") }
            _ = try Netrc.load(Netrc.path(file), key: key)
        }
    }

    /// What a response cache must tell apart: two requests with different
    /// identities never share a stored response.
    var cacheIdentity: String {
        switch self {
        case .basic, .bearer: return ""  // in the Authorization header already
        case .digest(let user, let password): return "digest \(user):\(password)"
        case .netrc: return ""  // in the Authorization header already
        }
    }
}
