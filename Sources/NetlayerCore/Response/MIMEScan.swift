import Glibc

extension HTTPResponse {
    /// The MIME Sniffing standard's "parse a MIME type" and the Fetch standard's "extract a
    /// MIME type", on a header's bytes in place: every response of an `auto` request comes
    /// through here, so nothing is copied unless a quoted value holds a backslash escape.
    /// `MIMEType` builds its values on these.
    enum MIMEScan {
        /// A parameter value: a range of the text; for a quoted string, the range inside
        /// the quotes, whose backslash escapes, when it has any, are resolved as it is read.
        /// (A plain value, so that finding a type copies no array.)
        struct Value {
            let range: Range<Int>
            let escaped: Bool

            func withBytes<R>(in text: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
                guard escaped else { return body(UnsafeBufferPointer(rebasing: text[range])) }
                var unescaped: [UInt8] = []
                var i = range.lowerBound
                while i < range.upperBound {
                    if text[i] == backslash, i + 1 < range.upperBound { i += 1 }
                    unescaped.append(text[i])  // a backslash at the very end stands for itself
                    i += 1
                }
                return unescaped.withUnsafeBufferPointer(body)
            }

            func text(in text: UnsafeBufferPointer<UInt8>) -> String { withBytes(in: text) { MIMEScan.latin1($0) } }
        }

        /// The type and subtype of a parsed MIME type, as ranges of the text (any case).
        struct Essence {
            let type: Range<Int>
            let subtype: Range<Int>
        }

        /// What "extract a MIME type" found: the range of the value that is the MIME type,
        /// its essence, and the charset it has, its own or carried over from an earlier
        /// value of the same essence.
        struct Extracted {
            let range: Range<Int>
            let essence: Essence
            let charset: Value?
        }

        /// "Extract a MIME type" from a `Content-Type` field value (lines joined with ", ").
        static func extract(_ text: UnsafeBufferPointer<UInt8>) -> Extracted? {
            var found: Extracted?
            var charset: Value?
            forEachValue(text) { range in
                var own: Value?
                guard let essence = parse(text, range, parameter: { name, value in
                    if own == nil, equalsIgnoringCase(UnsafeBufferPointer(rebasing: text[name]), "charset") { own = value }
                }) else { return }
                if essence.type.count == 1, essence.subtype.count == 1, text[essence.type.lowerBound] == UInt8(ascii: "*"),
                   text[essence.subtype.lowerBound] == UInt8(ascii: "*") { return }
                if let previous = found?.essence, sameEssence(previous, essence, in: text) {
                    found = Extracted(range: range, essence: essence, charset: own ?? charset)
                } else {
                    charset = own
                    found = Extracted(range: range, essence: essence, charset: own)
                }
            }
            return found
        }

        /// Fetch's "getting, decoding, and splitting": each comma-separated value of `text`
        /// (a comma inside a quoted string is part of its value), tabs and spaces around it
        /// cut off.
        static func forEachValue(_ text: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
            if let base = text.baseAddress, memchr(base, Int32(comma), text.count) == nil,
               memchr(base, Int32(quote), text.count) == nil {
                // One value (nearly every response): no scan for the split.
                var valueStart = 0, valueEnd = text.count
                while valueStart < valueEnd, text[valueStart] == 0x09 || text[valueStart] == 0x20 { valueStart += 1 }
                while valueEnd > valueStart, text[valueEnd - 1] == 0x09 || text[valueEnd - 1] == 0x20 { valueEnd -= 1 }
                return body(valueStart..<valueEnd)
            }
            var position = 0, start = 0
            while true {
                while position < text.count, text[position] != quote, text[position] != comma { position += 1 }
                if position < text.count, text[position] == quote {
                    skipQuotedString(text, &position, end: text.count)
                    if position < text.count { continue }
                }
                var valueStart = start, valueEnd = position
                while valueStart < valueEnd, text[valueStart] == 0x09 || text[valueStart] == 0x20 { valueStart += 1 }
                while valueEnd > valueStart, text[valueEnd - 1] == 0x09 || text[valueEnd - 1] == 0x20 { valueEnd -= 1 }
                body(valueStart..<valueEnd)
                if position >= text.count { return }
                position += 1  // the comma
                start = position
            }
        }

        /// "Parse a MIME type" on `text[range]`: its essence, or nil when it is not one.
        /// `parameter` gets each parameter the standard keeps, in order, repeated names too
        /// (the first of a name is the one that counts).
        static func parse(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                          parameter: (Range<Int>, Value) -> Void) -> Essence? {
            var start = range.lowerBound, end = range.upperBound
            while start < end, isWhitespace(text[start]) { start += 1 }
            while end > start, isWhitespace(text[end - 1]) { end -= 1 }
            var position = start
            while position < end, text[position] != slash { position += 1 }
            let type = start..<position
            guard !type.isEmpty, allTokens(text, type), position < end else { return nil }
            position += 1
            let subtypeStart = position
            while position < end, text[position] != semicolon { position += 1 }
            var subtypeEnd = position
            while subtypeEnd > subtypeStart, isWhitespace(text[subtypeEnd - 1]) { subtypeEnd -= 1 }
            let subtype = subtypeStart..<subtypeEnd
            guard !subtype.isEmpty, allTokens(text, subtype) else { return nil }

            while position < end {
                position += 1  // the semicolon
                while position < end, isWhitespace(text[position]) { position += 1 }
                let nameStart = position
                while position < end, text[position] != semicolon, text[position] != equals { position += 1 }
                let name = nameStart..<position
                if position < end {
                    if text[position] == semicolon { continue }
                    position += 1  // the equals sign
                }
                if position >= end { break }
                let value: Value
                if text[position] == quote {
                    value = quotedStringValue(text, &position, end: end)
                    while position < end, text[position] != semicolon { position += 1 }
                } else {
                    let valueStart = position
                    while position < end, text[position] != semicolon { position += 1 }
                    var valueEnd = position
                    while valueEnd > valueStart, isWhitespace(text[valueEnd - 1]) { valueEnd -= 1 }
                    if valueStart == valueEnd { continue }
                    value = Value(range: valueStart..<valueEnd, escaped: false)
                }
                guard !name.isEmpty, allTokens(text, name),
                      value.withBytes(in: text, { $0.allSatisfy(isQuotedStringToken) }) else { continue }
                parameter(name, value)
            }
            return Essence(type: type, subtype: subtype)
        }

        /// "Collect an HTTP quoted string" with extract-value, from the quote at `position`;
        /// leaves `position` after it (at `end` when it is not closed).
        private static func quotedStringValue(_ text: UnsafeBufferPointer<UInt8>, _ position: inout Int, end: Int) -> Value {
            position += 1
            let innerStart = position
            var escaped = false
            while true {
                while position < end, text[position] != quote, text[position] != backslash { position += 1 }
                if position >= end { return Value(range: innerStart..<end, escaped: escaped) }
                let stop = text[position]
                position += 1
                if stop == quote { return Value(range: innerStart..<(position - 1), escaped: escaped) }
                escaped = true
                if position >= end { return Value(range: innerStart..<end, escaped: true) }
                position += 1
            }
        }

        /// "Collect an HTTP quoted string" without extract-value: only moves past it.
        private static func skipQuotedString(_ text: UnsafeBufferPointer<UInt8>, _ position: inout Int, end: Int) {
            position += 1
            while true {
                while position < end, text[position] != quote, text[position] != backslash { position += 1 }
                if position >= end { return }
                let stop = text[position]
                position += 1
                if stop == quote { return }
                if position >= end { return }
                position += 1
            }
        }

        private static func sameEssence(_ a: Essence, _ b: Essence, in text: UnsafeBufferPointer<UInt8>) -> Bool {
            equalIgnoringCase(text, a.type, b.type) && equalIgnoringCase(text, a.subtype, b.subtype)
        }

        private static func equalIgnoringCase(_ text: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
            a.count == b.count && zip(text[a], text[b]).allSatisfy { lowercased($0) == lowercased($1) }
        }

        /// Whether `bytes`, ASCII case ignored, are `lower` (lower case).
        static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
            bytes.count == lower.utf8CodeUnitCount
                && zip(bytes, UnsafeBufferPointer(start: lower.utf8Start, count: lower.utf8CodeUnitCount))
                    .allSatisfy { lowercased($0) == $1 }
        }

        /// Whether `bytes` end with `lower` (lower case), ASCII case ignored.
        static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
            let n = lower.utf8CodeUnitCount
            return bytes.count >= n && equalsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[(bytes.count - n)...]), lower)
        }

        /// Header bytes as text, one code point per byte (isomorphic decoding).
        static func latin1<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
            var text = ""
            for byte in bytes { text.unicodeScalars.append(Unicode.Scalar(byte)) }
            return text
        }

        /// An ASCII letter in lower case, any other byte as it is: the core's one byte
        /// lower-casing (media types, header and query names).
        static func lowercased(_ b: UInt8) -> UInt8 { b &- 0x41 < 26 ? b | 0x20 : b }

        /// HTTP token code points (RFC 9110 `tchar`).
        static func isToken(_ b: UInt8) -> Bool { b < 0x80 && tokenBits[Int(b >> 6)] & (1 << UInt64(b & 63)) != 0 }

        /// `tchar` as two 64-bit masks (bytes 0-63, 64-127): a lookup, not a switch, per byte.
        private static let tokenBits: [UInt64] = {
            var bits: [UInt64] = [0, 0]
            for b in UInt8(0)..<0x80 {
                let isDigitOrLetter = (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
                if isDigitOrLetter || "!#$%&'*+-.^_`|~".utf8.contains(b) { bits[Int(b >> 6)] |= 1 << UInt64(b & 63) }
            }
            return bits
        }()

        private static func allTokens(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
            let bits = tokenBits
            return bits.withUnsafeBufferPointer { bits in
                text[range].allSatisfy { $0 < 0x80 && bits[Int($0 >> 6)] & (1 << UInt64($0 & 63)) != 0 }
            }
        }

        /// HTTP quoted-string token code points: tab, space to `~`, and 0x80 to 0xFF.
        private static func isQuotedStringToken(_ b: UInt8) -> Bool { b == 0x09 || (b >= 0x20 && b != 0x7F) }

        /// HTTP whitespace: LF, CR, tab, space.
        private static func isWhitespace(_ b: UInt8) -> Bool { b == 0x0A || b == 0x0D || b == 0x09 || b == 0x20 }

        private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), slash = UInt8(ascii: "/")
        private static let semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "="), backslash = UInt8(ascii: "\\")
    }
}
