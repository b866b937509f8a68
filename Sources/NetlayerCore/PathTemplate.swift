import NetlayerJSON

/// Fills `{placeholders}` in an endpoint path (the seeds' Router): each value is
/// percent-encoded as one path segment, so a parameter can never add a segment,
/// a query or another host.
package enum PathTemplate {
    /// - Throws: `invalidRequest` for a placeholder without a value, a parameter no
    ///   placeholder uses (usually a typo), a value that is not a scalar, or one that
    ///   is empty, "." or "..", which would change the route (`users/{id}/posts` with
    ///   ".." is `posts`).
    package static func render(_ template: String, params: JSONObject) throws(NetworkError) -> String {
        var out = ""
        var used = Set<String>()
        var rest = Substring(template)
        while case let (literal, name, after)? = try nextPlaceholder(in: rest, of: template) {
            out += literal
            guard let value = params[name], !value.isNull else {
                throw .invalidRequest("path placeholder '{\(name)}' has no value in params")
            }
            let text: String
            switch value {
            case .string(let s): text = s
            case .int(let i): text = String(i)
            case .bool(let b): text = b ? "true" : "false"
            case .double: text = String(decoding: JSONWriter.serialize(value), as: UTF8.self)
            case .number(let literal): text = literal
            default: throw .invalidRequest("params '\(name)' must be a string, number or boolean, not \(value.typeName)")
            }
            if text.isEmpty || text == "." || text == ".." {
                throw .invalidRequest("params '\(name)': '\(text)' is not allowed, since an empty, '.' or '..' path segment changes the route")
            }
            out += HTTPRequest.PercentEncoding.escaped(text, .component)
            used.insert(name)
            rest = after
        }
        out += rest
        if let unused = params.keys.first(where: { !used.contains($0) }) {
            throw .invalidRequest("params '\(unused)' matches no placeholder in path '\(template)'")
        }
        return out
    }

    /// Throws `invalidRequest` for a template no parameters can fill (an unclosed
    /// `{`): checked when a named endpoint is read, before any call.
    package static func checkSyntax(_ template: String) throws(NetworkError) {
        var rest = Substring(template)
        while case let (_, _, after)? = try nextPlaceholder(in: rest, of: template) { rest = after }
    }

    /// The text before the next `{name}` of `rest`, the name, and what follows it; nil
    /// when no placeholder is left.
    private static func nextPlaceholder(in rest: Substring, of template: String)
        throws(NetworkError) -> (literal: Substring, name: String, after: Substring)? {
        guard let open = rest.firstIndex(of: "{") else { return nil }
        guard let close = rest[open...].firstIndex(of: "}") else {
            throw .invalidRequest("path '\(template)' has an unclosed '{'")
        }
        return (rest[..<open], String(rest[rest.index(after: open)..<close]), rest[rest.index(after: close)...])
    }
}
