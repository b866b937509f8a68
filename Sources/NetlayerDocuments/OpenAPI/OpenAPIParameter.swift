import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// One parameter of an operation: where it goes, how it is serialized and the schema
/// its value must match.
public struct OpenAPIParameter: Sendable {
    public enum Location: String, Sendable {
        case path, query, header, cookie
    }

    public let name: String
    public let location: Location
    public let required: Bool
    public let style: String
    public let explode: Bool
    /// The parameter's schema as written (`$ref`s unresolved); `{}` when it has none.
    public let schema: JSON
    public let description: String?
    public let deprecated: Bool
    /// The media type of a parameter described by `content` instead of `schema`: its
    /// value is sent as that type's text (JSON).
    let contentType: String?
    package let parsedStyle: ParameterStyle

    /// Reads a parameter object (its `$ref` already followed).
    init(_ json: JSON, context: String, resolver: OpenAPIReferences) throws(NetworkError) {
        let doc = try DocumentReader(json, context: context)
        guard let name = try doc.string("name") else { throw .invalidRequest("\(resolver.source): \(context) has no 'name'") }
        guard let place = try doc.string("in"), let location = Location(rawValue: place) else {
            throw .invalidRequest("\(resolver.source): \(context) '\(name.escapedForMessage)' has no valid 'in' (path, query, header or cookie)")
        }
        self.name = name
        self.location = location
        let declaredRequired = try doc.bool("required") ?? false
        required = location == .path || declaredRequired
        let defaultStyle: ParameterStyle = (location == .query || location == .cookie) ? .form : .simple
        let styleName = try doc.string("style") ?? defaultStyle.rawValue
        guard let parsed = ParameterStyle(rawValue: styleName),
              ParameterSerializer.allows(parsed, in: location.rawValue) else {
            throw .invalidRequest("\(resolver.source): \(context) '\(name.escapedForMessage)': style '\(styleName.escapedForMessage)' is not allowed in \(location.rawValue)")
        }
        parsedStyle = parsed
        style = styleName
        explode = try doc.bool("explode") ?? ParameterSerializer.defaultExplode(for: parsed)
        description = try doc.string("description")
        deprecated = try doc.bool("deprecated") ?? false
        if let content = try doc.object("content"), let first = content.first(where: { _ in true }) {
            contentType = first.key
            schema = (try? DocumentReader(first.value, context: context))?.value("schema") ?? .object(JSONObject())
        } else {
            contentType = nil
            schema = doc.value("schema") ?? .object(JSONObject())
        }
    }

    /// The parameter for discovery: name, place, whether required, its schema.
    var summary: JSON {
        var object: JSONObject = ["name": .string(name), "in": .string(location.rawValue), "required": .bool(required)]
        object["schema"] = schema
        if let description { object["description"] = .string(description) }
        if deprecated { object["deprecated"] = .bool(true) }
        return .object(object)
    }
}
