import Glibc

/// Why a JSON text could not be parsed, with the byte offset where it went wrong.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes: rejects invalid UTF-8, control
/// characters in strings, trailing garbage, duplicate keys and nesting deeper
/// than `maxDepth`, always with the byte offset.
public struct JSONParser {
    public static let maxDepth = 256

    /// Parses one complete JSON text.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSON {
        let result: Result<JSON, JSONParseError> = bytes.withContiguousStorageIfAvailable { buffer in
            parseBuffer(buffer)
        } ?? Array(bytes).withUnsafeBufferPointer { parseBuffer($0) }
        return try result.get()
    }

    /// Parses the JSON text of a string.
    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        var text = text
        let result: Result<JSON, JSONParseError> = text.withUTF8 { parseBuffer($0) }
        return try result.get()
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSON, JSONParseError> {
        var parser = JSONParser(buffer: buffer)
        return parser.parseBuffer()
    }

    private mutating func parseBuffer() -> Result<JSON, JSONParseError> {
        do throws(JSONParseError) {
            skipWhitespace()
            let value = try parseValue(depth: 0)
            skipWhitespace()
            if index != buffer.count {
                throw error("unexpected data after the JSON value")
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private let buffer: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    private func error(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? index, reason: reason)
    }

    private mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        guard index < buffer.count else { throw error("unexpected end of input") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= buffer.count,
              memcmp(buffer.baseAddress! + index, literal.utf8Start, count) == 0
        else { throw error("invalid literal") }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        object.reserveCapacity(4)
        // Keys are looked for member by member in the few most objects have; past
        // that a set of them keeps an object of many members linear to parse.
        var keys: Set<String>?
        while true {
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key")
            }
            let keyOffset = index
            let key = try parseString()
            if keys == nil, object.count >= 16 { keys = Set(object.keys) }
            let duplicate = keys != nil ? !keys!.insert(key).inserted : object[key] != nil
            if duplicate { throw error("duplicate key '\(key)'", at: keyOffset) }
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            object.appendUnchecked(key, try parseValue(depth: depth))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input in an object") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
            throw error("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
        index += 1
        var array: [JSON] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        array.reserveCapacity(4)
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input in an array") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "]") { index += 1; return .array(array) }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        let start = index
        var ascii = true
        // Fast path: no escapes, so the bytes are the string.
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: buffer[start..<index])
                index += 1
                // ASCII needs no validation; decoding it cannot repair anything.
                return ascii ? String(decoding: slice, as: UTF8.self) : try validatedString(slice, offset: start)
            }
            ascii = ascii && byte < 0x80
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            index += 1
        }
        var bytes = [UInt8](UnsafeBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let byte = buffer[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try bytes.withUnsafeBufferPointer { (b) throws(JSONParseError) -> String in
                    try validatedString(b, offset: start)
                }
            case UInt8(ascii: "\\"):
                try parseEscape(into: &bytes)
            case 0..<0x20:
                throw error("control character in a string")
            default:
                bytes.append(byte)
                index += 1
            }
        }
        throw error("unterminated string", at: start - 1)
    }

    private func validatedString(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int) throws(JSONParseError) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        throw error("invalid UTF-8", at: offset + UTF8Validation.firstInvalidOffset(bytes))
    }

    private mutating func parseEscape(into bytes: inout [UInt8]) throws(JSONParseError) {
        index += 1
        guard index < buffer.count else { throw error("unterminated escape") }
        let c = buffer[index]
        index += 1
        switch c {
        case UInt8(ascii: "\""): bytes.append(0x22)
        case UInt8(ascii: "\\"): bytes.append(0x5C)
        case UInt8(ascii: "/"): bytes.append(0x2F)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"),
                      buffer[index + 1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("unpaired surrogate")
            }
            bytes.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
        default:
            throw error("invalid escape", at: index - 1)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= buffer.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = buffer[index]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = index
        var isInteger = true
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number", at: start) }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
            if index < buffer.count, isDigit(buffer[index]) { throw error("leading zero in a number", at: start) }
        } else {
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number", at: start) }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number", at: start) }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if isInteger, index - start <= 18 {  // at most 18 digits: no Int64 overflows
            var value: Int64 = 0
            let negative = buffer[start] == UInt8(ascii: "-")
            for i in (negative ? start + 1 : start)..<index { value = value * 10 + Int64(buffer[i] &- UInt8(ascii: "0")) }
            return .int(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        if isInteger {
            if let i = Int64(text) { return .int(i) }
            return .number(text)
        }
        // A magnitude no Double reaches is refused: no reader of the document could
        // hold it. A decimal of at most 15 significant digits survives a Double both
        // ways; a longer one, or one a Double rounds to zero, keeps its text.
        guard let d = Double(text), d.isFinite else { throw error("number out of range", at: start) }
        if significantDigits(start..<index) <= 15, d != 0 || isZero(start..<index) { return .double(d) }
        return .number(text)
    }

    /// Digits of the mantissa without leading zeros ("0.00120" has 3).
    private func significantDigits(_ range: Range<Int>) -> Int {
        var count = 0
        var leading = true
        for i in range {
            let c = buffer[i]
            if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
            guard isDigit(c) else { continue }
            if leading, c == UInt8(ascii: "0") { continue }
            leading = false
            count += 1
        }
        return count
    }

    /// Whether the mantissa is all zeros (so that 1e-400, which a Double rounds to 0, keeps its text).
    private func isZero(_ range: Range<Int>) -> Bool {
        for i in range {
            let c = buffer[i]
            if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
            if isDigit(c), c != UInt8(ascii: "0") { return false }
        }
        return true
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }
}

/// UTF-8 helpers shared by the parser and the decoders.
package enum UTF8Validation {
    /// The offset of the first byte that makes `bytes` invalid UTF-8 (or `count` if valid).
    package static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var consumed = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                consumed += UTF8.width(scalar)
                offset = consumed
            case .emptyInput:
                return bytes.count
            case .error:
                return offset
            }
        }
    }
}
