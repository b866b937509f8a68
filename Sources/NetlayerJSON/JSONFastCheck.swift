import Glibc

/// A quick check that a JSON text is one `JSONParser` accepts, without building it.
///
/// Result documents carry a response body as their `value`; when the body is valid
/// JSON it can be copied through instead of parsed into `JSON` and written again,
/// which is most of the cost of a small response. The check is conservative: it
/// says `true` only for texts it fully verified (ASCII strings without `\u`
/// escapes, numbers of at most 15 digits without exponent, no duplicate keys, no
/// trailing data, nesting within `JSONParser.maxDepth`). Anything else answers
/// `false`, and the caller parses, which also finds the exact error.
package enum JSONFastCheck {
    package static func isValid(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        // Keys of the open objects live on the stack (1 KiB, within what Swift puts on
        // the stack rather than the heap); past 128 of them, the parser decides.
        guard buffer.count <= Int(UInt32.max) else { return false }
        return withUnsafeTemporaryAllocation(of: Key.self, capacity: 128) { keys in
            var checker = Checker(buffer: buffer, keys: keys)
            checker.skipWhitespace()
            guard checker.value(depth: 0) else { return false }
            checker.skipWhitespace()
            return checker.index == buffer.count
        }
    }

    /// A key's span in the text; 32-bit offsets keep 128 of them within 1 KiB.
    private struct Key {
        let start: UInt32
        let count: UInt32
    }

    private struct Checker {
        let buffer: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Key spans of the objects being checked, innermost last (duplicate detection).
        let keys: UnsafeMutableBufferPointer<Key>
        var keyCount = 0

        init(buffer: UnsafeBufferPointer<UInt8>, keys: UnsafeMutableBufferPointer<Key>) {
            self.buffer = buffer
            self.keys = keys
        }

        mutating func skipWhitespace() {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> Bool {
            guard index < buffer.count else { return false }
            switch buffer[index] {
            case UInt8(ascii: "{"): return depth < JSONParser.maxDepth && object(depth: depth + 1)
            case UInt8(ascii: "["): return depth < JSONParser.maxDepth && array(depth: depth + 1)
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return false
            }
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= buffer.count else { return false }
            for i in 0..<count where buffer[index + i] != text.utf8Start[i] { return false }
            index += count
            return true
        }

        /// The span of the string's content, or nil when it is not plainly valid.
        mutating func string() -> (start: Int, count: Int, escaped: Bool)? {
            index += 1
            let start = index
            var escaped = false
            // Eight bytes at a time while none is a quote, a backslash, a control
            // character or non-ASCII.
            if let base = buffer.baseAddress {
                let raw = UnsafeRawPointer(base)
                while index + 8 <= buffer.count, Self.isPlainWord(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                    index += 8
                }
            }
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return (start, index - 1 - start, escaped)
                }
                if byte < 0x20 || byte >= 0x80 { return nil }
                if byte == UInt8(ascii: "\\") {
                    guard index + 1 < buffer.count else { return nil }
                    switch buffer[index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        escaped = true
                        index += 2
                        continue
                    default:
                        return nil  // \u escapes (and invalid ones) go to the parser
                    }
                }
                index += 1
            }
            return nil
        }

        mutating func number() -> Bool {
            var digits = 0
            if buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, isDigit(buffer[index]) else { return false }
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
                digits = 1
                if index < buffer.count, isDigit(buffer[index]) { return false }
            } else {
                while index < buffer.count, isDigit(buffer[index]) { index += 1; digits += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                index += 1
                guard index < buffer.count, isDigit(buffer[index]) else { return false }
                while index < buffer.count, isDigit(buffer[index]) { index += 1; digits += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                return false  // range checks are the parser's
            }
            return digits <= 15
        }

        mutating func array(depth: Int) -> Bool {
            index += 1
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "]") { index += 1; return true }
            while true {
                skipWhitespace()
                guard value(depth: depth) else { return false }
                skipWhitespace()
                guard index < buffer.count else { return false }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "]") { index += 1; return true }
                return false
            }
        }

        mutating func object(depth: Int) -> Bool {
            index += 1
            let firstKey = keyCount
            defer { keyCount = firstKey }
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") { index += 1; return true }
            while true {
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: "\""),
                      let key = string(), !key.escaped, isNewKey(key.start, key.count, since: firstKey)
                else { return false }
                keys[keyCount] = Key(start: UInt32(truncatingIfNeeded: key.start), count: UInt32(truncatingIfNeeded: key.count))
                keyCount += 1
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { return false }
                index += 1
                skipWhitespace()
                guard value(depth: depth) else { return false }
                skipWhitespace()
                guard index < buffer.count else { return false }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "}") { index += 1; return true }
                return false
            }
        }

        /// Whether no earlier key of this object has these bytes (and there is room to
        /// note it). Objects with very many keys go to the parser rather than cost
        /// quadratic time here.
        func isNewKey(_ start: Int, _ count: Int, since firstKey: Int) -> Bool {
            guard keyCount < keys.count, keyCount - firstKey < 64 else { return false }
            let base = buffer.baseAddress!
            for i in firstKey..<keyCount where Int(keys[i].count) == count {
                if count == 0 || memcmp(base + Int(keys[i].start), base + start, count) == 0 { return false }
            }
            return true
        }

        /// No byte below 0x20 or from 0x80 up, none equal to `"` or `\\`.
        @inline(__always)
        static func isPlainWord(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
            if word & highs != 0 { return false }
            if (word &- ones &* 0x20) & ~word & highs != 0 { return false }
            return !hasZeroByte(word ^ (ones &* 0x22)) && !hasZeroByte(word ^ (ones &* 0x5C))
        }

        @inline(__always) func isDigit(_ c: UInt8) -> Bool {
            c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
        }
    }
}
