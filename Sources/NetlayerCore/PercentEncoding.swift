import NetlayerJSON

/// RFC 3986 percent-encoding for the two places URLs are assembled: path
/// segments and `application/x-www-form-urlencoded`-style key/value pairs.
package enum PercentEncoding {
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Path characters that may stay as they are (RFC 3986 `pchar` plus "/").
    static func isPathByte(_ b: UInt8) -> Bool {
        if isUnreserved(b) { return true }
        switch b {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    private static func isHexDigit(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b)
    }

    /// Encodes everything but unreserved characters: the strict form for query
    /// and form components (a space is "%20", never "+").
    static func encodeComponent(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { encodeComponent($0, into: &out) }
    }

    /// `encodeComponent` of UTF-8 bytes: one table load per byte.
    static func encodeComponent(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let classes = byteClass
        var plain = 0  // bytes from here on need no escape so far
        for i in 0..<bytes.count where classes[Int(bytes[i])] != 0 {
            if i > plain { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plain..<i])) }
            let b = bytes[i]
            out.append(UInt8(ascii: "%"))
            out.append(hexDigits[Int(b >> 4)])
            out.append(hexDigits[Int(b & 0xF)])
            plain = i + 1
        }
        if bytes.count > plain { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plain...])) }
    }

    /// Per byte: 0 unreserved (`isUnreserved`), 1 another `pchar` or "/" (`isPathByte`),
    /// 2 anything else.
    nonisolated(unsafe) private static let byteClass: UnsafePointer<UInt8> = {  // read-only once built
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for i in 0..<256 {
            let b = UInt8(i)
            table[i] = isUnreserved(b) ? 0 : isPathByte(b) ? 1 : 2
        }
        return UnsafePointer(table)
    }()

    nonisolated(unsafe) private static let hexDigits: UnsafePointer<UInt8> = {  // read-only once built
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
        for (i, digit) in "0123456789ABCDEF".utf8.enumerated() { table[i] = digit }
        return UnsafePointer(table)
    }()

    static func encodeComponent(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        encodeComponent(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the encoded path to `out`, keeping "/" and other `pchar`s, and keeping
    /// "%XX" escapes the caller already wrote; "?" and "#" are encoded so a path cannot
    /// smuggle a query.
    static func appendPath(_ s: Substring, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendPath($0, into: &out) }
    }

    /// `appendPath` of bytes in place. Runs of bytes kept as they are go in with one
    /// append each (most paths are one run): this runs for every request.
    static func appendPath(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let classes = byteClass
        var run = 0  // where the bytes not appended yet start
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if classes[Int(b)] < 2
                || (b == UInt8(ascii: "%") && i + 2 < bytes.count && isHexDigit(bytes[i + 1]) && isHexDigit(bytes[i + 2])) {
                i += 1
                continue
            }
            if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i])) }
            out.append(UInt8(ascii: "%"))
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0xF)])
            i += 1
            run = i
        }
        if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
    }

    /// `bytes` with `%XX` escapes decoded (a malformed escape kept as written), and
    /// `+` as a space when `plusIsSpace` (form bodies).
    package static func decoded(_ bytes: some Collection<UInt8>, plusIsSpace: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var rest = Array(bytes)[...]
        while let b = rest.popFirst() {
            if b == UInt8(ascii: "+"), plusIsSpace { out.append(0x20); continue }
            guard b == UInt8(ascii: "%"), rest.count >= 2, let high = hexValue(rest[rest.startIndex]),
                  let low = hexValue(rest[rest.startIndex + 1]) else { out.append(b); continue }
            out.append(high << 4 | low)
            rest = rest.dropFirst(2)
        }
        return out
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
