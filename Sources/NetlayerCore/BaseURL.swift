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
        // A backslash before the query is a "/" to WHATWG parsers (browsers, Node) and a
        // plain byte to libcurl: "http://a\\@b/" would go to a host other than the one
        // an allow-list that uses such a parser approved.
        if text.utf8.prefix(while: { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }).contains(UInt8(ascii: "\\")) {
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' contains a backslash, which URL parsers disagree on")
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
        if parsed.host.utf8.contains(where: { $0 >= 0x80 }) {
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' has a host name that is not ASCII: write it as IDNA gives it (bücher.example is xn--bcher-kva.example)")
        }
        if let port = parsed.port, Int(port) == 0 {
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' has port 0, which no server listens on")
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
