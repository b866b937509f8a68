import Glibc

/// Writes JSON as compact UTF-8 into a byte buffer; about fifty times cheaper than
/// `JSONSerialization` for the small documents of the C ABI.
///
/// The buffer is its own malloc'ed block rather than an `Array`: appending a short
/// run to an array costs several times the copy itself, and a result document is
/// dozens of short runs.
package struct JSONWriter: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether an integer outside the signed 64-bit range has been written: a reader
    /// whose parser stops at 64 bits (orjson, jansson) must then parse exactly.
    package private(set) var wroteBigInteger = false

    package init(capacity: Int = 256) {
        self.capacity = Swift.max(16, capacity)
        // malloc, so that `takeCString()` can hand the buffer to C as it is.
        guard let block = malloc(self.capacity) else { fatalError("JSONWriter: out of memory") }
        storage = block.assumingMemoryBound(to: UInt8.self)
    }

    deinit { free(storage) }

    /// What has been written so far.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    /// Calls `body` with what has been written so far, without a copy.
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: storage, count: count))
    }

    /// The text written, NUL-terminated: the writer's own malloc'ed buffer, handed over
    /// without a copy, for the caller to `free` (a document returned across the C ABI).
    package consuming func takeCString() -> UnsafeMutablePointer<CChar> {
        append(0)
        let text = UnsafeMutableRawPointer(storage).assumingMemoryBound(to: CChar.self)
        discard self
        return text
    }

    /// The JSON text of `value`.
    package static func serialize(_ value: JSON) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        let newCapacity = Swift.max(capacity * 2, count + extra)
        guard let bigger = realloc(storage, newCapacity) else { fatalError("JSONWriter: out of memory") }
        storage = bigger.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func append(_ start: UnsafePointer<UInt8>, _ n: Int) {
        guard n > 0 else { return }
        reserve(n)
        (storage + count).update(from: start, count: n)
        count += n
    }

    private mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        if let base = buffer.baseAddress { append(base, buffer.count) }
    }

    package mutating func write(_ value: JSON) {
        switch value {
        case .null: raw("null")
        case .bool(let b): raw(b ? "true" : "false")
        case .int(let i): write(int: i)
        case .double(let d): write(double: d)
        case .number(var text):
            if value.isBigInteger { wroteBigInteger = true }
            text.withUTF8 { append($0) }
        case .string(let s): write(string: s)
        case .array(let a):
            append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                write(element)
            }
            append(UInt8(ascii: "]"))
        case .object(let o):
            append(UInt8(ascii: "{"))
            for (i, member) in o.members.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                write(string: member.key)
                append(UInt8(ascii: ":"))
                write(member.value)
            }
            append(UInt8(ascii: "}"))
        }
    }

    /// Appends JSON text the caller has already validated, such as a response body.
    package mutating func writeRaw(_ json: UnsafeBufferPointer<UInt8>) { append(json) }

    /// Records that text written with `writeRaw` holds an integer beyond 64 bits.
    package mutating func noteBigInteger() { wroteBigInteger = true }

    /// Appends JSON text the caller has already validated.
    package mutating func writeRaw(_ json: [UInt8]) { json.withUnsafeBufferPointer { append($0) } }

    package mutating func raw(_ text: StaticString) {
        append(text.utf8Start, text.utf8CodeUnitCount)
    }

    package mutating func write(int: Int64) {
        if int < 0 { append(UInt8(ascii: "-")) }
        write(uint: int.magnitude)
    }

    package mutating func write(uint: UInt64) {
        if uint < 10 { append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: uint)); return }
        var magnitude = uint
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch for up to 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var n = 0
            while magnitude > 0 {
                scratch[23 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            }
            append(scratch.baseAddress!.assumingMemoryBound(to: UInt8.self) + (24 - n), n)
        }
    }

    /// `number` in decimal, appended to `out` (a query value), as `String(number)` writes it.
    package static func appendDecimal(_ number: Int64, to out: inout [UInt8]) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch for up to 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var n = 0
            repeat {
                scratch[23 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[(24 - n)...]))
        }
    }

    /// A non-negative number rounded to three decimals ("12.5", "0.692"): timings,
    /// without the cost of `Double.description`.
    package mutating func write(thousandths value: Double) {
        guard value >= 0, value < 1e12 else { write(double: value); return }  // NaN fails both
        let scaled = UInt64((value * 1000).rounded())
        let whole = scaled / 1000
        write(uint: whole)
        let fraction = scaled &- whole &* 1000
        guard fraction != 0 else { return }
        // ".d", ".dd" or ".ddd": three digits, trailing zeros left out.
        reserve(4)
        let out = storage + count
        out[0] = UInt8(ascii: ".")
        out[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 100)
        out[2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 10 % 10)
        out[3] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10)
        count += fraction % 10 != 0 ? 4 : fraction % 100 != 0 ? 3 : 2
    }

    package mutating func write(double: Double) {
        guard double.isFinite else { raw("null"); return }
        if double.rounded() == double, abs(double) < 1e15 {
            write(int: Int64(double))
            if double == 0, double.sign == .minus { return }
            return
        }
        var text = double.description
        text.withUTF8 { append($0) }
    }

    /// UTF-8 bytes known to need no escaping when they are a header-name token (RFC
    /// 9110 `tchar`s only); anything else is written as a string.
    package mutating func write(tokenUTF8 utf8: UnsafeBufferPointer<UInt8>) {
        if !writeQuoted(utf8, tokenOnly: true) { write(utf8: utf8) }
    }

    package mutating func write(string: String) {
        var string = string
        string.withUTF8 { utf8 in
            // Valid UTF-8 already: the one-pass copy where it is plain ASCII.
            if !writeQuoted(utf8, tokenOnly: false) { writeEscaped(utf8) }
        }
    }

    /// UTF-8 bytes as a string; bytes that are not UTF-8 become U+FFFD, as with
    /// `String(decoding:as:)`.
    package mutating func write(utf8: UnsafeBufferPointer<UInt8>) {
        if !writeQuoted(utf8, tokenOnly: false) { write(string: String(decoding: utf8, as: UTF8.self)) }
    }

    /// The common case in one pass: copies `utf8` between quotes while it is printable
    /// ASCII without `"` or `\` (only `tchar`s with `tokenOnly`). At the first other
    /// byte: with `tokenOnly`, or when that byte is not ASCII, takes the write back
    /// and returns false; else finishes with `writeEscaped`.
    private mutating func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>, tokenOnly: Bool) -> Bool {
        let n = utf8.count
        reserve(n + 2)
        let out = storage + count
        out[0] = UInt8(ascii: "\"")
        var i = 0
        if let src = utf8.baseAddress {
            (out + 1).update(from: src, count: n)
            if !tokenOnly {
                // Eight bytes at a time while none of them needs a look of its own.
                let raw = UnsafeRawPointer(src)
                while i + 8 <= n, Self.isPlainWord(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
            }
            let classes = Self.byteClass
            let limit: UInt8 = tokenOnly ? 0 : 1
            while i < n, classes[Int(src[i])] <= limit { i += 1 }
        }
        if i == n {
            out[n + 1] = UInt8(ascii: "\"")
            count += n + 2
            return true
        }
        if tokenOnly || utf8[i] >= 0x80 { return false }
        writeEscaped(utf8)
        return true
    }

    /// Whether eight bytes are all printable ASCII other than `"` and `\\` (class 0 or
    /// 1 of `byteClass`), tested together: no byte below 0x20 or from 0x7F up, none
    /// equal to 0x22 or 0x5C.
    @inline(__always)
    private static func isPlainWord(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        if word & highs != 0 { return false }  // a byte from 0x80 up
        if (word &- ones &* 0x20) & ~word & highs != 0 { return false }  // a byte below 0x20
        if (word &+ ones &* 0x01) & highs != 0 { return false }  // 0x7F: adding 1 reaches the high bit
        return !hasZeroByte(word ^ (ones &* 0x22)) && !hasZeroByte(word ^ (ones &* 0x5C))
    }

    /// Byte classes for `writeQuoted`, one load per byte: 0 a header-name `tchar`
    /// (`isHTTPTokenByte`), 1 other printable ASCII that needs no escape, 2
    /// anything else (controls, `"`, `\\`, DEL, non-ASCII).
    nonisolated(unsafe) private static let byteClass: UnsafePointer<UInt8> = {  // read-only once built
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for i in 0..<256 {
            let b = UInt8(i)
            let plain = b >= 0x20 && b < 0x7F && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\")
            table[i] = isHTTPTokenByte(b) ? 0 : plain ? 1 : 2
        }
        return UnsafePointer(table)
    }()

    /// `"name":"value"`, preceded by a comma unless `first`: one object member whose
    /// name should be a header token and whose value is UTF-8 bytes (the members of a
    /// result document's `headers`). Plain members, the usual case, take one pass.
    /// Returns false, having written nothing, when `value` is not valid UTF-8.
    package mutating func write(member name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                               first: Bool) -> Bool {
        let start = count
        reserve(name.count + value.count + 6)
        if !first { append(UInt8(ascii: ",")) }
        if writeQuoted(name, tokenOnly: true) {
            append(UInt8(ascii: ":"))
            if writeQuoted(value, tokenOnly: false) { return true }
        }
        count = start  // not plain: again, escaping as needed
        guard let text = String(validating: value, as: UTF8.self) else { return false }
        if !first { append(UInt8(ascii: ",")) }
        write(tokenUTF8: name)
        append(UInt8(ascii: ":"))
        write(string: text)
        return true
    }

    /// `"name":"value"`, preceded by a comma unless `first`, for a name and value the
    /// caller knows need no escaping (printable ASCII without `"` or `\\`, as
    /// `ReceivedHeaders` marks a plain field when it arrives): one reservation, two copies.
    package mutating func write(plainMember name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                                first: Bool) {
        let n = name.count, v = value.count
        reserve(n + v + 6)
        var out = storage + count
        if !first {
            out[0] = UInt8(ascii: ",")
            out += 1
        }
        out[0] = UInt8(ascii: "\"")
        if let base = name.baseAddress { (out + 1).update(from: base, count: n) }
        out += 1 + n
        out[0] = UInt8(ascii: "\"")
        out[1] = UInt8(ascii: ":")
        out[2] = UInt8(ascii: "\"")
        if let base = value.baseAddress { (out + 3).update(from: base, count: v) }
        out += 3 + v
        out[0] = UInt8(ascii: "\"")
        count = out + 1 - storage
    }

    /// Valid UTF-8 as a quoted, escaped JSON string.
    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        var runStart = 0
        for i in 0..<utf8.count {
            let c = utf8[i]
            guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
            append(UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
            runStart = i + 1
            switch c {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            default:
                raw("\\u00")
                let hex: StaticString = "0123456789abcdef"
                append(hex.utf8Start[Int(c >> 4)])
                append(hex.utf8Start[Int(c & 0xF)])
            }
        }
        append(UnsafeBufferPointer(rebasing: utf8[runStart...]))
        append(UInt8(ascii: "\""))
    }
}
