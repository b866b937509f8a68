import Glibc

extension JSONParser {
    /// A quick check that a JSON text is one `JSONParser` accepts, without building it.
    ///
    /// Result documents carry a response body as their `value`; when the body is valid
    /// JSON it can be copied through instead of parsed into `JSON` and written again,
    /// which is most of the cost of a small response. The check is conservative: it
    /// says `true` only for texts it fully verified (ASCII strings without `\u`
    /// escapes, numbers of at most 15 digits without exponent, no duplicate keys, no
    /// trailing data, nesting within `JSONParser.maxDepth`). Anything else answers
    /// `false`, and the caller parses, which also finds the exact error.
    ///
    /// It runs on every JSON response, so it walks the text with a pointer rather than
    /// bounds-checked indexing, and finds the end of a string eight bytes at a time:
    /// about 14 instructions a byte for a typical small body, half what indexing cost.
    package enum JSONFastCheck {
        package static func isValid(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
            // Keys of the open objects live on the stack (1 KiB, within what Swift puts on
            // the stack rather than the heap); past 128 of them, the parser decides.
            guard buffer.count <= Int(UInt32.max), let base = buffer.baseAddress else { return false }
            return withUnsafeTemporaryAllocation(of: Key.self, capacity: Checker.keyCapacity) { keys in
                let checker = Checker(base: base, end: base + buffer.count, keys: keys.baseAddress!)
                var p = base
                checker.skipWhitespace(&p)
                guard var p = checker.value(p, depth: 0, keyCount: 0) else { return false }
                checker.skipWhitespace(&p)
                return p == checker.end
            }
        }

        /// A key's span in the text; 32-bit offsets keep 128 of them within 1 KiB.
        private struct Key {
            let start: UInt32
            let count: UInt32
        }

        /// The walk: each step takes the position of what it checks and returns the
        /// position after it, or nil when the text is not plainly valid there. Passing the
        /// position (and the number of keys noted) in and out, rather than keeping them in
        /// a mutable struct, keeps them in registers.
        /// A byte with its high bit (0x80) set at the first byte of `word` (in memory
        /// order) that is a quote, a backslash, below 0x20 or from 0x80 up; zero when
        /// there is none. Bytes above that first one may be marked wrongly (a borrow runs
        /// upwards), which the caller never looks at. How the check and `JSONParser` find
        /// a string's end eight bytes at a time.
        @inline(__always)
        static func specialBytes(_ word: UInt64) -> UInt64 {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            func zeroBytes(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
            let control = (word &- ones &* 0x20) & ~word & highs
            return (word & highs) | control | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
        }

        /// Printable ASCII other than a quote and a backslash (0x7F included, as strings
        /// allow it): a string's byte that needs no closer look, one at a time.
        @inline(__always)
        static func isPlain(_ c: UInt8) -> Bool {
            c &- 0x20 < 0x60 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\")
        }

        private struct Checker {
            let base: UnsafePointer<UInt8>
            /// One past the text.
            let end: UnsafePointer<UInt8>
            /// Key spans of the objects being checked, innermost last (duplicate detection).
            let keys: UnsafeMutablePointer<Key>
            /// The room `isValid` allocates for keys.
            static var keyCapacity: Int { 128 }

            @inline(__always)
            func skipWhitespace(_ p: inout UnsafePointer<UInt8>) {
                // One comparison for the usual case, a byte that is not whitespace (all four
                // whitespace bytes are at most 0x20); the loop is out of line.
                if p < end, p.pointee <= 0x20 { p = skipWhitespaceRun(p) }
            }

            /// The next byte that is not whitespace, moving past it; nil at the end.
            @inline(__always)
            func next(_ p: inout UnsafePointer<UInt8>) -> UInt8? {
                guard p < end else { return nil }
                if p.pointee <= 0x20 {
                    p = skipWhitespaceRun(p)
                    guard p < end else { return nil }
                }
                defer { p += 1 }
                return p.pointee
            }

            @inline(never)
            func skipWhitespaceRun(_ p: UnsafePointer<UInt8>) -> UnsafePointer<UInt8> {
                var p = p
                while p < end {
                    switch p.pointee {
                    case 0x20, 0x0A, 0x0D, 0x09: p += 1
                    default: return p
                    }
                }
                return p
            }

            /// - Parameter keyCount: the keys noted for the objects around this value.
            @inline(__always)  // into `object` and `array`: no call for a scalar member
            func value(_ p: UnsafePointer<UInt8>, depth: Int, keyCount: Int) -> UnsafePointer<UInt8>? {
                guard p < end else { return nil }
                let c = p.pointee
                // Strings and numbers, the usual members, before the switch's table.
                if c == UInt8(ascii: "\"") { return string(p, escapes: true) }
                if Self.isDigit(c) || c == UInt8(ascii: "-") { return number(p) }
                switch c {
                case UInt8(ascii: "{"): return depth < JSONParser.maxDepth ? object(p, depth: depth + 1, firstKey: keyCount) : nil
                case UInt8(ascii: "["): return depth < JSONParser.maxDepth ? array(p, depth: depth + 1, keyCount: keyCount) : nil
                case UInt8(ascii: "t"): return literal(p, 0x6575_7274)  // "true", as a little-endian load reads it
                case UInt8(ascii: "f"): return literal(p + 1, 0x6573_6C61)  // "alse" after the f
                case UInt8(ascii: "n"): return literal(p, 0x6C6C_756E)  // "null"
                default: return nil
                }
            }

            /// Past the four bytes at `p` when they are `word`.
            @inline(__always)
            func literal(_ p: UnsafePointer<UInt8>, _ word: UInt32) -> UnsafePointer<UInt8>? {
                guard end - p >= 4,
                      UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)) == word
                else { return nil }
                return p + 4
            }

            /// Past the string whose opening quote is at `p`; nil when it is not plainly
            /// valid, or has an escape and `escapes` is false (a key: compared byte for byte).
            @inline(__always)
            func string(_ p: UnsafePointer<UInt8>, escapes: Bool) -> UnsafePointer<UInt8>? {
                var p = p + 1
                while true {
                    // The first quote, backslash, control character or non-ASCII byte: eight
                    // bytes at a time while eight are left, then one at a time.
                    if end - p >= 8 {
                        let word = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
                        let special = JSONFastCheck.specialBytes(word)
                        if special == 0 { p += 8; continue }
                        p += special.trailingZeroBitCount >> 3
                    } else {
                        while p < end, JSONFastCheck.isPlain(p.pointee) { p += 1 }
                        guard p < end else { return nil }
                    }
                    if p.pointee == UInt8(ascii: "\"") { return p + 1 }
                    guard escapes, p.pointee == UInt8(ascii: "\\"), end - p >= 2 else { return nil }
                    switch p[1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        p += 2
                    default:
                        return nil  // \u escapes (and invalid ones) go to the parser
                    }
                }
            }

            @inline(__always)
            func number(_ p: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
                var p = p
                if p.pointee == UInt8(ascii: "-") { p += 1 }
                guard p < end, Self.isDigit(p.pointee) else { return nil }
                var digits: Int
                if p.pointee == UInt8(ascii: "0") {
                    p += 1
                    digits = 1
                    if p < end, Self.isDigit(p.pointee) { return nil }
                } else {
                    let start = p
                    repeat { p += 1 } while p < end && Self.isDigit(p.pointee)
                    digits = p - start
                }
                if p < end, p.pointee == UInt8(ascii: ".") {
                    p += 1
                    let start = p
                    while p < end, Self.isDigit(p.pointee) { p += 1 }
                    guard p > start else { return nil }
                    digits += p - start
                }
                if p < end, p.pointee | 0x20 == UInt8(ascii: "e") {  // e or E
                    return nil  // range checks are the parser's
                }
                return digits <= 15 ? p : nil
            }

            @inline(never)
            func array(_ p: UnsafePointer<UInt8>, depth: Int, keyCount: Int) -> UnsafePointer<UInt8>? {
                var p = p + 1
                skipWhitespace(&p)
                if p < end, p.pointee == UInt8(ascii: "]") { return p + 1 }
                while true {
                    guard let after = value(p, depth: depth, keyCount: keyCount) else { return nil }
                    p = after
                    guard let c = next(&p) else { return nil }
                    if c != UInt8(ascii: ",") { return c == UInt8(ascii: "]") ? p : nil }
                    skipWhitespace(&p)
                }
            }

            /// - Parameter firstKey: where this object's keys go in `keys`, after those of
            ///   the objects around it.
            @inline(never)
            func object(_ p: UnsafePointer<UInt8>, depth: Int, firstKey: Int) -> UnsafePointer<UInt8>? {
                var p = p + 1
                var keyCount = firstKey
                // At most 64 keys an object, 128 for the open ones together.
                let keyLimit = Swift.min(Self.keyCapacity, firstKey + 64)
                // Bit n set: a key of this object has a length of n modulo 64. A key whose
                // bit is clear needs no comparison.
                var lengths: UInt64 = 0
                skipWhitespace(&p)
                if p < end, p.pointee == UInt8(ascii: "}") { return p + 1 }
                while true {
                    guard p < end, p.pointee == UInt8(ascii: "\""), let afterKey = string(p, escapes: false),
                          keyCount < keyLimit
                    else { return nil }
                    let count = afterKey - 2 - p
                    let bit: UInt64 = 1 << (UInt64(truncatingIfNeeded: count) & 63)
                    if lengths & bit != 0, !isNewKey(p + 1, count, firstKey: firstKey, keyCount: keyCount) { return nil }
                    lengths |= bit
                    keys[keyCount] = Key(start: UInt32(truncatingIfNeeded: p + 1 - base), count: UInt32(truncatingIfNeeded: count))
                    keyCount += 1
                    p = afterKey
                    guard let colon = next(&p), colon == UInt8(ascii: ":") else { return nil }
                    skipWhitespace(&p)
                    guard let after = value(p, depth: depth, keyCount: keyCount) else { return nil }
                    p = after
                    guard let c = next(&p) else { return nil }
                    if c != UInt8(ascii: ",") { return c == UInt8(ascii: "}") ? p : nil }
                    skipWhitespace(&p)
                }
            }

            /// Whether no earlier key of the innermost object has these bytes.
            func isNewKey(_ start: UnsafePointer<UInt8>, _ count: Int, firstKey: Int, keyCount: Int) -> Bool {
                let length = UInt32(truncatingIfNeeded: count)
                for i in firstKey..<keyCount where keys[i].count == length {
                    guard count > 0 else { return false }
                    // The first and last bytes first: most keys of equal length differ there.
                    let earlier = base + Int(keys[i].start)
                    guard earlier[0] == start[0], earlier[count - 1] == start[count - 1] else { continue }
                    if memcmp(earlier, start, count) == 0 { return false }
                }
                return true
            }

            @inline(__always)
            static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }
        }
    }
}
