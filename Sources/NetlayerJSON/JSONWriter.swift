import Glibc

/// Writes JSON as compact UTF-8 into a byte buffer; about fifty times cheaper than
/// `JSONSerialization` for the small documents of the C ABI.
///
/// The buffer is its own malloc'ed block rather than an `Array`: appending a short
/// run to an array costs several times the copy itself, and a result document is
/// dozens of short runs.
package struct JSONWriter: ~Copyable {
    /// The buffer and how much of it is written (module-internal: the number writers
    /// of `JSONWriter+Numbers.swift` write into it too).
    var storage: UnsafeMutablePointer<UInt8>
    var count = 0
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
    mutating func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(extra) }
    }

    @inline(never)  // rare: kept out of the inlined appends
    private mutating func grow(_ extra: Int) {
        let newCapacity = Swift.max(capacity * 2, count + extra)
        guard let bigger = realloc(storage, newCapacity) else { fatalError("JSONWriter: out of memory") }
        storage = bigger.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ start: UnsafePointer<UInt8>, _ n: Int) {
        guard n > 0 else { return }
        reserve(n)
        (storage + count).update(from: start, count: n)
        count += n
    }

    mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
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

    /// Appends a literal: a document's fixed parts (`,"status":`), most of them 2 to 32
    /// bytes. Those are copied as two or four overlapping words, without the call to
    /// `memmove` that costs as much again as the rest of this.
    package mutating func raw(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        // Growing is out of line, so that this needs no registers saved.
        guard count &+ n <= capacity else { return rawGrowing(text) }
        let from = UnsafeRawPointer(text.utf8Start), to = UnsafeMutableRawPointer(storage + count)
        func copy<Word>(_: Word.Type, at offset: Int) {
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: offset, as: Word.self), toByteOffset: offset, as: Word.self)
        }
        switch n {
        case 8...16:
            copy(UInt64.self, at: 0)
            copy(UInt64.self, at: n &- 8)
        case 17...32:
            copy(UInt64.self, at: 0)
            copy(UInt64.self, at: 8)
            copy(UInt64.self, at: n &- 16)
            copy(UInt64.self, at: n &- 8)
        case 4...7:
            copy(UInt32.self, at: 0)
            copy(UInt32.self, at: n &- 4)
        case 0...3:
            for i in 0..<n { to.storeBytes(of: from.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self) }
        default:
            to.copyMemory(from: from, byteCount: n)
        }
        count &+= n
    }

    @inline(never)
    private mutating func rawGrowing(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount)
        raw(text)
    }

    /// UTF-8 bytes known to need no escaping when they are a header-name token (RFC
    /// 9110 `tchar`s only); anything else is written as a string.
    package mutating func write(tokenUTF8 utf8: UnsafeBufferPointer<UInt8>) {
        if !writeQuoted(utf8, tokenOnly: true, knownUTF8: false) { write(utf8: utf8) }
    }

    package mutating func write(string: String) {
        // Valid UTF-8 already: the one-pass copy where it is plain ASCII. A native
        // string lends its bytes without the copy (and retain) `withUTF8` needs.
        let written: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in
            if !writeQuoted(utf8, tokenOnly: false, knownUTF8: true) { writeEscaped(utf8) }
        }
        if written == nil {
            var string = string
            string.withUTF8 { utf8 in
                if !writeQuoted(utf8, tokenOnly: false, knownUTF8: true) { writeEscaped(utf8) }
            }
        }
    }

    /// UTF-8 bytes as a string; bytes that are not UTF-8 become U+FFFD, as with
    /// `String(decoding:as:)`.
    package mutating func write(utf8: UnsafeBufferPointer<UInt8>) {
        if !writeQuoted(utf8, tokenOnly: false, knownUTF8: false) { write(string: String(decoding: utf8, as: UTF8.self)) }
    }

    /// The common case in one pass: copies `utf8` between quotes while it is printable
    /// ASCII without `"` or `\` (only `tchar`s with `tokenOnly`). At the first other
    /// byte: with `tokenOnly`, or when that byte is not ASCII, or when bytes not known
    /// to be UTF-8 (`knownUTF8` false) hold a non-ASCII one past it, takes the write
    /// back and returns false; else finishes with `writeEscaped`, which copies non-ASCII
    /// bytes as they are and so must only see UTF-8.
    @inline(__always)
    private mutating func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>, tokenOnly: Bool, knownUTF8: Bool) -> Bool {
        let n = utf8.count
        reserve(n &+ 2)
        let out = storage + count
        out[0] = UInt8(ascii: "\"")
        var i = 0
        if let src = utf8.baseAddress {
            // Each byte is checked and copied in the same pass, with no call to memcpy:
            // eight bytes at a time while none of them needs a look of its own, the
            // last (partial) eight as the eight ending the string, overlapping.
            if n >= 8 {
                let raw = UnsafeRawPointer(src), to = UnsafeMutableRawPointer(out + 1)
                func isPlain(_ word: UInt64) -> Bool { tokenOnly ? Self.lowercasedTokenWord(word) == word : Self.isPlainWord(word) }
                while i &+ 8 <= n {
                    let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    guard isPlain(word) else { break }
                    to.storeBytes(of: word, toByteOffset: i, as: UInt64.self)
                    i &+= 8
                }
                if i &+ 8 > n, i < n {
                    let word = raw.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
                    if isPlain(word) {
                        to.storeBytes(of: word, toByteOffset: n &- 8, as: UInt64.self)
                        i = n
                    }
                }
            }
            let classes = Self.byteClass
            let limit: UInt8 = tokenOnly ? UInt8(ascii: "0") : UInt8(ascii: "1")
            while i < n {
                let c = src[i]
                guard classes[Int(c)] <= limit else { break }
                out[i &+ 1] = c
                i &+= 1
            }
        }
        if i == n {
            out[n &+ 1] = UInt8(ascii: "\"")
            count &+= n &+ 2
            return true
        }
        if tokenOnly || utf8[i] >= 0x80 { return false }
        if !knownUTF8, utf8[i...].contains(where: { $0 >= 0x80 }) { return false }
        writeEscaped(utf8)
        return true
    }

    /// Whether `utf8` may stand between quotes as it is: printable ASCII other than `"`
    /// and `\\` (class 0 or 1 of `byteClass`), eight bytes at a time, the last eight
    /// overlapping ones already checked. (`HTTPResponse.ReceivedHeaders` marks a header field so as
    /// it arrives, for `write(plainMember:value:first:)`.)
    package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        let n = utf8.count, raw = UnsafeRawPointer(base)
        if n >= 8 {
            var i = 0
            while i + 8 <= n {
                guard isPlainWord(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) else { return false }
                i += 8
            }
            return i == n || isPlainWord(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
        }
        let classes = byteClass
        for i in 0..<n where classes[Int(base[i])] > UInt8(ascii: "1") { return false }
        return true
    }

    /// Whether eight bytes are all printable ASCII other than `"` and `\\` (class 0 or
    /// 1 of `byteClass`): none of the bytes `JSONParser.JSONFastCheck.specialBytes` finds (a quote,
    /// a backslash, below 0x20 or from 0x80 up), and no 0x7F (adding 1 reaches its high
    /// bit; with no byte from 0x80 up, that carries into no other).
    @inline(__always)
    private static func isPlainWord(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        return JSONParser.JSONFastCheck.specialBytes(word) | ((word &+ ones) & highs) == 0
    }

    /// Eight bytes lower-cased, when each is an ASCII letter, digit or `-` (what header
    /// names are made of, almost always: all `tchar`s, class 0 of `byteClass`); else
    /// nil. Every byte is below 0x80 once the first test passes, so adding a constant
    /// below 0x80 to each byte carries into no other, and a byte's high bit then says
    /// whether it reached a bound. (`HTTPResponse.ReceivedHeaders` lower-cases names with it; the
    /// writer copies a word of a name as it is when this gives it back unchanged.)
    @inline(__always)
    package static func lowercasedTokenWord(_ word: UInt64) -> UInt64? {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        guard word & highs == 0 else { return nil }
        func atLeast(_ bound: UInt8) -> UInt64 { (word &+ ones &* UInt64(0x80 - bound)) & highs }
        let upper = atLeast(0x41) & ~atLeast(0x5B)  // A-Z
        let lower = atLeast(0x61) & ~atLeast(0x7B)  // a-z
        let digit = atLeast(0x30) & ~atLeast(0x3A)  // 0-9
        let other = word ^ (ones &* 0x2D)  // zero where a byte is "-"
        let hyphen = ~(((other & ~highs) &+ ~highs) | other) & highs
        guard upper | lower | digit | hyphen == highs else { return nil }
        return word | (upper &>> 2)  // 0x80 >> 2 is the case bit, 0x20
    }

    /// Byte classes for `writeQuoted`, one load per byte, as digits: "0" a header-name
    /// `tchar` (`isHTTPTokenByte`), "1" other printable ASCII that needs no escape, "2"
    /// anything else (controls, `"`, `\\`, DEL, non-ASCII). A string literal, 32 bytes
    /// a line, rather than a table built at first use: no lazy initialization to check
    /// on every call. (A test checks it against `isHTTPTokenByte`.)
    package static var byteClass: UnsafePointer<UInt8> {
        let table: StaticString = """
            22222222222222222222222222222222\
            10200000110010010000000000111111\
            10000000000000000000000000012100\
            00000000000000000000000000010102\
            22222222222222222222222222222222\
            22222222222222222222222222222222\
            22222222222222222222222222222222\
            22222222222222222222222222222222
            """
        return table.utf8Start
    }

    /// `"name":"value"`, preceded by a comma unless `first`: one object member whose
    /// name should be a header token and whose value is UTF-8 bytes (the members of a
    /// result document's `headers`). Plain members, the usual case, take one pass.
    /// Returns false, having written nothing, when `value` is not valid UTF-8.
    package mutating func write(member name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                               first: Bool) -> Bool {
        let start = count
        reserve(name.count &+ value.count &+ 6)
        if !first {
            storage[count] = UInt8(ascii: ",")
            count &+= 1
        }
        if writeQuoted(name, tokenOnly: true, knownUTF8: false) {
            storage[count] = UInt8(ascii: ":")  // within the room reserved above
            count &+= 1
            if writeQuoted(value, tokenOnly: false, knownUTF8: false) { return true }
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
    /// `HTTPResponse.ReceivedHeaders` marks a plain field when it arrives): one reservation, two copies.
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
