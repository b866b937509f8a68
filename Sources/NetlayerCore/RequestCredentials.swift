import FoundationEssentials
import NetlayerJSON

/// Everything a request carries that says who sends it, in one list: the response
/// cache keys on it, a redirect to another origin strips it, and logs and cassettes
/// redact it.
///
/// - Credential headers, whoever set them (config, endpoint, `auth`, `.netrc`, a hook,
///   OpenAPI apiKey credentials): `Authorization`, `Proxy-Authorization`, `Cookie` and
///   the client's secret headers (`RequestOptions.secretHeaders`). They go only to the
///   scheme, host and port they were set for.
/// - Digest credentials, which libcurl proves to the server (and drops with the
///   headers on a redirect to another origin).
/// - The jar's cookies for the request's host, which libcurl adds to the request: they
///   go where RFC 6265 sends them (domain, path, Secure; a cookie is not bound to a
///   port, section 8.5), on a redirect as on any request, like in browsers, curl and
///   requests. They are part of the cache key and redacted like the others.
/// - URL user-info and secret query parameters, which are part of the URL.
public struct RequestCredentials: Sendable, Equatable {
    /// Headers that always carry credentials (lower case).
    public static let alwaysSecretHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// The request's credential header fields, names in lower case, in request order.
    public var headers: [HTTPHeaders.Field]
    /// "user:password" of digest authentication.
    public var digest: String?
    /// The jar's cookies that libcurl may add to the request (`CookieSource`).
    public var jarCookies: [StoredCookie]

    /// The credentials of `request`; the jar's cookies when `cookies` is given.
    public init(of request: HTTPRequest, cookies: (any CookieSource)? = nil) {
        var found: [HTTPHeaders.Field] = []
        for field in request.headers where Self.isCredentialHeader(field.name, of: request.options) {
            found.append(HTTPHeaders.Field(name: field.name.lowercased(), value: field.value))
        }
        headers = found
        if case .digest(let user, let password)? = request.options.auth { digest = "\(user):\(password)" }
        jarCookies = cookies?.cookies(for: request.url) ?? []
    }

    /// Whether the header `name` carries credentials under `options`.
    public static func isCredentialHeader(_ name: String, of options: RequestOptions) -> Bool {
        let lower = name.lowercased()
        return alwaysSecretHeaders.contains(lower) || options.secretHeaders.contains(lower)
    }

    /// `request` without the credentials it carries for its own origin: what a
    /// redirect hop to another scheme, host or port sends.
    public static func strippingCredentials(from request: HTTPRequest) -> HTTPRequest {
        var next = request
        for field in request.headers where isCredentialHeader(field.name, of: request.options) {
            next.headers[field.name] = nil
        }
        next.options.auth = nil  // digest: libcurl would answer the new origin's challenge
        return next
    }

    /// What a stored response must match exactly to answer a request: its credential
    /// headers, digest identity and the jar's cookies (URL user-info and query are in
    /// the URL, the cache's key already).
    public var cacheKey: [String: String] {
        var key: [String: String] = [:]
        for field in headers { key[field.name] = field.value }
        if let digest { key[" digest"] = digest }
        if !jarCookies.isEmpty {
            key[" jar"] = jarCookies.map { "\($0.domain)\t\($0.path)\t\($0.name)=\($0.value)" }.sorted()
                .joined(separator: "\n")
        }
        return key
    }

    /// The secret values among these credentials and in `url` (user-info, the values of
    /// secret query parameters: `Redaction.defaultQueryNames` and `queryNames`), as a
    /// server might echo them: each header value, the credential after its scheme, a
    /// basic credential decoded, each cookie's value, the digest password, each jar
    /// cookie's value. Longest first; values under six characters are left out (they
    /// would blank out ordinary words).
    public func secretValues(url: String, queryNames: Set<String> = []) -> [String] {
        var found: [String] = []
        for field in headers {
            found.append(field.value)
            if let space = field.value.firstIndex(of: " ") {
                let credential = String(field.value[field.value.index(after: space)...])
                found.append(credential)
                if field.value.lowercased().hasPrefix("basic "), let decoded = Self.decodedBasic(credential) {
                    found.append(decoded)
                    if let colon = decoded.firstIndex(of: ":") { found.append(String(decoded[decoded.index(after: colon)...])) }
                }
                if field.value.lowercased().hasPrefix("digest ") { found += Self.digestSecrets(field.value) }
            }
            for cookie in field.value.split(separator: ";") {
                if let eq = cookie.firstIndex(of: "=") { found.append(String(cookie[cookie.index(after: eq)...])) }
            }
        }
        if let digest {
            found.append(digest)
            if let colon = digest.firstIndex(of: ":") { found.append(String(digest[digest.index(after: colon)...])) }
        }
        for cookie in jarCookies { found.append(cookie.value) }
        found += Redaction.urlSecrets(in: url, queryNames: queryNames)
        return Self.usable(found)
    }

    /// The secrets in what a transport added to a request as it sent it (the header
    /// values of `HTTPResponse.sentCredentials`: a digest answer, the jar's `Cookie`
    /// line) and in the cookies a response sets: what a server may echo back.
    public static func secretValues(of response: HTTPResponse) -> [String] {
        var found: [String] = []
        for value in response.sentCredentials {
            found.append(value)
            if value.lowercased().hasPrefix("digest ") { found += digestSecrets(value) }
            for cookie in value.split(separator: ";") {
                if let eq = cookie.firstIndex(of: "=") { found.append(String(cookie[cookie.index(after: eq)...])) }
            }
        }
        for line in response.headers.values(named: "set-cookie") {
            let pair = line.prefix { $0 != ";" }
            if let eq = pair.firstIndex(of: "=") { found.append(String(pair[pair.index(after: eq)...])) }
        }
        return usable(found)
    }

    /// Trimmed, long enough to scrub without blanking ordinary words, longest first
    /// (a secret that holds another is replaced whole), each once.
    /// A value is also kept as JSON writers escape it inside a string, since a server
    /// echoing it in a JSON body writes it so: `"` and `\\` escaped (every writer),
    /// non-ASCII as `\u00e4` (Python's `json.dumps`, PHP; .NET as `\u00E4`), `&`, `<`
    /// and `>` as `\u0026`… (Go, .NET), `/` as `\/` (PHP).
    package static func usable(_ values: [String]) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for value in values {
            let trimmed = value.trimmingCharacters(in: " \t\"")
            guard trimmed.count >= 6, seen.insert(trimmed).inserted else { continue }
            out.append(trimmed)
            for spelling in jsonSpellings(of: trimmed) where seen.insert(spelling).inserted {
                out.append(spelling)
            }
        }
        return out.sorted { $0.count > $1.count }
    }

    /// How JSON writers spell `value` inside a string, when any differs from it.
    private static func jsonSpellings(of value: String) -> [String] {
        var quotes = false, nonASCII = false, html = false, slash = false
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"", "\\": quotes = true
            case "&", "<", ">": html = true
            case "/": slash = true
            default: if scalar.value < 0x20 { quotes = true } else if scalar.value > 0x7F { nonASCII = true }
            }
        }
        guard quotes || nonASCII || html || slash else { return [] }
        var spellings: [String] = []
        for unicode in nonASCII ? [false, true] : [false] {
            for escapesHTML in html ? [false, true] : [false] {
                for escapesSlash in slash ? [false, true] : [false] {
                    for upper in unicode || escapesHTML ? [false, true] : [false] {
                        spellings.append(jsonSpelling(of: value, unicode: unicode, html: escapesHTML,
                                                      slash: escapesSlash, upper: upper))
                    }
                }
            }
        }
        return spellings
    }

    private static func jsonSpelling(of value: String, unicode: Bool, html: Bool, slash: Bool, upper: Bool) -> String {
        var out = ""
        func escape(_ unit: UInt16) {
            let hex = String(unit, radix: 16, uppercase: upper)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/" where slash: out += "\\/"
            case "&" where html, "<" where html, ">" where html: escape(UInt16(scalar.value))
            default:
                if scalar.value < 0x20 || (unicode && scalar.value > 0x7F) {
                    for unit in String(scalar).utf16 { escape(unit) }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    private static func decodedBasic(_ credential: String) -> String? {
        guard let data = Data(base64Encoded: credential.trimmingCharacters(in: " ")) else { return nil }
        return String(validating: Array(data), as: UTF8.self)
    }

    /// The parameters of a digest answer that prove the password (`response`) or tie
    /// the answer to one exchange (`cnonce`, `nonce`, `opaque`).
    private static func digestSecrets(_ value: String) -> [String] {
        var found: [String] = []
        for name in ["response", "cnonce", "nonce", "opaque"] {
            var from = value.startIndex
            // "cnonce=" holds "nonce=": a parameter starts the value or follows a separator.
            while let range = value[from...].firstRange(of: "\(name)=") {
                from = range.upperBound
                if range.lowerBound != value.startIndex, !" ,".contains(value[value.index(before: range.lowerBound)]) { continue }
                let rest = value[range.upperBound...]
                let end = rest.hasPrefix("\"") ? rest.dropFirst().firstIndex(of: "\"") : rest.firstIndex(of: ",")
                found.append(String(rest[..<(end ?? rest.endIndex)]).trimmingCharacters(in: "\""))
                break
            }
        }
        return found
    }
}
