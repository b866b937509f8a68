import NetlayerJSON

/// A parsed `baseURL` (or a full URL a path gives): checked once by the client's URL
/// parser, then reused for every request, so joining a path never re-parses (and never
/// changes) the host.
package struct BaseURL: Sendable, Hashable {
    /// "scheme://authority", exactly as the parser wrote it back.
    package let origin: String
    /// The base path, without a trailing slash ("" for the root).
    package let path: String
    /// The base URL's own query, kept ahead of configured parameters.
    package let query: String?
    /// `origin`, `path` and the "/" a relative path goes after, as bytes: what every
    /// request URL under this base starts with.
    package let relativePrefix: [UInt8]

    /// Parses an absolute http(s) URL with `parser`.
    /// - Throws: `urlGeneration` when it is not one.
    package init(_ text: String, role: String = "baseURL", parser: any URLParsing) throws(NetworkError) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw .invalidRequest("\(role) contains a control character")
        }
        guard let parsed = parser.parse(text) else {
            let reason = parser.reason(refusing: text).map { " (\($0))" } ?? ""
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' is not a valid absolute URL\(reason)")
        }
        guard parsed.scheme == "http" || parsed.scheme == "https" else {
            throw .urlGeneration("\(role) scheme '\(parsed.scheme)' is not http or https")
        }
        guard !parsed.host.isEmpty else {
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' has no host")
        }
        var authority = parsed.host
        if let user = parsed.user {
            authority = "\(user)\(parsed.password.map { ":" + $0 } ?? "")@\(parsed.host)"
        }
        if let port = parsed.port { authority += ":" + port }
        origin = "\(parsed.scheme)://\(authority)"
        var basePath = parsed.path
        while basePath.hasSuffix("/") { basePath.removeLast() }
        path = basePath
        query = parsed.query.flatMap { $0.isEmpty ? nil : $0 }
        relativePrefix = Array(origin.utf8) + Array(basePath.utf8) + [UInt8(ascii: "/")]
    }
}
