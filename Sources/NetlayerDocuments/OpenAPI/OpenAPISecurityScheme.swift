import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// A security scheme of `components.securitySchemes`, as far as a client fills it in:
/// an API key in a header, the query or a cookie, or an `Authorization` header
/// (HTTP basic, bearer; OAuth 2 and OpenID Connect send their access token as bearer).
public struct OpenAPISecurityScheme: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case apiKey(name: String, location: OpenAPIParameter.Location)
        case basic
        /// `Authorization: Bearer <token>`: HTTP bearer, OAuth 2, OpenID Connect.
        case bearer
        /// A scheme netlayer cannot fill in (HTTP digest, mutual TLS, ...): its
        /// operations are sent without it, and credentials for it are refused.
        case unsupported(String)
    }

    public let name: String
    public let kind: Kind

    /// The schemes of a document's `components.securitySchemes`.
    static func schemes(in doc: DocumentReader, resolver: OpenAPIReferences) throws(NetworkError) -> [String: OpenAPISecurityScheme] {
        guard let components = try doc.reader("components"), let schemes = try components.object("securitySchemes") else {
            return [:]
        }
        var found: [String: OpenAPISecurityScheme] = [:]
        for member in schemes {
            let context = "security scheme '\(member.key.escapedForMessage)'"
            let scheme = try DocumentReader(try resolver.resolve(member.value, context: context), context: "\(resolver.source) \(context)")
            let type = try scheme.string("type") ?? ""
            let kind: Kind
            switch type {
            case "apiKey":
                guard let name = try scheme.string("name"), let place = try scheme.string("in"),
                      let location = OpenAPIParameter.Location(rawValue: place), location != .path else {
                    throw .invalidRequest("\(resolver.source): \(context) of type apiKey needs 'name' and 'in' (header, query or cookie)")
                }
                // A header or cookie name is a token: anything else would be refused on
                // every call by the header it went to, not by the scheme that named it.
                if location != .query, name.isEmpty || !name.utf8.allSatisfy(HTTPHeaders.isTokenByte) {
                    throw .invalidRequest("\(resolver.source): \(context): '\(name.escapedForMessage)' is not a valid \(location.rawValue) name (a token: letters, digits and !#$%&'*+-.^_`|~)")
                }
                kind = .apiKey(name: name, location: location)
            case "http":
                switch (try scheme.string("scheme") ?? "").lowercased() {
                case "basic": kind = .basic
                case "bearer": kind = .bearer
                case let other: kind = .unsupported("http \(other)")
                }
            case "oauth2", "openIdConnect":
                kind = .bearer
            default:
                kind = .unsupported(type)
            }
            found[member.key] = OpenAPISecurityScheme(name: member.key, kind: kind)
        }
        return found
    }
}

/// The secrets a config gives for a document's security schemes
/// (`openapi.credentials`), by scheme name: a string for an API key or a token, or
/// `{"username", "password"}` for HTTP basic.
public struct OpenAPICredentials: Sendable {
    enum Secret: Sendable {
        case text(String)
        case basic(username: String, password: String)
    }

    var secrets: [String: Secret] = [:]

    public init() {}

    /// Reads `openapi.credentials`, checked against the document's schemes.
    package init(_ json: JSON, schemes: [String: OpenAPISecurityScheme]) throws(NetworkError) {
        let doc = try DocumentReader(json, context: "config key 'openapi' credentials")
        for member in doc.object where !member.value.isNull {
            let context = "config key 'openapi' credentials '\(member.key.escapedForMessage)'"
            guard let scheme = schemes[member.key] else {
                var message = "\(context): the document has no security scheme of that name"
                if let near = KeySuggestion.closest(to: member.key, among: schemes.keys) { message += " (did you mean '\(near)'?)" }
                throw .invalidRequest(message)
            }
            switch (scheme.kind, member.value) {
            case (.unsupported(let what), _):
                throw .invalidRequest("\(context): netlayer cannot fill in a scheme of type \(what); use the config's 'auth' or 'tls' keys")
            case (.basic, .object):
                let pair = try DocumentReader(member.value, context: context)
                try pair.checkKeys(known: ["username", "password"])
                guard let user = try pair.string("username"), let password = try pair.string("password") else {
                    throw .invalidRequest("\(context) needs 'username' and 'password'")
                }
                guard !user.contains(":") else { throw .invalidRequest("\(context): a basic username cannot contain ':'") }
                secrets[member.key] = .basic(username: user, password: password)
            case (.basic, let other):
                throw .invalidRequest("\(context) must be {\"username\", \"password\"} for HTTP basic, not \(other.typeName)")
            case (_, .string(let text)):
                guard !text.isEmpty else { throw .invalidRequest("\(context) is empty") }
                // Whether it goes in a header, the query or a cookie, a control character
                // in a secret is a mistake (a pasted line break): refused here, naming
                // the config key, rather than by whichever header it would have been.
                if let bad = HTTPHeaders.forbiddenValueByte(in: text) {
                    throw .invalidRequest("\(context) holds \(HTTPHeaders.describeControl(bad)); a key or token cannot contain control characters (only HTAB)")
                }
                secrets[member.key] = .text(text)
            case (_, let other):
                throw .invalidRequest("\(context) must be a string (the key or token), not \(other.typeName)")
            }
        }
    }

    /// The header names and query names whose values these credentials put on the
    /// wire, for redaction in logs and cassettes.
    static func secretNames(of schemes: [String: OpenAPISecurityScheme]) -> (headers: Set<String>, query: Set<String>) {
        var headers = Set<String>(), query = Set<String>()
        for scheme in schemes.values {
            if case .apiKey(let name, let location) = scheme.kind {
                if location == .header { headers.insert(name.lowercased()) }
                if location == .query { query.insert(Redaction.normalized(name.utf8)) }
            }
        }
        return (headers, query)
    }
}
