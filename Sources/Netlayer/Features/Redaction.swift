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
}
