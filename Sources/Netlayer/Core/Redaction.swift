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

    /// Every `scheme://user:password@` in `text` becomes `scheme://<redacted>@`.
    public static func userInfo(in text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let range = rest.firstRange(of: "://") {
            out += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?# '\"\n".contains($0) }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                out += marker
                rest = rest[at...]
            }
        }
        return out + rest
    }

    /// The secret values a request carries: values of the redacted headers (and the
    /// credential after an auth scheme, and each cookie's value) and URL user-info.
    /// Logged bodies are scrubbed of them, since servers echo them back.
    public static func secrets(of request: HTTPRequest, redacting names: Set<String>) -> [String] {
        var found: [String] = []
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

    /// `text` with every occurrence of a secret replaced by the marker.
    public static func scrub(_ text: String, of secrets: [String]) -> String {
        var out = text
        for secret in secrets where out.contains(secret) {
            out = out.split(separator: secret, omittingEmptySubsequences: false).joined(separator: marker)
        }
        return out
    }
}
