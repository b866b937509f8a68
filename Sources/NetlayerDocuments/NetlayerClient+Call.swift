import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

extension NetlayerClient {
    /// The names of the config's named endpoints, then its OpenAPI operations'.
    public var endpointNames: [String] {
        namedEndpoints.map(\.key) + (openAPI?.document.operations.map(\.name) ?? []).filter { namedEndpoints[$0] == nil }
    }

    /// What can be called by name, for discovery (`nl_client_operations`, `netlayer
    /// ops`): each named endpoint and each OpenAPI operation as an object with
    /// `name`, `method`, `path`, `source` (`endpoints` or `openapi`), `params` (each
    /// `{name, in, required, schema}`), `body` and, for operations, `summary` and
    /// `security`.
    public var operations: [JSON] {
        var list: [JSON] = namedEndpoints.map { Self.summary(name: $0.key, endpoint: $0.value) }
        for operation in openAPI?.document.operations ?? [] where namedEndpoints[operation.name] == nil {
            list.append(operation.summaryJSON)
        }
        return list
    }

    /// The endpoint `nl_call(name, overlay)` sends: the named endpoint with the
    /// overlay merged over it and its `params` in its path, or the OpenAPI operation
    /// called with the overlay's arguments.
    package func namedEndpointDocument(_ name: String, overlay: JSON) throws(NetworkError) -> EndpointDocument {
        if let named = namedEndpoints[name] {
            return try EndpointDocument(EndpointDocument.merged(named: named, overlay: overlay))
        }
        guard let api = openAPI else {
            var message = "no endpoint named '\(name.escapedForMessage)' in the config's endpoints"
            if let near = KeySuggestion.closest(to: name, among: namedEndpoints.map(\.key)) { message += " (did you mean '\(near)'?)" }
            throw .invalidRequest(message)
        }
        let operation = try api.document.requireOperation(name, alsoAmong: namedEndpoints.map(\.key))
        let json = try api.document.endpointDocument(for: operation, overlay: overlay, credentials: api.credentials,
                                                     hasBaseURL: hasBaseURL)
        var parsed = try EndpointDocument(json, context: "operation '\(name.escapedForMessage)' call")
        if api.validateResponses, !operation.responseSchemas.isEmpty,
           type(of: parsed.endpoint.responseDecoder) == AutoResponseDecoder.self {
            parsed.endpoint.responseDecoder = SchemaCheckedResponseDecoder(
                schemas: operation.responseSchemas, validator: api.document.validator, operation: operation.name)
        }
        return parsed
    }

    package func namedEndpoint(_ name: String, params: JSONObject,
                               overlay: JSONObject) throws(DataTransferError) -> Endpoint<JSON> {
        do throws(NetworkError) {
            var overlay = overlay
            if !params.isEmpty { overlay["params"] = .object(params) }
            return try namedEndpointDocument(name, overlay: .object(overlay)).endpoint
        } catch {
            throw .networkFailure(error)
        }
    }

    /// A named endpoint for discovery: its path's placeholders are its parameters.
    private static func summary(name: String, endpoint: JSON) -> JSON {
        let path = endpoint.objectValue?["path"]?.stringValue ?? ""
        var object: JSONObject = ["name": .string(name), "method": .string(endpoint.objectValue?["method"]?.stringValue ?? "GET")]
        object["path"] = .string(path)
        object["source"] = .string("endpoints")
        object["params"] = .array(OpenAPIOperation.placeholders(in: path).map {
            .object(["name": .string($0), "in": .string("path"), "required": .bool(true)])
        })
        object["body"] = .null
        return .object(object)
    }
}
