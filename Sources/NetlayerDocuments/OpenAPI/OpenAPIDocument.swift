import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// An OpenAPI 3.0 or 3.1 document read as a table of operations: what the config's
/// `openapi` key loads, so that each operation is a named endpoint under its
/// `operationId` (an operation without one is named `"METHOD /path"`).
///
/// Only what calling an operation needs is read: servers, paths and their
/// operations, parameters, request bodies, responses and security schemes. Local
/// `$ref`s (`#/components/...`) are followed; a reference to another file is refused
/// when the operation that uses it is loaded.
///
/// ```swift
/// let api = try OpenAPIDocument(contentsOfFile: "petstore.yaml")
/// print(api.operations.map(\.name))
/// ```
public struct OpenAPIDocument: Sendable {
    /// The most a document may hold, as JSON text (`JSON.textSize`: a YAML document
    /// with its aliases expanded each time they are used), and the most its operations'
    /// descriptions (`nl_client_operations`) may add up to: 64 MiB. A YAML text's value
    /// is also held to 32 times the text (`YAMLReader.maxBytes`).
    public static let maxBytes = 64 << 20

    /// The operations, in the document's order.
    public let operations: [OpenAPIOperation]
    /// The path of `servers[0]`'s URL ("/api/v3"), "" without servers.
    public let serverPath: String
    /// Whether `servers[0]` is an absolute URL (then the config's `baseURL` wins, when
    /// it has one, and the server's path is not used).
    public let serverIsAbsolute: Bool
    /// `servers[0]` with its variables at their defaults, "" without servers.
    public let serverURL: String
    /// The security schemes of `components.securitySchemes`, by name.
    public let securitySchemes: [String: OpenAPISecurityScheme]
    package let validator: SchemaValidator
    package let references: OpenAPIReferences
    private let index: [String: Int]

    /// Reads `json`, an OpenAPI 3.0.x or 3.1.x document; `source` names it in errors.
    public init(_ json: JSON, source: String = "openapi document") throws(NetworkError) {
        let doc = try DocumentReader(json, context: source)
        guard let version = try doc.string("openapi") else {
            let swagger = doc.value("swagger") != nil
            throw .invalidRequest("\(source) has no 'openapi' version\(swagger ? " (Swagger 2.0 documents are not supported; convert it to OpenAPI 3)" : "")")
        }
        guard version.hasPrefix("3.0") || version.hasPrefix("3.1") else {
            throw .invalidRequest("\(source): 'openapi' is '\(version.escapedForMessage)'; netlayer reads OpenAPI 3.0 and 3.1 documents")
        }
        guard json.textSize(limit: Self.maxBytes) != nil else {
            throw .invalidRequest("\(source) is larger than \(Self.maxBytes) bytes (64 MiB) as JSON text, YAML aliases expanded; an OpenAPI document may be at most that")
        }
        try SchemaKeywordCheck.check(json, source: source)
        validator = SchemaValidator(document: json)
        // The validator resolved every $ref of the document once; the loader reads them there.
        let resolver = OpenAPIReferences(document: json, source: source, targets: validator.targets)
        references = resolver
        (serverURL, serverPath, serverIsAbsolute) = try Self.server(doc, source: source)
        securitySchemes = try OpenAPISecurityScheme.schemes(in: doc, resolver: resolver)
        let defaultSecurity = try OpenAPIOperation.securityRequirements(doc.value("security"), context: "\(source) key 'security'")

        var operations: [OpenAPIOperation] = []
        var index: [String: Int] = [:]
        // What nl_client_operations will write: a path's parameters and the document's
        // security repeat in each of its operations, so it can outgrow the document.
        var discoveryBytes = Self.maxBytes
        if let paths = try doc.object("paths") {
            for path in paths {
                if path.key.hasPrefix("x-") { continue }  // a specification extension, not a path
                guard path.key.hasPrefix("/") else {
                    // The Paths Object: "The field name MUST begin with a forward slash";
                    // joined to the server's path, another would change its last segment.
                    throw .invalidRequest("\(source): path '\(path.key.escapedForMessage)' must begin with '/'")
                }
                let item = try resolver.resolve(path.value, context: "path '\(path.key.escapedForMessage)'")
                let found = try OpenAPIOperation.operations(path: path.key, item: item, resolver: resolver,
                                                            defaultSecurity: defaultSecurity)
                for operation in found {
                    if index[operation.name] != nil {
                        throw .invalidRequest("\(source): operationId '\(operation.name.escapedForMessage)' is used twice")
                    }
                    guard let size = operation.summaryJSON.textSize(limit: discoveryBytes) else {
                        throw .invalidRequest("\(source): the descriptions of its operations (as nl_client_operations lists them) add up to more than \(Self.maxBytes) bytes (64 MiB)")
                    }
                    discoveryBytes -= size
                    index[operation.name] = operations.count
                    operations.append(operation)
                }
            }
        }
        self.operations = operations
        self.index = index
    }

    /// Reads a document given as text: JSON when it starts with `{`, else YAML.
    public init(text: some Collection<UInt8>, source: String = "openapi document") throws(NetworkError) {
        let bytes = Array(text)
        guard bytes.count <= Self.maxBytes else {
            throw .invalidRequest("\(source) holds \(bytes.count) bytes, more than the \(Self.maxBytes) (64 MiB) an OpenAPI document may hold")
        }
        let first = bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        let json: JSON
        if first == UInt8(ascii: "{") {
            json = try JSON.parseDocument(bytes, what: source)
        } else {
            json = try YAMLReader.parse(bytes, what: source, maxBytes: Self.maxBytes)
        }
        try self.init(json, source: source)
    }

    /// Reads the JSON or YAML file at `path`.
    public init(contentsOfFile path: String) throws(NetworkError) {
        try self.init(text: try DocumentFile.read(path), source: "openapi file '\(path.escapedForMessage)'")
    }

    /// The operation called `name`, or nil.
    public func operation(named name: String) -> OpenAPIOperation? {
        index[name].map { operations[$0] }
    }

    /// The operation called `name`, or `invalidRequest` suggesting the closest name.
    package func requireOperation(_ name: String, alsoAmong names: [String] = []) throws(NetworkError) -> OpenAPIOperation {
        if let operation = operation(named: name) { return operation }
        var message = "no endpoint named '\(name.escapedForMessage)' in the config's endpoints or its openapi document"
        if let near = KeySuggestion.closest(to: name, among: names + operations.map(\.name)) {
            message += " (did you mean '\(near)'?)"
        }
        throw .invalidRequest(message)
    }

    /// `servers[0]`: its URL with variables at their defaults, the URL's path, and
    /// whether it is absolute.
    static func server(_ doc: DocumentReader, source: String) throws(NetworkError) -> (String, String, Bool) {
        guard case .array(let servers)? = doc.value("servers"), let first = servers.first else { return ("", "", false) }
        let server = try DocumentReader(first, context: "\(source) servers[0]")
        guard var url = try server.string("url") else {
            throw .invalidRequest("\(source) servers[0] has no 'url'")
        }
        if let variables = try server.object("variables") {
            for variable in variables {
                let value = try DocumentReader(variable.value, context: "\(source) servers[0] variable '\(variable.key)'")
                guard let fallback = try value.string("default") else {
                    throw .invalidRequest("\(source) servers[0] variable '\(variable.key.escapedForMessage)' has no default")
                }
                url = url.replacing("{\(variable.key)}", with: fallback)
            }
        }
        if let scheme = url.firstRange(of: "://") {
            let afterAuthority = url[scheme.upperBound...].firstIndex(of: "/") ?? url.endIndex
            return (url, String(url[afterAuthority...]), true)
        }
        return (url, url, false)
    }
}
