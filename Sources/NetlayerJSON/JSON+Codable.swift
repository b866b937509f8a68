/// `JSON` is `Codable`, so an `Endpoint<JSON>` decodes any body and a `JSON`
/// value can sit inside the caller's own `Codable` types.
extension JSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? container.decode(UInt64.self) {
            self = .number(String(u))
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSON].self) {
            self = .array(a)
        } else if let o = try? container.decode([String: JSON].self) {
            self = .object(JSONObject(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .number(let text):
            // An Encoder has no raw-number form: the nearest exact type, else a Double.
            if let u = UInt64(text) { try container.encode(u) } else { try container.encode(Double(text) ?? .nan) }
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o):
            var dictionary: [String: JSON] = [:]
            for member in o { dictionary[member.key] = member.value }
            try container.encode(dictionary)
        }
    }
}
