import NetlayerCore
import NetlayerJSON

/// Checks, when a document is loaded, that the keywords of its schemas have values of
/// the kind JSON Schema gives them (`maxLength` a non-negative integer, `type` a type
/// name or a list of them, `properties` an object of schemas, ...). A check reads a
/// keyword it does not understand as absent: `maxLength: "2"` or `type: strin` would
/// let every value through without a word, so such a document is refused at load,
/// naming the schema's JSON pointer and the keyword.
///
/// What is left alone, as real documents carry it: annotations (`format`, `example`,
/// `default`, ...), unknown keywords and `x-` extensions, Swagger 2's type name `file`
/// (which admits anything), a `required: true` inside a property (a common mistake that
/// OpenAPI's own parameters invite; it is ignored), and `pattern`s RE2 cannot compile
/// (the validator does not check those).
enum SchemaKeywordCheck {
    /// Every schema of `document`: `components.schemas` and each `schema` member of its
    /// parameters, media types and headers, with their subschemas. Throws
    /// `invalidRequest` naming `source`, the schema's pointer and the keyword.
    static func check(_ document: JSON, source: String) throws(NetworkError) {
        // Places are kept as a parent and a token, and a pointer is written only for an
        // error: a document may hold a million members.
        var places: [(parent: Int, token: String)] = [(-1, "#")]
        func place(_ parent: Int, _ token: String) -> Int {
            places.append((parent, token))
            return places.count - 1
        }
        var schemas: [(JSON, Int)] = []
        if case .object(let components)? = document.objectValue?["components"],
           case .object(let named)? = components["schemas"] {
            let at = place(place(0, "components"), "schemas")
            for member in named { schemas.append((member.value, place(at, member.key))) }
        }
        // The `schema` members of everything else (parameters, media types, headers),
        // not inside examples, defaults or extensions, which hold values, not schemas.
        var pending: [(JSON, Int, Bool)] = [(document, 0, true)]
        while let (node, at, isRoot) = pending.popLast() {
            switch node {
            case .object(let object):
                for member in object {
                    let key = member.key
                    if key == "schema" {
                        schemas.append((member.value, place(at, key)))
                    } else if member.value.objectValue != nil || member.value.arrayValue != nil,
                              !Self.valueKeys.contains(key), !key.hasPrefix("x-"), !(isRoot && key == "components") {
                        pending.append((member.value, place(at, key), false))
                    } else if isRoot, key == "components", case .object(let components) = member.value {
                        let inComponents = place(at, key)
                        for part in components where part.key != "schemas" && !Self.valueKeys.contains(part.key)
                            && !part.key.hasPrefix("x-") {
                            pending.append((part.value, place(inComponents, part.key), false))
                        }
                    }
                }
            case .array(let items):
                for (i, item) in items.enumerated() where item.objectValue != nil || item.arrayValue != nil {
                    pending.append((item, place(at, String(i)), false))
                }
            default:
                break
            }
        }
        func pointer(_ index: Int) -> String {
            var tokens: [String] = []
            var i = index
            while i > 0 {
                tokens.append(escaped(places[i].token))
                i = places[i].parent
            }
            return (["#"] + tokens.reversed()).joined(separator: "/")
        }
        while let (schema, at) = schemas.popLast() {
            guard case .object(let keywords) = schema else {
                if case .bool = schema { continue }
                throw failure(source, pointer(at), nil, "must be a schema (an object or a boolean), not \(schema.typeName)")
            }
            if keywords["$ref"] != nil { continue }  // the target is checked where it is
            for member in keywords {
                if let message = problem(member.key, member.value) {
                    throw failure(source, pointer(at), member.key, message)
                }
                for (child, tokens) in subschemas(member.key, member.value) {
                    schemas.append((child, tokens.reduce(at) { place($0, $1) }))
                }
            }
        }
    }

    /// Members whose values are data (an Example Object's `value` too), not parts of
    /// the document that hold schemas.
    private static let valueKeys: Set<String> = ["example", "examples", "value", "default", "enum", "const"]

    private static let typeNames: Set<String> = ["null", "boolean", "object", "array", "number", "integer", "string", "file"]

    /// What is wrong with the value of keyword `key`, or nil.
    private static func problem(_ key: String, _ value: JSON) -> String? {
        func expected(_ words: String) -> String { "must be \(words), not \(shown(value))" }
        switch key {
        case "type":
            let names: [JSON]
            if case .array(let list) = value { names = list } else { names = [value] }
            guard !names.isEmpty, names.allSatisfy({ $0.stringValue.map(typeNames.contains) ?? false }) else {
                return expected("one of null, boolean, object, array, number, integer, string (or a list of them)")
            }
        case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains",
             "maxContains":
            guard value.stringValue == nil, value.boolValue == nil, let number = value.doubleValue, number >= 0,
                  number.rounded() == number else { return expected("a non-negative integer") }
        case "minimum", "maximum":
            guard SchemaNumber(value) != nil else { return expected("a number") }
        case "exclusiveMinimum", "exclusiveMaximum":
            guard SchemaNumber(value) != nil || value.boolValue != nil else {
                return expected("a number (or, in OpenAPI 3.0, a boolean)")
            }
        case "multipleOf":
            guard let number = SchemaNumber(value), !number.negative, (value.doubleValue ?? 1) != 0 else {
                return expected("a number greater than 0")
            }
        case "pattern":
            guard value.stringValue != nil else { return expected("a string") }
        case "nullable", "uniqueItems", "readOnly", "writeOnly":
            guard value.boolValue != nil else { return expected("a boolean") }
        case "required":
            // A boolean is the property-level mistake the type comment describes.
            guard value.boolValue != nil || value.arrayValue?.allSatisfy({ $0.stringValue != nil }) == true else {
                return expected("an array of property names")
            }
        case "enum":
            guard value.arrayValue != nil else { return expected("an array") }
        case "properties", "patternProperties", "dependentSchemas":
            guard value.objectValue != nil else { return expected("an object of schemas") }
        case "allOf", "anyOf", "oneOf":
            guard let items = value.arrayValue, !items.isEmpty else { return expected("a non-empty array of schemas") }
        case "prefixItems":
            guard value.arrayValue != nil else { return expected("an array of schemas") }
        default:
            break
        }
        return nil
    }

    /// The subschemas of keyword `key` whose value is `value` (checked by `problem`),
    /// each with the pointer tokens from the schema to it.
    private static func subschemas(_ key: String, _ value: JSON) -> [(JSON, [String])] {
        switch key {
        case "properties", "patternProperties", "dependentSchemas":
            return value.objectValue.map { $0.map { ($0.value, [key, $0.key]) } } ?? []
        case "allOf", "anyOf", "oneOf", "prefixItems":
            return value.arrayValue.map { $0.enumerated().map { ($1, [key, String($0)]) } } ?? []
        case "items":
            if let items = value.arrayValue {  // the tuple form of earlier drafts
                return items.enumerated().map { ($1, [key, String($0)]) }
            }
            return [(value, [key])]
        case "not", "if", "then", "else", "contains", "propertyNames", "additionalProperties",
             "unevaluatedProperties", "unevaluatedItems", "additionalItems":
            return [(value, [key])]
        default:
            return []
        }
    }

    private static func failure(_ source: String, _ pointer: String, _ key: String?, _ message: String) -> NetworkError {
        .invalidRequest("\(source): the schema at '\(pointer.escapedForMessage)'"
            + (key.map { " key '\($0.escapedForMessage)'" } ?? "") + " " + message)
    }

    private static func shown(_ value: JSON) -> String {
        switch value {
        case .string(let text): return "the string \"\(String(text.prefix(40)).escapedForMessage)\""
        default: return value.typeName
        }
    }

    /// A JSON pointer token (RFC 6901: `~` as `~0`, `/` as `~1`).
    private static func escaped(_ token: String) -> String {
        token.replacing("~", with: "~0").replacing("/", with: "~1")
    }
}
