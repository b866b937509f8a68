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
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            return .failure(JSONParseError(offset: 0, reason: "unexpected end of input"))
        }
        var parser = JSONParser(base: base, end: base + buffer.count)
        return parser.parseBuffer()
    }

    private mutating func parseBuffer() -> Result<JSON, JSONParseError> {
        do throws(JSONParseError) {
            skipWhitespace()
            let value = try parseValue(depth: 0)
            skipWhitespace()
            if p != end {
                throw error("unexpected data after the JSON value")
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    // The text is walked with a pointer, `p`, rather than an index into a buffer: no
    // bounds check on every byte. `index` gives the offsets errors report.
    private let base: UnsafePointer<UInt8>
    /// One past the text.
    private let end: UnsafePointer<UInt8>
    /// The next byte to read.
    private var p: UnsafePointer<UInt8>
    private var index: Int { p - base }

    private init(base: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) {
        self.base = base
        self.end = end
        self.p = base
    }

    private func error(_ reason: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? index, reason: reason)
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        // All four whitespace bytes are at most 0x20: one comparison for the usual byte.
        while p < end, p.pointee <= 0x20 {
            switch p.pointee {
            case 0x20, 0x0A, 0x0D, 0x09: p += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSON {
        guard p < end else { throw error("unexpected end of input") }
        switch p.pointee {
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
        guard end - p >= count, memcmp(p, literal.utf8Start, count) == 0 else { throw error("invalid literal") }
        p += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
        p += 1
        skipWhitespace()
        if p < end, p.pointee == UInt8(ascii: "}") {
            p += 1
            return .object(JSONObject())
        }
        var object = JSONObject()
        object.reserveCapacity(4)
        // Keys are looked for member by member in the few most objects have; past
        // that a set of them keeps an object of many members linear to parse.
        var keys: Set<String>?
        while true {
            skipWhitespace()
            guard p < end, p.pointee == UInt8(ascii: "\"") else {
                throw error("expected a string key")
            }
            let keyOffset = index
            let key = try parseString()
            if keys == nil, object.count >= 16 { keys = Set(object.keys) }
            let duplicate = keys != nil ? !keys!.insert(key).inserted : object[key] != nil
            if duplicate { throw error("duplicate key '\(key)'", at: keyOffset) }
            skipWhitespace()
            guard p < end, p.pointee == UInt8(ascii: ":") else { throw error("expected ':'") }
            p += 1
            skipWhitespace()
            object.appendUnchecked(key, try parseValue(depth: depth))
            skipWhitespace()
            guard p < end else { throw error("unexpected end of input in an object") }
            let c = p.pointee
            if c == UInt8(ascii: ",") { p += 1; continue }
            if c == UInt8(ascii: "}") { p += 1; return .object(object) }
            throw error("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSON {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
        p += 1
        skipWhitespace()
        if p < end, p.pointee == UInt8(ascii: "]") {
            p += 1
            return .array([])
        }
        var array: [JSON] = []
        array.reserveCapacity(4)
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard p < end else { throw error("unexpected end of input in an array") }
            let c = p.pointee
            if c == UInt8(ascii: ",") { p += 1; continue }
            if c == UInt8(ascii: "]") { p += 1; return .array(array) }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        let start = p + 1
        var q = start
        // Fast path: eight bytes at a time to the first quote, backslash, control
        // character or non-ASCII byte; when that is the closing quote, the bytes are
        // the string, ASCII, needing no validation.
        while end - q >= 8 {
            let special = JSONFastCheck.specialBytes(UInt64(littleEndian: UnsafeRawPointer(q).loadUnaligned(as: UInt64.self)))
            if special != 0 {
                q += special.trailingZeroBitCount >> 3
                break
            }
            q += 8
        }
        if end - q < 8 {
            while q < end, JSONFastCheck.isPlain(q.pointee) { q += 1 }
        }
        if q < end, q.pointee == UInt8(ascii: "\"") {
            p = q + 1
            return Self.asciiString(start, q - start, base: base, end: end)
        }
        // Anything else, from the byte found on (all before it is plain ASCII).
        var ascii = true
        while q < end {
            let byte = q.pointee
            if byte == UInt8(ascii: "\"") {
                p = q + 1
                let slice = UnsafeBufferPointer(start: start, count: q - start)
                return ascii ? String(decoding: slice, as: UTF8.self) : try validatedString(slice, offset: start - base)
            }
            ascii = ascii && byte < 0x80
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { p = q; throw error("control character in a string") }
            q += 1
        }
        p = q
        var bytes = [UInt8](UnsafeBufferPointer(start: start, count: q - start))
        while p < end {
            let byte = p.pointee
            switch byte {
            case UInt8(ascii: "\""):
                p += 1
                return try bytes.withUnsafeBufferPointer { (b) throws(JSONParseError) -> String in
                    try validatedString(b, offset: start - base)
                }
            case UInt8(ascii: "\\"):
                try parseEscape(into: &bytes)
            case 0..<0x20:
                throw error("control character in a string")
            default:
                bytes.append(byte)
                p += 1
            }
        }
        throw error("unterminated string", at: start - base - 1)
    }

    private func validatedString(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int) throws(JSONParseError) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        throw error("invalid UTF-8", at: offset + UTF8Validation.firstInvalidOffset(bytes))
    }

    private mutating func parseEscape(into bytes: inout [UInt8]) throws(JSONParseError) {
        p += 1
        guard p < end else { throw error("unterminated escape") }
        let c = p.pointee
        p += 1
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
                guard end - p >= 2, p[0] == UInt8(ascii: "\\"), p[1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate") }
                p += 2
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
        guard end - p >= 4 else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = p.pointee
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            p += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = p
        let startOffset = index
        var isInteger = true
        if p.pointee == UInt8(ascii: "-") { p += 1 }
        guard p < end, isDigit(p.pointee) else { throw error("invalid number", at: startOffset) }
        if p.pointee == UInt8(ascii: "0") {
            p += 1
            if p < end, isDigit(p.pointee) { throw error("leading zero in a number", at: startOffset) }
        } else {
            while p < end, isDigit(p.pointee) { p += 1 }
        }
        if p < end, p.pointee == UInt8(ascii: ".") {
            isInteger = false
            p += 1
            guard p < end, isDigit(p.pointee) else { throw error("invalid number", at: startOffset) }
            while p < end, isDigit(p.pointee) { p += 1 }
        }
        if p < end, p.pointee == UInt8(ascii: "e") || p.pointee == UInt8(ascii: "E") {
            isInteger = false
            p += 1
            if p < end, p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-") {
                p += 1
            }
            guard p < end, isDigit(p.pointee) else { throw error("invalid number", at: startOffset) }
            while p < end, isDigit(p.pointee) { p += 1 }
        }
        let literal = UnsafeBufferPointer(start: start, count: p - start)
        // At most 18 digits: no Int64 overflows. `-0` is no Int64 (it would be written
        // `0`): it keeps its text, as numbers do.
        if isInteger, literal.count <= 18, !(literal.count == 2 && start.pointee == UInt8(ascii: "-")
                                               && start[1] == UInt8(ascii: "0")) {
            var value: Int64 = 0
            let negative = start.pointee == UInt8(ascii: "-")
            for c in negative ? literal.dropFirst() : literal[...] { value = value &* 10 &+ Int64(c &- UInt8(ascii: "0")) }
            return .int(negative ? -value : value)
        }
        let text = String(decoding: literal, as: UTF8.self)
        if isInteger {
            if text != "-0", let i = Int64(text) { return .int(i) }
            return .number(text)
        }
        // A magnitude no Double reaches is refused: no reader of the document could
        // hold it. A decimal that a Double holds and that the writer spells as written
        // is a `.double`; any other (`1.50`, `-0.0`, `2e0`, more than 15 significant
        // digits, one a Double rounds to zero) keeps its text, so that it is sent as
        // written.
        guard let d = Double(text), d.isFinite else { throw error("number out of range", at: startOffset) }
        if Self.doubleHolds(literal, d), JSONWriter.serialize(.double(d)).elementsEqual(literal) {
            return .double(d)
        }
        return .number(text)
    }

    /// The Double of decimal literal `text` when it holds the literal's value exactly:
    /// at most 15 significant digits (a Double keeps them both ways) and not rounded to
    /// zero. For readers of other spellings of numbers (YAML) that want the value.
    package static func exactDouble(_ text: String) -> Double? {
        guard let d = Double(text), d.isFinite else { return nil }
        var text = text
        return text.withUTF8 { doubleHolds($0, d) } ? d : nil
    }

    private static func doubleHolds(_ literal: UnsafeBufferPointer<UInt8>, _ d: Double) -> Bool {
        significantDigits(literal) <= 15 && (d != 0 || isZero(literal))
    }

    /// Digits of the mantissa without leading zeros ("0.00120" has 3).
    private static func significantDigits(_ literal: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        var leading = true
        for c in literal {
            if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
            guard c &- UInt8(ascii: "0") < 10 else { continue }
            if leading, c == UInt8(ascii: "0") { continue }
            leading = false
            count += 1
        }
        return count
    }

    /// Whether the mantissa is all zeros (so that 1e-400, which a Double rounds to 0, keeps its text).
    private static func isZero(_ literal: UnsafeBufferPointer<UInt8>) -> Bool {
        for c in literal {
            if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
            if c &- UInt8(ascii: "0") < 10, c != UInt8(ascii: "0") { return false }
        }
        return true
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool {
        c &- UInt8(ascii: "0") < 10
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
