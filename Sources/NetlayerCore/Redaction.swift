import Glibc
import NetlayerJSON

/// Keeps secrets out of logs and error messages: values of sensitive headers and
/// the user-info of URLs become "<redacted>".
public enum Redaction {
    public static let marker = "<redacted>"
    /// Headers redacted unless the caller names its own list.
    public static let defaultHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// `headers` as a JSON object with the values of `names` (lower case) redacted.
    public static func headers(_ headers: HTTPHeaders, redacting names: Set<String>,
                               queryNames: Set<String> = []) -> JSONObject {
        var object = JSONObject()
        for field in headers {
            let redacted = names.contains(field.name.lowercased())
            // A value may hold a URL (Location, Content-Location, Link): its user-info and
            // secret query values go as in the request's URL.
            object[field.name] = .string(redacted ? marker : url(in: field.value, queryNames: queryNames))
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
        guard mayHoldSecrets(text, queryNames: names) else { return text }
        return query(in: userInfo(in: text, replacement: replacement), names: names, replacement: replacement)
    }

    /// Whether `url(in:)` may change `text`: it holds a "@", or a query parameter
    /// (after "?" or "&") whose name is a secret one, or one this cannot tell without
    /// the full rules (percent-encoded or non-ASCII). Reads the bytes in place and makes
    /// no string unless `names` has names of its own: every result document's URL and
    /// every logged one comes here, and most hold no secret.
    package static func mayHoldSecrets(_ text: String, queryNames names: Set<String>) -> Bool {
        var text = text
        return text.withUTF8 { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            if memchr(base, Int32(UInt8(ascii: "@")), bytes.count) != nil { return true }
            guard let start = memchr(base, Int32(UInt8(ascii: "?")), bytes.count)
                    ?? memchr(base, Int32(UInt8(ascii: "#")), bytes.count) else { return false }
            var i = UnsafeRawPointer(start) - UnsafeRawPointer(base)
            while i < bytes.count {
                let b = bytes[i]
                i += 1
                guard b == UInt8(ascii: "?") || b == UInt8(ascii: "&") || b == UInt8(ascii: "#") else { continue }
                var end = i
                while end < bytes.count, !isEnd(bytes[end]), bytes[end] != UInt8(ascii: "=") { end += 1 }
                guard end < bytes.count, bytes[end] == UInt8(ascii: "=") else { continue }
                if isSecretName(UnsafeBufferPointer(rebasing: bytes[i..<end]), names: names) { return true }
            }
            return false
        }
    }

    /// Whether a query name is secret, compared as `normalized(_:)` compares it: ASCII
    /// case ignored, "-" and "_" left out.
    private static func isSecretName(_ name: UnsafeBufferPointer<UInt8>, names: Set<String>) -> Bool {
        var length = 0
        var first: UInt8 = 0
        for b in name {
            if b >= 0x80 || b == UInt8(ascii: "%") { return true }  // the full rules decide
            if b != UInt8(ascii: "-"), b != UInt8(ascii: "_") {
                if length == 0 { first = HTTPResponse.MIMEScan.lowercased(b) }
                length += 1
            }
        }
        if !names.isEmpty, names.contains(normalized(name)) { return true }
        // Most names ("page", "id") share no first letter and length with a secret one.
        guard first &- UInt8(ascii: "a") < 26, length < 32,
              defaultQueryNameShapes[Int(first &- UInt8(ascii: "a"))] & (1 << UInt32(length)) != 0
        else { return false }
        for secret in defaultQueryNameBytes where secret.count == length {
            var i = 0
            var same = true
            for b in name where b != UInt8(ascii: "-") && b != UInt8(ascii: "_") {
                if HTTPResponse.MIMEScan.lowercased(b) != secret[i] { same = false; break }
                i += 1
            }
            if same { return true }
        }
        return false
    }

    private static let defaultQueryNameBytes: [[UInt8]] = defaultQueryNames.map { Array($0.utf8) }

    /// Per first letter (a to z), a bit per length of the `defaultQueryNames` starting
    /// with it: the cheap test before any comparison.
    private static let defaultQueryNameShapes: [UInt32] = {
        var shapes = [UInt32](repeating: 0, count: 26)
        for name in defaultQueryNameBytes where name.count < 32 { shapes[Int(name[0] - UInt8(ascii: "a"))] |= 1 << UInt32(name.count) }
        return shapes
    }()

    /// The values of secret query parameters in `text` replaced by `replacement`: a
    /// `name=value` right after "?", "&" or "#" (a fragment's parameters, where OAuth's
    /// implicit flow puts `access_token`), the value ending at "&", "#", a space, a
    /// quote or the end of a line.
    static func query(in text: String, names: Set<String>, replacement: String = marker) -> String {
        // Bytes, not Characters: every result document's URL comes through here.
        guard text.utf8.contains(UInt8(ascii: "=")) else { return text }
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            out.append(b)
            i += 1
            guard b == UInt8(ascii: "?") || b == UInt8(ascii: "&") || b == UInt8(ascii: "#") else { continue }
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
        // Percent-decoded first: `creds%5Bkey%5D` in a URL is the name `creds[key]`.
        var bytes = Array(name)
        if bytes.contains(UInt8(ascii: "%")) { bytes = HTTPRequest.PercentEncoding.decoded(bytes, plusIsSpace: false) }
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        return String(text.unicodeScalars.filter { $0 != "-" && $0 != "_" })
    }

    private static func isEnd(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "#") || b == UInt8(ascii: " ") || b == UInt8(ascii: "'") || b == UInt8(ascii: "\"")
            || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\t")
    }

    /// Every `scheme://user:password@` in `text` becomes `scheme://<redacted>@` (or
    /// `replacement` in place of the marker).
    public static func userInfo(in text: String, replacement: String = marker) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")), text.contains("://") else { return text }
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

    /// The secret values a request carries (`RequestCredentials.secretValues`), for
    /// scrubbing what a server echoes: its credential headers, digest password and URL
    /// secrets; with `cookies`, the jar's cookies for it too. `names` are lower-case
    /// header names redacted besides the request's credential headers (a log's list).
    public static func secrets(of request: HTTPRequest, redacting names: Set<String>,
                               queryNames: Set<String> = [], cookies: (any CookieSource)? = nil) -> [String] {
        var credentials = RequestCredentials(of: request, cookies: cookies)
        for field in request.headers where names.contains(field.name.lowercased())
            && !RequestCredentials.isCredentialHeader(field.name, of: request.options) {
            credentials.headers.append(HTTPHeaders.Field(name: field.name.lowercased(), value: field.value))
        }
        return credentials.secretValues(url: request.url, queryNames: queryNames)
    }

    /// The secrets a URL holds: its user-info (whole, and the password), and the values
    /// of secret query parameters (`defaultQueryNames` and `names`), as written and
    /// percent-decoded.
    static func urlSecrets(in url: String, queryNames: Set<String>) -> [String] {
        var found: [String] = []
        if let question = url.firstIndex(of: "?") {
            let query = url[url.index(after: question)...].prefix { $0 != "#" }
            for pair in query.split(separator: "&") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                let name = normalized(pair[..<eq].utf8)
                guard defaultQueryNames.contains(name) || queryNames.contains(name) else { continue }
                let value = pair[pair.index(after: eq)...]
                found.append(String(value))
                found.append(String(decoding: HTTPRequest.PercentEncoding.decoded(value.utf8, plusIsSpace: false), as: UTF8.self))
            }
        }
        if let scheme = url.firstRange(of: "://") {
            let rest = url[scheme.upperBound...]
            let end = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
            if let at = rest[..<end].lastIndex(of: "@") {
                let info = rest[..<at]
                found.append(String(info))
                if let colon = info.firstIndex(of: ":") {
                    found.append(String(info[info.index(after: colon)...]))
                    // libcurl sends user-info as Basic authentication, which a server may
                    // echo: the decoded password, and the header value it made.
                    let user = String(decoding: HTTPRequest.PercentEncoding.decoded(Array(info[..<colon].utf8), plusIsSpace: false), as: UTF8.self)
                    let password = String(decoding: HTTPRequest.PercentEncoding.decoded(Array(info[info.index(after: colon)...].utf8),
                                                                            plusIsSpace: false), as: UTF8.self)
                    found.append(password)
                    found.append("\(user):\(password)")
                    if let header = Authentication.basic(user: user, password: password).headerValue {
                        found.append(header)
                        found.append(String(header.dropFirst("Basic ".count)))
                    }
                }
            }
        }
        return found
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
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
