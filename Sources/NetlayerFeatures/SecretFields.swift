import NetlayerCore
import NetlayerJSON

/// The fields of a body that hold secrets by their well-known names, whatever the
/// request's headers say: an OAuth token request's `password`, `client_secret` and
/// `refresh_token`, a token response's `access_token`, `refresh_token` and `id_token`.
/// Logs and cassettes replace their values, in JSON bodies (at any depth) and in form
/// bodies (`application/x-www-form-urlencoded`), and scrub other echoes of the values,
/// also of multipart form fields.
public enum SecretFields {
    /// The names, in `Redaction.normalized` form (lower case, no `-` or `_`).
    public static let names: Set<String> = [
        "password", "passwd", "clientsecret", "refreshtoken", "accesstoken", "idtoken",
    ]

    /// `body` with the value of every secret field replaced by `replacement`, and the
    /// values replaced (to scrub their echoes elsewhere). A body that is neither JSON
    /// nor a form, or holds no such field, comes back as it was.
    public static func redacting(_ body: [UInt8], names extra: Set<String> = [],
                                 replacement: String = Redaction.marker) -> (body: [UInt8], values: [String]) {
        guard let first = body.first(where: { !isSpace($0) }) else { return (body, []) }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "["), let json = try? JSONParser.parse(body) {
            var values: [String] = []
            let redacted = redacting(json, extra, replacement, &values)
            return values.isEmpty ? (body, []) : (JSONWriter.serialize(redacted), values)
        }
        return redactingForm(body, extra, replacement)
    }

    /// The text values of the secret fields among multipart `parts` (a form sent as
    /// `multipart/form-data`), to scrub their echoes: the parts themselves are built by
    /// libcurl and never written to a log or a cassette.
    public static func values(of parts: [MultipartPart]?) -> [String] {
        guard let parts else { return [] }
        return parts.compactMap { part in
            guard isSecret(part.name, []) else { return nil }
            switch part.content {
            case .text(let text): return text
            case .data(let bytes): return String(validating: bytes, as: UTF8.self)
            case .file: return nil
            }
        }
    }

    private static func isSecret(_ name: String, _ extra: Set<String>) -> Bool {
        let normalized = Redaction.normalized(name.utf8)
        return names.contains(normalized) || extra.contains(normalized)
    }

    private static func redacting(_ value: JSON, _ extra: Set<String>, _ replacement: String,
                                  _ values: inout [String]) -> JSON {
        switch value {
        case .object(let object):
            var out = JSONObject()
            for member in object {
                if isSecret(member.key, extra), case .string(let secret) = member.value {
                    values.append(secret)
                    out.appendUnchecked(member.key, .string(replacement))
                } else {
                    out.appendUnchecked(member.key, redacting(member.value, extra, replacement, &values))
                }
            }
            return .object(out)
        case .array(let items):
            return .array(items.map { redacting($0, extra, replacement, &values) })
        default:
            return value
        }
    }

    /// `name=value&...` with the values of secret names replaced; not a form (a byte
    /// outside what a form encodes, or a pair without `=`): unchanged.
    private static func redactingForm(_ body: [UInt8], _ extra: Set<String>,
                                      _ replacement: String) -> (body: [UInt8], values: [String]) {
        guard body.contains(UInt8(ascii: "=")),
              !body.contains(where: { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") }) else { return (body, []) }
        var out: [UInt8] = []
        var values: [String] = []
        for (i, pair) in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).enumerated() {
            if i > 0 { out.append(UInt8(ascii: "&")) }
            guard let eq = pair.firstIndex(of: UInt8(ascii: "=")) else { return (body, []) }
            let name = String(decoding: HTTPRequest.PercentEncoding.decoded(pair[..<eq], plusIsSpace: true), as: UTF8.self)
            guard isSecret(name, extra) else { out.append(contentsOf: pair); continue }
            values.append(String(decoding: HTTPRequest.PercentEncoding.decoded(pair[(eq + 1)...], plusIsSpace: true), as: UTF8.self))
            out.append(contentsOf: pair[...eq])
            out.append(contentsOf: replacement.utf8)
        }
        return values.isEmpty ? (body, []) : (out, values)
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
}
