/// A JSON value, kept in the order it was written.
///
/// Netlayer parses and writes JSON itself (see `JSONParser`, `JSONWriter`):
/// Foundation's `JSONSerialization` costs more per call than a whole loopback
/// request, and the C ABI moves every request and result through JSON.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// An integer literal that fits in 64 bits; kept exact.
    case int(Int64)
    /// A number a Double carries exactly: at most 15 significant digits, within its range.
    case double(Double)
    /// Any other number — an integer beyond 64 bits, or more digits than a Double
    /// holds — kept as its literal text and written back as it came, so that
    /// `18446744073709551615` never becomes `1.8446744073709552e+19`. The text is a
    /// valid JSON number; `JSON.number(exactly:)` checks one.
    case number(String)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The name of the value's type, for error messages ("expected a string, got an array").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The value as a Double, for any JSON number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .number(let text): return Double(text)
        default: return nil
        }
    }

    /// The value as an Int, for integers and for doubles with no fraction.
    public var intValue: Int? {
        switch self {
        case .int(let i): return Int(exactly: i)
        case .double(let d): return d.isFinite && d.rounded() == d ? Int(exactly: d) : nil
        case .number(let text):
            // `1.0` and `1e2` are integers written another way, as a `.double` of them is.
            if let i = Int(text) { return i }
            guard let d = Double(text), d.rounded() == d, abs(d) < 0x1p63 else { return nil }
            return Int(exactly: d)
        default: return nil
        }
    }

    /// `.number(text)` when `text` is a JSON number literal, else nil.
    public static func number(exactly text: String) -> JSON? {
        switch try? JSONParser.parse(text) {
        case .int?, .double?, .number?: return .number(text)
        default: return nil
        }
    }

    /// Whether this is an integer outside the signed 64-bit range (always a `.number`).
    public var isBigInteger: Bool {
        guard case .number(let text) = self, text != "-0" else { return false }  // `-0` keeps its sign, not its range
        return !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// Member `key` of an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }
}

extension JSON {
    /// The members of a JSON object, in document order. Lookups are linear, which is
    /// faster than hashing for the handful of keys API documents have.
    public struct JSONObject: Sendable, Hashable, Sequence {
        public struct Member: Sendable, Hashable {
            public var key: String
            public var value: JSON
        }

        public private(set) var members: [Member]

        public init() { members = [] }

        public init(_ pairs: [(String, JSON)]) {
            members = []
            members.reserveCapacity(pairs.count)
            for (k, v) in pairs { self[k] = v }
        }

        public var count: Int { members.count }
        public var isEmpty: Bool { members.isEmpty }
        public var keys: [String] { members.map(\.key) }

        /// Reading returns the member's value; writing replaces it in place or appends;
        /// writing nil removes it.
        public subscript(key: String) -> JSON? {
            get {
                for m in members where m.key == key { return m.value }
                return nil
            }
            set {
                if let i = members.firstIndex(where: { $0.key == key }) {
                    if let newValue { members[i].value = newValue } else { members.remove(at: i) }
                } else if let newValue {
                    members.append(Member(key: key, value: newValue))
                }
            }
        }

        /// Room for `count` members: a parsed object's first member allocates once
        /// for the few members most objects have, not once per doubling.
        mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

        /// Appends without looking for an existing key; the parser uses it after its
        /// own duplicate check.
        package mutating func appendUnchecked(_ key: String, _ value: JSON) {
            members.append(Member(key: key, value: value))
        }

        public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }
    }
}

/// `JSON.JSONObject` by the name it is known by.
public typealias JSONObject = JSON.JSONObject

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSON)...) { self.init(elements) }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(JSONObject(elements)) }
}
