import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// The config's `openapi` key: an OpenAPI document whose operations become named
/// endpoints, the credentials for its security schemes, and whether responses are
/// checked against it.
///
/// `"openapi": "petstore.yaml"` names a JSON or YAML file; the object form is
/// `{"file" | "document", "credentials", "validateResponses"}`, where `document` is
/// the document itself (an object, or its JSON or YAML text).
public struct OpenAPIConfig: Sendable {
    public var document: OpenAPIDocument
    public var credentials: OpenAPICredentials
    /// Check JSON bodies of successful responses against the operation's response
    /// schemas; a body none accepts is kind `parsing`.
    public var validateResponses: Bool

    public init(document: OpenAPIDocument, credentials: OpenAPICredentials = OpenAPICredentials(),
                validateResponses: Bool = false) {
        self.document = document
        self.credentials = credentials
        self.validateResponses = validateResponses
    }

    /// The OpenAPI document at `path`, the value of the config's `key`: a file that
    /// cannot be read (missing, a folder, a FIFO) is a bad config value, named as such.
    private static func document(atPath path: String, key: String) throws(NetworkError) -> OpenAPIDocument {
        do {
            return try OpenAPIDocument(contentsOfFile: path)
        } catch {
            if case .io(let reason) = error { throw .invalidRequest("\(key): \(reason)") }
            throw error
        }
    }

    /// Reads the value of the config key `openapi`.
    package init(_ value: JSON) throws(NetworkError) {
        switch value {
        case .string(let path):
            guard !path.isEmpty else { throw .invalidRequest("config key 'openapi' must name a file, not be empty") }
            self.init(document: try Self.document(atPath: path, key: "config key 'openapi'"))
        case .object:
            let doc = try DocumentReader(value, context: "config key 'openapi'")
            try doc.checkKeys(known: ["file", "document", "credentials", "validateResponses"])
            let document: OpenAPIDocument
            switch (try doc.filePath("file"), doc.value("document")) {
            case (let path?, nil):
                document = try Self.document(atPath: path, key: "config key 'openapi' key 'file'")
            case (nil, .string(let text)?):
                document = try OpenAPIDocument(text: Array(text.utf8), source: "config key 'openapi' document")
            case (nil, let object?):
                document = try OpenAPIDocument(object, source: "config key 'openapi' document")
            case (_?, _?):
                throw .invalidRequest("config key 'openapi': 'file' and 'document' exclude each other")
            case (nil, nil):
                throw .invalidRequest("config key 'openapi' needs 'file' (a path) or 'document' (the document or its text)")
            }
            let credentials = try doc.value("credentials").map { value throws(NetworkError) in
                try OpenAPICredentials(value, schemes: document.securitySchemes)
            } ?? OpenAPICredentials()
            self.init(document: document, credentials: credentials,
                      validateResponses: try doc.bool("validateResponses") ?? false)
        default:
            throw .invalidRequest("config key 'openapi' must be a file path or an object, not \(value.typeName)")
        }
    }

    /// Header and query names whose values the document's API keys carry.
    package var secretNames: (headers: Set<String>, query: Set<String>) {
        OpenAPICredentials.secretNames(of: document.securitySchemes)
    }
}
