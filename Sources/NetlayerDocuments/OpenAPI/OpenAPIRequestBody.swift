import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// An operation's request body: whether it is required and the media types it may be
/// sent as, each with its schema.
public struct OpenAPIRequestBody: Sendable {
    public let required: Bool
    /// The media types in the document's order ("application/json", ...).
    public let contentTypes: [String]
    let schemas: [JSON]

    init(_ json: JSON, context: String, resolver: OpenAPIReferences) throws(NetworkError) {
        let doc = try DocumentReader(json, context: "\(resolver.source) \(context) requestBody")
        required = try doc.bool("required") ?? false
        var types: [String] = [], schemas: [JSON] = []
        for media in try doc.object("content") ?? JSONObject() {
            types.append(media.key)
            schemas.append((try? DocumentReader(media.value, context: context))?.value("schema") ?? .object(JSONObject()))
        }
        contentTypes = types
        self.schemas = schemas
    }

    var summary: JSON {
        var object: JSONObject = ["required": .bool(required), "contentTypes": .array(contentTypes.map(JSON.string))]
        object["schema"] = schemas.first ?? .null
        return .object(object)
    }

    /// The endpoint document's body encoding for a media type: `json`, `form`,
    /// `multipart`, `text`, `xml`, or `base64` (the bytes of any other type).
    static func encoding(of mediaType: String) -> String {
        let essence = mediaType.split(separator: ";").first.map { $0.trimmingSpaces.lowercased() } ?? ""
        if AutoResponseDecoder.choice(contentType: essence, body: []) == .json { return "json" }
        switch essence {
        case "application/x-www-form-urlencoded": return "form"
        case "multipart/form-data", "multipart/mixed": return "multipart"
        case "application/xml", "text/xml": return "xml"
        default:
            if essence.hasSuffix("+xml") { return "xml" }
            if essence.hasPrefix("text/") { return "text" }
            return "base64"
        }
    }

    /// The media type to send: the first one of `encoding` when the caller names an
    /// encoding, else the document's first.
    func mediaType(for encoding: String?, operation: String) throws(NetworkError) -> Int {
        guard let encoding else {
            guard !contentTypes.isEmpty else {
                throw .invalidRequest("operation '\(operation.escapedForMessage)': its requestBody lists no media type")
            }
            return 0
        }
        guard let index = contentTypes.firstIndex(where: { Self.encoding(of: $0) == encoding }) else {
            throw .invalidRequest("operation '\(operation.escapedForMessage)': bodyEncoding '\(encoding.escapedForMessage)' matches none of its media types (\(contentTypes.joined(separator: ", ")))")
        }
        return index
    }

    /// The endpoint document keys that send `body` as media type `index`.
    func documentKeys(for body: JSON, mediaType index: Int, references: OpenAPIReferences,
                      operation: String) throws(NetworkError) -> JSONObject {
        let mediaType = contentTypes[index]
        let encoding = Self.encoding(of: mediaType)
        var keys = JSONObject()
        switch encoding {
        case "json", "text", "base64":
            keys["body"] = body
            keys["bodyEncoding"] = .string(encoding)
            if encoding == "base64" && !mediaType.contains("*") || encoding == "json" && mediaType.lowercased() != "application/json" {
                keys["headers"] = .object(["Content-Type": .string(mediaType)])
            }
        case "form":
            guard case .object(let fields) = body else {
                throw .invalidRequest("operation '\(operation.escapedForMessage)': a \(mediaType) body must be an object, not \(body.typeName)")
            }
            var form = JSONObject()
            for field in fields {
                form[field.key] = Self.formValue(field.value)
            }
            keys["body"] = .object(form)
            keys["bodyEncoding"] = .string("form")
        case "xml":
            keys["body"] = body
            keys["bodyEncoding"] = .string("xml")
            keys["xmlRoot"] = .string(Self.xmlRoot(of: schemas[index], references: references))
        default:  // multipart
            guard case .object(let fields) = body else {
                throw .invalidRequest("operation '\(operation.escapedForMessage)': a \(mediaType) body must be an object, not \(body.typeName)")
            }
            keys["multipart"] = .array(fields.flatMap(Self.parts))
            keys["bodyEncoding"] = .string("multipart")
        }
        return keys
    }

    /// A form field: scalars and arrays of scalars as they are (arrays repeat the
    /// key), anything deeper as its JSON text, as OpenAPI's default encoding says.
    private static func formValue(_ value: JSON) -> JSON {
        switch value {
        case .object: return .string(String(decoding: JSONWriter.serialize(value), as: UTF8.self))
        case .array(let items) where items.contains(where: { $0.objectValue != nil || $0.arrayValue != nil }):
            return .string(String(decoding: JSONWriter.serialize(value), as: UTF8.self))
        default: return value
        }
    }

    /// The multipart parts of one body property: a file part as given
    /// (`{"file"|"base64", "filename", "contentType"}`), scalars as text, arrays of
    /// scalars as one part each, anything else as JSON.
    private static func parts(_ field: JSONObject.Element) -> [JSON] {
        let name = JSON.string(field.key)
        switch field.value {
        case .null:
            return []
        case .object(var part) where isFilePart(field.value):
            part["name"] = name
            return [.object(part)]
        case .array(let items) where items.allSatisfy({ $0.objectValue == nil && $0.arrayValue == nil }):
            return items.map { .object(["name": name, "text": .string(scalarText($0))]) }
        case .object, .array:
            return [.object(["name": name, "text": .string(String(decoding: JSONWriter.serialize(field.value), as: UTF8.self)),
                             "contentType": .string("application/json")])]
        default:
            return [.object(["name": name, "text": .string(scalarText(field.value))])]
        }
    }

    /// Whether `value` is a multipart file part (`{"file": path}` or `{"base64": ...}`).
    static func isFilePart(_ value: JSON) -> Bool {
        guard case .object(let object) = value else { return false }
        // A part without its name: the property's name is the part's.
        return (object["file"] != nil || object["base64"] != nil)
            && object.allSatisfy { $0.key != "name" && $0.key != "text" && EndpointDocument.multipartPartKeys.contains($0.key) }
    }

    private static func scalarText(_ value: JSON) -> String {
        if case .string(let s) = value { return s }
        return String(decoding: JSONWriter.serialize(value), as: UTF8.self)
    }

    /// The root element of an XML body: the schema's `xml.name`, or the name of the
    /// schema it refers to, or "body".
    private static func xmlRoot(of schema: JSON, references: OpenAPIReferences) -> String {
        if case .object(let object)? = try? references.resolve(schema, context: "xml"),
           case .object(let xml)? = object["xml"], case .string(let name)? = xml["name"] { return name }
        if case .object(let object) = schema, case .string(let ref)? = object["$ref"],
           let name = OpenAPIReferences.lastName(of: ref) { return name }
        return "body"
    }
}

private extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
