import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Why one YAML scalar has no JSON value; `YAMLTreeBuilder` adds where it is.
package struct YAMLProblem: Error {
    var message: String
}

/// How a YAML scalar becomes a JSON value. A plain scalar without a tag is resolved
/// by the YAML 1.2 core schema (null, booleans, integers, floats, else a string);
/// every quoted or block scalar is a string; an explicit tag of the core schema
/// (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`) is honoured and any other tag is
/// refused. YAML 1.1's extra forms (`yes`/`no`, `0777` octals, `1_000`, dates) are
/// strings here, as the OpenAPI specification asks (YAML 1.2).
package enum YAMLScalar {
    static let coreTagPrefix = "tag:yaml.org,2002:"

    /// The value of a scalar with `text`, its resolved `tag` (nil when it has none)
    /// and whether it was written plain.
    static func resolve(_ text: String, tag: String?, plain: Bool) throws(YAMLProblem) -> JSON {
        if let tag, tag != "!" {
            return try resolve(text, explicitTag: tag)
        }
        guard plain && tag == nil else { return .string(text) }
        if isNull(text) { return .null }
        if let b = bool(text) { return .bool(b) }
        if let i = try integer(text) { return i }
        if let f = try float(text) { return f }
        return .string(text)
    }

    /// A tag's short form for messages: `!!int` rather than `tag:yaml.org,2002:int`.
    static func display(tag: String) -> String {
        tag.hasPrefix(coreTagPrefix) ? "!!" + tag.dropFirst(coreTagPrefix.count) : tag
    }

    private static func resolve(_ text: String, explicitTag tag: String) throws(YAMLProblem) -> JSON {
        let shown = display(tag: tag)
        switch tag.hasPrefix(coreTagPrefix) ? String(tag.dropFirst(coreTagPrefix.count)) : "" {
        case "str":
            return .string(text)
        case "null":
            if isNull(text) { return .null }
        case "bool":
            if let b = bool(text) { return .bool(b) }
        case "int":
            if let i = try integer(text) { return i }
        case "float":
            if let f = try float(text) { return f }
            if let i = try integer(text) {
                switch i {
                case .int(let v): return .double(Double(v))
                default: return i  // beyond Int64: the literal, which JSON keeps exact
                }
            }
        default:
            throw YAMLProblem(message: "unsupported tag \(shown) (only the core schema's !!str, !!int, !!float, !!bool, !!null, !!map and !!seq have a JSON value)")
        }
        throw YAMLProblem(message: "'\(text)' is not a valid \(shown)")
    }

    private static func isNull(_ text: String) -> Bool {
        switch text {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }

    private static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: return nil
        }
    }

    /// The most digits of an octal or hexadecimal integer: converting one to decimal
    /// takes time that grows with the square of its digits.
    static let maxRadixDigits = 1000

    /// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`: `.int`, or beyond 64 bits the
    /// decimal literal as `.number`.
    static func integer(_ text: String) throws(YAMLProblem) -> JSON? {
        let u = Array(text.utf8)
        guard let first = u.first else { return nil }
        if u.count > 2 && first == UInt8(ascii: "0") && (u[1] == UInt8(ascii: "o") || u[1] == UInt8(ascii: "x")) {
            let radix = u[1] == UInt8(ascii: "o") ? 8 : 16
            if u.count - 2 > maxRadixDigits, u[2...].allSatisfy({ digitValue($0).map { $0 < radix } ?? false }) {
                throw YAMLProblem(message: "an integer of \(u.count - 2) \(radix == 8 ? "octal" : "hexadecimal") digits "
                                  + "is longer than \(maxRadixDigits) (quote it to keep it as text)")
            }
            var digits: [Int] = []
            for c in u[2...] {
                guard let d = digitValue(c), d < radix else { return nil }
                digits.append(d)
            }
            return decimalInteger(negative: false, digits: toDecimal(digits, radix: radix))
        }
        let negative = first == UInt8(ascii: "-")
        let body = first == UInt8(ascii: "-") || first == UInt8(ascii: "+") ? u[1...] : u[0...]
        guard !body.isEmpty, body.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return decimalInteger(negative: negative, digits: body.map { Int($0 - UInt8(ascii: "0")) })
    }

    /// The core schema's floats: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`,
    /// as the value JSONParser gives the same number written in JSON. `.inf` and `.nan`
    /// are refused: JSON has no way to write them.
    static func float(_ text: String) throws(YAMLProblem) -> JSON? {
        switch text {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
            throw YAMLProblem(message: "\(text) is a number JSON cannot carry (quote it to keep it as text)")
        default: break
        }
        let u = Array(text.utf8)
        var i = 0
        var negative = false
        if i < u.count && (u[i] == UInt8(ascii: "-") || u[i] == UInt8(ascii: "+")) {
            negative = u[i] == UInt8(ascii: "-")
            i += 1
        }
        func digits() -> [UInt8] {
            let start = i
            while i < u.count && u[i] >= UInt8(ascii: "0") && u[i] <= UInt8(ascii: "9") { i += 1 }
            return Array(u[start..<i])
        }
        var whole = digits()
        var fraction: [UInt8] = []
        var hasDot = false
        if i < u.count && u[i] == UInt8(ascii: ".") {
            hasDot = true
            i += 1
            fraction = digits()
        }
        guard !whole.isEmpty || !fraction.isEmpty else { return nil }
        var exponent: [UInt8] = []
        if i < u.count && (u[i] == UInt8(ascii: "e") || u[i] == UInt8(ascii: "E")) {
            i += 1
            var sign: [UInt8] = []
            if i < u.count && (u[i] == UInt8(ascii: "-") || u[i] == UInt8(ascii: "+")) {
                sign = [u[i]]
                i += 1
            }
            let e = digits()
            guard !e.isEmpty else { return nil }
            exponent = [UInt8(ascii: "e")] + sign + e
        }
        guard i == u.count, hasDot || !exponent.isEmpty else { return nil }
        while whole.count > 1 && whole.first == UInt8(ascii: "0") { whole.removeFirst() }
        if whole.isEmpty { whole = [UInt8(ascii: "0")] }
        if fraction.isEmpty { fraction = [UInt8(ascii: "0")] }
        let literal = (negative ? "-" : "") + String(decoding: whole, as: UTF8.self) + "."
            + String(decoding: fraction, as: UTF8.self) + String(decoding: exponent, as: UTF8.self)
        switch try? JSONParser.parse(literal) {
        case .int(let v)?: return .double(Double(v))
        case .number(let text)?: return JSONParser.exactDouble(text).map(JSON.double) ?? .number(text)
        case let value?: return value
        case nil: throw YAMLProblem(message: "\(text) is beyond the range of a number JSON can carry")
        }
    }

    private static func digitValue(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(c - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(c - UInt8(ascii: "A")) + 10
        default: return nil
        }
    }

    /// The decimal digits (most significant first) of the number whose base-`radix` digits are given.
    private static func toDecimal(_ digits: [Int], radix: Int) -> [Int] {
        var decimal: [Int] = [0]  // least significant first
        for d in digits {
            var carry = d
            for k in decimal.indices {
                let v = decimal[k] * radix + carry
                decimal[k] = v % 10
                carry = v / 10
            }
            while carry > 0 {
                decimal.append(carry % 10)
                carry /= 10
            }
        }
        return decimal.reversed()
    }

    private static func decimalInteger(negative: Bool, digits: [Int]) -> JSON? {
        var digits = digits[...]
        while digits.count > 1 && digits.first == 0 { digits = digits.dropFirst() }
        let literal = (negative ? "-" : "") + digits.map(String.init).joined()
        if let v = Int64(literal) { return .int(v) }
        return JSON.number(exactly: literal)
    }
}
