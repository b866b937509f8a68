import FoundationEssentials

/// How requests prove who sends them: a config's default, or an endpoint's own.
///
/// Basic and bearer become an `Authorization` header when the request is built, so
/// they get every rule that header has: redacted in logs, dropped on a redirect to
/// another origin, part of the response cache's credentials. Digest needs the
/// server's challenge and `.netrc` the target host, so libcurl does those
/// (`CURLOPT_HTTPAUTH`, `CURLOPT_NETRC`); their secrets never reach a log either.
public enum Authentication: Sendable, Hashable {
    /// RFC 7617; `user` cannot hold a colon.
    case basic(user: String, password: String)
    /// RFC 6750: `Authorization: Bearer <token>`.
    case bearer(token: String)
    /// RFC 7616, answered to the server's challenge by libcurl.
    case digest(user: String, password: String)
    /// Credentials for the target host from a `.netrc` file (`file`, or `~/.netrc`),
    /// found by libcurl; a host the file does not list is sent none.
    case netrc(file: String?)

    /// The `Authorization` value of basic and bearer; nil for the kinds libcurl answers.
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

    /// Throws `invalidRequest` naming `key` for what cannot be sent.
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
        }
    }

    /// What a response cache must tell apart: two requests with different
    /// identities never share a stored response.
    var cacheIdentity: String {
        switch self {
        case .basic, .bearer: return ""  // in the Authorization header already
        case .digest(let user, let password): return "digest \(user):\(password)"
        case .netrc(let file): return "netrc \(file ?? "~")"
        }
    }
}
