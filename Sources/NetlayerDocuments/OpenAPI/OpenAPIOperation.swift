import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// One operation of an OpenAPI document: its method and path, its parameters, its
/// request body, the schemas of its successful responses and its security.
public struct OpenAPIOperation: Sendable {
    /// `operationId`, or `"METHOD /path"` for an operation without one.
    public let name: String
    public let method: String
    /// The path as the document writes it ("/pet/{petId}"). A `?` or `#` in it is part
    /// of the path: sent percent-encoded, it never starts a query or a fragment.
    public let path: String
    public let summary: String?
    public let deprecated: Bool
    public let parameters: [OpenAPIParameter]
    public let requestBody: OpenAPIRequestBody?
    /// Alternatives, each a list of scheme names that apply together; empty: none.
    public let security: [[String]]
    /// Schemas of the 2XX and `default` JSON responses, for response validation.
    let responseSchemas: [JSON]
    /// The operation's own `servers[0]`, else its path item's (URL, path, absolute),
    /// which override the document's (OpenAPI's Operation and Path Item `servers`).
    let server: (url: String, path: String, isAbsolute: Bool)?

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// The operations of one path item.
    static func operations(path: String, item: JSON, resolver: OpenAPIReferences,
                           defaultSecurity: [[String]]) throws(NetworkError) -> [OpenAPIOperation] {
        let context = "path '\(path.escapedForMessage)'"
        let doc = try DocumentReader(item, context: "\(resolver.source) \(context)")
        let shared = try parameters(doc.value("parameters"), context: context, resolver: resolver)
        let pathServer = try ownServer(doc, source: "\(resolver.source) \(context)")
        var found: [OpenAPIOperation] = []
        for method in methods {
            guard let operation = doc.value(method) else { continue }
            found.append(try OpenAPIOperation(method: method, path: path, json: operation, shared: shared,
                                              resolver: resolver, defaultSecurity: defaultSecurity, pathServer: pathServer))
        }
        return found
    }

    /// `servers[0]` of a path item or an operation, nil when it has none.
    private static func ownServer(_ doc: DocumentReader, source: String) throws(NetworkError) -> (url: String, path: String, isAbsolute: Bool)? {
        guard case .array(let servers)? = doc.value("servers"), !servers.isEmpty else { return nil }
        let (url, path, isAbsolute) = try OpenAPIDocument.server(doc, source: source)
        return (url, path, isAbsolute)
    }

    private init(method: String, path rawPath: String, json: JSON, shared: [OpenAPIParameter],
                 resolver: OpenAPIReferences, defaultSecurity: [[String]],
                 pathServer: (url: String, path: String, isAbsolute: Bool)?) throws(NetworkError) {
        let upper = method.uppercased()
        let doc = try DocumentReader(json, context: "\(resolver.source) operation \(upper) '\(rawPath.escapedForMessage)'")
        server = try Self.ownServer(doc, source: "\(resolver.source) operation \(upper) '\(rawPath.escapedForMessage)'") ?? pathServer
        self.method = upper
        path = rawPath
        name = try doc.string("operationId") ?? "\(upper) \(rawPath)"
        summary = try doc.string("summary")
        deprecated = try doc.bool("deprecated") ?? false
        let context = "operation '\(name.escapedForMessage)'"
        // Operation parameters override path-level ones of the same name and place (and
        // a later one an earlier one), found by key so that many parameters load in
        // linear time.
        let own = try Self.parameters(doc.value("parameters"), context: context, resolver: resolver)
        func key(_ parameter: OpenAPIParameter) -> String { "\(parameter.location.rawValue) \(parameter.name)" }
        var lastOwn: [String: Int] = [:]
        for (position, parameter) in own.enumerated() { lastOwn[key(parameter)] = position }
        let merged = shared.filter { lastOwn[key($0)] == nil }
            + own.enumerated().filter { lastOwn[key($0.element)] == $0.offset }.map(\.element)
        // The spec has these three headers ignored as parameters: other keys set them.
        parameters = merged.filter {
            $0.location != .header || !["accept", "content-type", "authorization"].contains($0.name.lowercased())
        }
        let pathNames = Set(merged.filter { $0.location == .path }.map(\.name))
        for placeholder in Self.placeholders(in: path) where !pathNames.contains(placeholder) {
            throw .invalidRequest("\(resolver.source): \(context) has no path parameter for '{\(placeholder.escapedForMessage)}'")
        }
        requestBody = try doc.value("requestBody").map { body throws(NetworkError) in
            try OpenAPIRequestBody(try resolver.resolve(body, context: "\(context) requestBody"), context: context, resolver: resolver)
        }
        if let own = doc.value("security") {
            security = try Self.securityRequirements(own, context: "\(context) key 'security'")
        } else {
            security = defaultSecurity
        }
        responseSchemas = try Self.successSchemas(doc.value("responses"), context: context, resolver: resolver)
    }

    /// `security`: an array of requirement objects, each naming schemes that apply together.
    static func securityRequirements(_ value: JSON?, context: String) throws(NetworkError) -> [[String]] {
        guard let value else { return [] }
        guard case .array(let items) = value else { throw .invalidRequest("\(context) must be an array, not \(value.typeName)") }
        var requirements: [[String]] = []
        for item in items {
            guard case .object(let requirement) = item else {
                throw .invalidRequest("\(context) must hold objects, not \(item.typeName)")
            }
            requirements.append(requirement.map(\.key))
        }
        return requirements
    }

    private static func parameters(_ value: JSON?, context: String,
                                   resolver: OpenAPIReferences) throws(NetworkError) -> [OpenAPIParameter] {
        guard let value else { return [] }
        guard case .array(let items) = value else {
            throw .invalidRequest("\(resolver.source): \(context) 'parameters' must be an array, not \(value.typeName)")
        }
        var found: [OpenAPIParameter] = []
        for (i, item) in items.enumerated() {
            let resolved = try resolver.resolve(item, context: "\(context) parameter \(i)")
            found.append(try OpenAPIParameter(resolved, context: "\(context) parameter", resolver: resolver))
        }
        return found
    }

    /// The `{names}` of a path template.
    static func placeholders(in path: String) -> [String] {
        var names: [String] = []
        var rest = Substring(path)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// The JSON schemas of the responses a decoder sees: 2XX ones and `default`.
    private static func successSchemas(_ value: JSON?, context: String,
                                       resolver: OpenAPIReferences) throws(NetworkError) -> [JSON] {
        guard case .object(let responses)? = value else { return [] }
        var schemas: [JSON] = []
        for response in responses where response.key.hasPrefix("2") || response.key == "default" {
            let resolved = try resolver.resolve(response.value, context: "\(context) response \(response.key)")
            guard case .object(let object) = resolved, case .object(let content)? = object["content"] else { continue }
            for media in content where AutoResponseDecoder.choice(contentType: media.key, body: []) == .json {
                if case .object(let mediaObject) = media.value, let schema = mediaObject["schema"] {
                    schemas.append(schema)
                }
            }
        }
        return schemas
    }

    /// The operation for discovery (`nl_client_operations`, `netlayer ops`).
    var summaryJSON: JSON {
        var object: JSONObject = ["name": .string(name), "method": .string(method), "path": .string(path)]
        object["source"] = .string("openapi")
        if let summary { object["summary"] = .string(summary) }
        if deprecated { object["deprecated"] = .bool(true) }
        object["params"] = .array(parameters.map(\.summary))
        object["body"] = requestBody?.summary ?? .null
        object["security"] = .array(security.map { .array($0.map(JSON.string)) })
        return .object(object)
    }
}
