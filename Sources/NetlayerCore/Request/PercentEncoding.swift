import NetlayerJSON

extension HTTPRequest {
    /// RFC 3986 percent-encoding, one table and one loop for each kind of text a URL or
    /// a cookie is assembled from: paths, query and form components, a query written in a
    /// URL, cookie values.
    package enum PercentEncoding {
        /// Which bytes one kind of URL text escapes as `%XX`.
        package enum Escaped: UInt8 {
            /// Everything but unreserved characters: the strict form for query and form
            /// components (a space is "%20", never "+").
            case component = 1
            /// Everything but RFC 3986 `pchar` and "/"; "%XX" escapes already written stay.
            case path = 2
            /// A query written in a URL, as browsers (the WHATWG URL standard's query set)
            /// and requests encode it: bytes past ASCII, space, `"`, `<` and `>`.
            case writtenQuery = 4
            /// Everything outside RFC 6265's cookie-octet, and `%`, which starts an escape.
            case cookieValue = 8
            /// A query its writer encoded (an endpoint's `encodedQuery`): everything but the
            /// characters RFC 3986 allows in a query (`pchar`, "/" and "?"), so `&`, `=` and
            /// `,` stay as written; "%XX" escapes already written stay.
            case encodedQuery = 16
        }

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

        private static func isCookieOctet(_ b: UInt8) -> Bool {
            b == 0x21 || (0x23...0x2B).contains(b) || (0x2D...0x3A).contains(b) || (0x3C...0x5B).contains(b)
                || (0x5D...0x7E).contains(b)
        }

        private static func isHexDigit(_ b: UInt8) -> Bool {
            (0x30...0x39).contains(b) || (0x41...0x46).contains(b) || (0x61...0x66).contains(b)
        }

        /// Per byte, the `Escaped` kinds (their bits) that escape it: one table load per
        /// byte, whichever the kind.
        nonisolated(unsafe) private static let escapedIn: UnsafePointer<UInt8> = {  // read-only once built
            let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
            for i in 0..<256 {
                let b = UInt8(i)
                var kinds: UInt8 = 0
                if !isUnreserved(b) { kinds |= Escaped.component.rawValue }
                if !isPathByte(b) { kinds |= Escaped.path.rawValue }
                if b >= 0x80 || b == 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "<") || b == UInt8(ascii: ">") {
                    kinds |= Escaped.writtenQuery.rawValue
                }
                if !isCookieOctet(b) || b == UInt8(ascii: "%") { kinds |= Escaped.cookieValue.rawValue }
                if !isPathByte(b) && b != UInt8(ascii: "?") { kinds |= Escaped.encodedQuery.rawValue }
                table[i] = kinds
            }
            return UnsafePointer(table)
        }()

        nonisolated(unsafe) private static let hexDigits: UnsafePointer<UInt8> = {  // read-only once built
            let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
            for (i, digit) in "0123456789ABCDEF".utf8.enumerated() { table[i] = digit }
            return UnsafePointer(table)
        }()

        /// Appends `bytes` to `out` with the bytes `kind` escapes as `%XX`. Runs of bytes
        /// kept as they are go in with one append each (most texts are one run): this runs
        /// for every request.
        package static func append(_ bytes: UnsafeBufferPointer<UInt8>, escaping kind: Escaped, into out: inout [UInt8]) {
            let table = escapedIn
            let mask = kind.rawValue
            let keepsEscapes = kind == .path || kind == .encodedQuery
            var run = 0  // where the bytes not appended yet start
            var i = 0
            while i < bytes.count {
                let b = bytes[i]
                if table[Int(b)] & mask == 0
                    || (keepsEscapes && b == UInt8(ascii: "%") && i + 2 < bytes.count
                        && isHexDigit(bytes[i + 1]) && isHexDigit(bytes[i + 2])) {
                    i += 1
                    continue
                }
                if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i])) }
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(b >> 4)])
                out.append(hexDigits[Int(b & 0xF)])
                i += 1
                run = i
            }
            if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
        }

        /// `append(_:escaping:into:)` of a string's UTF-8.
        package static func append(_ text: String, escaping kind: Escaped, into out: inout [UInt8]) {
            var text = text
            text.withUTF8 { append($0, escaping: kind, into: &out) }
        }

        /// `text` with the bytes `kind` escapes as `%XX`.
        package static func escaped(_ text: String, _ kind: Escaped) -> String {
            var out: [UInt8] = []
            out.reserveCapacity(text.utf8.count)
            append(text, escaping: kind, into: &out)
            return String(decoding: out, as: UTF8.self)
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
}
