/// Keeps secrets out of logs and error messages: values of sensitive headers and
/// the user-info of URLs become "<redacted>".
public enum Redaction {
    public static let marker = "<redacted>"
    /// Headers redacted unless the caller names its own list.
    public static let defaultHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// `headers` as a JSON object with the values of `names` (lower case) redacted.
    public static func headers(_ headers: HTTPHeaders, redacting names: Set<String>) -> JSONObject {
        var object = JSONObject()
        for field in headers {
            let redacted = names.contains(field.name.lowercased())
            object[field.name] = .string(redacted ? marker : field.value)
        }
        return object
    }

    /// Query parameters whose values are secrets by their well-known names (lower
    /// case; compared without "-" and "_", so `api-key` and `API_KEY` are `apikey`).
    public static let defaultQueryNames: Set<String> = [
        "apikey", "key", "token", "accesstoken", "refreshtoken", "idtoken", "authtoken", "auth", "password",
        "passwd", "pwd", "secret", "clientsecret", "signature", "sig", "xapikey", "sessionid", "session",
    ]

    /// `text` (a URL, or a message or command line that holds URLs) with URL user-info
    /// and the values of secret query parameters (`defaultQueryNames` and `names`)
    /// replaced by `replacement`.
    public static func url(in text: String, queryNames names: Set<String> = [], replacement: String = marker) -> String {
        query(in: userInfo(in: text, replacement: replacement), names: names, replacement: replacement)
    }

    /// The values of secret query parameters in `text` replaced by `replacement`: a
    /// `name=value` right after "?" or "&", the value ending at "&", "#", a space, a
    /// quote or the end of a line.
    static func query(in text: String, names: Set<String>, replacement: String = marker) -> String {
        guard text.contains("=") else { return text }
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            out.append(b)
            i += 1
            guard b == UInt8(ascii: "?") || b == UInt8(ascii: "&") else { continue }
            guard let eq = bytes[i...].firstIndex(where: { isEnd($0) || $0 == UInt8(ascii: "=") }),
                  bytes[eq] == UInt8(ascii: "=") else { continue }
            let name = normalized(bytes[i..<eq])
            guard defaultQueryNames.contains(name) || names.contains(name) else { continue }
            out.append(contentsOf: bytes[i...eq])
            out.append(contentsOf: replacement.utf8)
            i = bytes[(eq + 1)...].firstIndex(where: { isEnd($0) || $0 == UInt8(ascii: "&") }) ?? bytes.count
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A query name as `defaultQueryNames` holds them: lower case, no "-" or "_",
    /// percent-encoded "-" and "_" included.
    public static func normalized<S: Sequence>(_ name: S) -> String where S.Element == UInt8 {
        let text = String(decoding: Array(name), as: UTF8.self).lowercased()
            .replacingAll("%2d", with: "").replacingAll("%5f", with: "")
        return String(text.unicodeScalars.filter { $0 != "-" && $0 != "_" })
    }

    private static func isEnd(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "#") || b == UInt8(ascii: " ") || b == UInt8(ascii: "'") || b == UInt8(ascii: "\"")
            || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\t")
    }

    /// Every `scheme://user:password@` in `text` becomes `scheme://<redacted>@` (or
    /// `replacement` in place of the marker).
    public static func userInfo(in text: String, replacement: String = marker) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let range = rest.firstRange(of: "://") {
            out += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?# '\"\n".contains($0) }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                out += replacement
                rest = rest[at...]
            }
        }
        return out + rest
    }

    /// The secret values a request carries: values of the redacted headers (and the
    /// credential after an auth scheme, and each cookie's value) and URL user-info.
    /// Logged bodies are scrubbed of them, since servers echo them back.
    public static func secrets(of request: HTTPRequest, redacting names: Set<String>,
                               queryNames: Set<String> = []) -> [String] {
        var found: [String] = []
        if let question = request.url.firstIndex(of: "?") {
            let query = request.url[request.url.index(after: question)...].prefix { $0 != "#" }
            for pair in query.split(separator: "&") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                let name = normalized(pair[..<eq].utf8)
                guard defaultQueryNames.contains(name) || queryNames.contains(name) else { continue }
                let value = pair[pair.index(after: eq)...]
                found.append(String(value))
                if let decoded = String(value).removingPercentEncodingUTF8 { found.append(decoded) }
            }
        }
        for field in request.headers where names.contains(field.name.lowercased()) {
            found.append(field.value)
            if let space = field.value.firstIndex(of: " ") {
                found.append(String(field.value[field.value.index(after: space)...]))
            }
            for cookie in field.value.split(separator: ";") {
                if let eq = cookie.firstIndex(of: "=") { found.append(String(cookie[cookie.index(after: eq)...])) }
            }
        }
        if let scheme = request.url.firstRange(of: "://") {
            let rest = request.url[scheme.upperBound...]
            let end = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
            if let at = rest[..<end].lastIndex(of: "@") {
                let info = rest[..<at]
                found.append(String(info))
                if let colon = info.firstIndex(of: ":") { found.append(String(info[info.index(after: colon)...])) }
            }
        }
        // Short values would blank out ordinary words.
        return found.map { $0.trimmingSpaces }.filter { $0.count >= 6 }.sorted { $0.count > $1.count }
    }

    /// `text` with every occurrence of a secret replaced by `replacement`.
    public static func scrub(_ text: String, of secrets: [String], replacement: String = marker) -> String {
        var out = text
        for secret in secrets where out.contains(secret) {
            out = out.split(separator: secret, omittingEmptySubsequences: false).joined(separator: replacement)
        }
        return out
    }
}

private extension String {
    /// The text with %XX escapes decoded, or nil when an escape is malformed.
    var removingPercentEncodingUTF8: String? {
        var bytes: [UInt8] = []
        var iterator = Array(utf8).makeIterator()
        while let b = iterator.next() {
            guard b == UInt8(ascii: "%") else { bytes.append(b); continue }
            guard let h = iterator.next(), let l = iterator.next(),
                  let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(v)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func replacingAll(_ target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
