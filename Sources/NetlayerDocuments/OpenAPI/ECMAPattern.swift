import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Rewrites a JSON Schema `pattern` (ECMA-262 syntax, with the `u` flag's code-point
/// matching) into RE2's syntax, where the two differ: `\uXXXX` and `\u{...}` escapes,
/// `\cX`, `\0`, `\s`/`\S` (Unicode white space in ECMA-262, ASCII in RE2), `.` (which
/// excludes CR, U+2028 and U+2029 as well as LF), `[^]` and `[]`, a `[` inside a class
/// (literal in ECMA-262, the start of a POSIX class in RE2), `[\b]` (backspace),
/// identity escapes of letters, and named groups `(?<name>`.
///
/// What needs backtracking — lookahead, lookbehind, backreferences — RE2 does not
/// have: the rewrite is nil, and the pattern cannot be checked (`SchemaPattern`).
package enum ECMAPattern {
    /// ECMA-262's white space and line terminators (its `\s`), as the inside of a class.
    static let whiteSpaceClass =
        #"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"#

    /// Every code point but those of `whiteSpaceClass`, as the inside of a class: ECMA-262's
    /// `\S` where RE2 has no negated set (inside a class).
    static let nonWhiteSpaceClass =
        #"\x{0}-\x{8}\x{E}-\x{1F}\x{21}-\x{9F}\x{A1}-\x{167F}\x{1681}-\x{1FFF}\x{200B}-\x{2027}"#
        + #"\x{202A}-\x{202E}\x{2030}-\x{205E}\x{2060}-\x{2FFF}\x{3001}-\x{FEFE}\x{FF00}-\x{10FFFF}"#

    /// The long names of Unicode general categories, which RE2 knows by their short ones.
    static let categoryAliases: [String: String] = [
        "Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
        "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
        "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
        "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
        "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
        "Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm",
        "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z",
        "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc",
        "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co",
    ]

    /// `pattern` in RE2's syntax, or nil when it uses what RE2 cannot match.
    static func re2Syntax(_ pattern: String) -> String? {
        var scanner = Scanner(Array(pattern.unicodeScalars))
        var out = ""
        var inClass = false
        while let c = scanner.next() {
            switch c {
            case "\\":
                guard let escaped = escape(&scanner, inClass: inClass) else { return nil }
                out += escaped
            case "[" where inClass:
                out += #"\["#
            case "[":
                if scanner.peek() == "]" {  // `[]` matches nothing
                    scanner.skip(1)
                    out += #"[^\x{0}-\x{10FFFF}]"#
                } else if scanner.peek() == "^", scanner.peek(1) == "]" {  // `[^]` matches anything
                    scanner.skip(2)
                    out += #"[\x{0}-\x{10FFFF}]"#
                } else {
                    inClass = true
                    out += "["
                    if scanner.peek() == "^" {
                        scanner.skip(1)
                        out += "^"
                    }
                    // A `]` right after `[` or `[^` is a member in RE2 but closes the class in
                    // ECMA-262; both cases were handled above.
                }
            case "]" where inClass:
                inClass = false
                out += "]"
            case "." where !inClass:
                out += #"[^\n\r\x{2028}\x{2029}]"#
            case "(" where !inClass && scanner.peek() == "?":
                switch (scanner.peek(1), scanner.peek(2)) {
                case ("=", _), ("!", _), ("<", "="), ("<", "!"):
                    return nil  // lookaround
                case ("<", _):
                    scanner.skip(2)
                    out += "(?P<"
                default:
                    out += "("
                }
            default:
                out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// The RE2 text for the escape after a backslash; nil for a backreference or what
    /// RE2 cannot express (a lone surrogate).
    private static func escape(_ scanner: inout Scanner, inClass: Bool) -> String? {
        guard let c = scanner.next() else { return nil }  // a trailing backslash
        switch c {
        case "d", "D", "w", "W", "t", "n", "r", "f", "v":
            return "\\" + String(c)
        case "b", "B":
            if inClass { return c == "b" ? #"\x{8}"# : nil }
            return "\\" + String(c)
        case "s":
            return inClass ? whiteSpaceClass : "[\(whiteSpaceClass)]"
        case "S":
            // A negated set cannot sit inside a class in RE2: there its ranges stand in.
            return inClass ? nonWhiteSpaceClass : "[^\(whiteSpaceClass)]"
        case "p", "P":
            // Unicode properties: RE2 knows the general categories and scripts by their short names.
            guard scanner.peek() == "{" else { return "\\" + String(c) }
            var name = ""
            scanner.skip(1)
            while let n = scanner.next(), n != "}" { name.unicodeScalars.append(n) }
            // ECMA-262's `Script=Greek` and `General_Category=Letter` are RE2's `Greek` and `L`.
            for prefix in ["Script=", "sc=", "General_Category=", "gc="] where name.hasPrefix(prefix) {
                name.removeFirst(prefix.count)
            }
            return "\\\(c){\(categoryAliases[name] ?? name)}"
        case "u":
            guard let value = unicodeEscape(&scanner) else { return nil }
            return literal(value)
        case "x":
            guard let high = scanner.peek().flatMap(hexValue), let low = scanner.peek(1).flatMap(hexValue) else { return "x" }
            scanner.skip(2)
            return literal(high << 4 | low)
        case "c":
            guard let letter = scanner.peek(), ("a"..."z").contains(letter) || ("A"..."Z").contains(letter) else {
                return #"\\c"#  // Annex B: a backslash and a c
            }
            scanner.skip(1)
            return literal(letter.value % 32)
        case "0" where !(scanner.peek().map { ("0"..."9").contains($0) } ?? false):
            return literal(0)
        case "1"..."9", "k":
            return nil  // a backreference
        default:
            if c.properties.isAlphabetic || ("0"..."9").contains(c) {
                var text = ""
                text.unicodeScalars.append(c)
                return literalText(text)  // an identity escape: the letter itself
            }
            return literal(c.value)
        }
    }

    /// The code point of `\uXXXX` (a surrogate pair of two such escapes combined) or
    /// `\u{X...}`; nil for a lone surrogate, which UTF-8 text cannot hold.
    private static func unicodeEscape(_ scanner: inout Scanner) -> UInt32? {
        if scanner.peek() == "{" {
            scanner.skip(1)
            var value: UInt32 = 0
            while let d = scanner.next() {
                if d == "}" { return value <= 0x10FFFF ? value : nil }
                guard let digit = hexValue(d), value < 0x110000 else { return nil }
                value = value << 4 | digit
            }
            return nil
        }
        guard let first = fourHex(&scanner, at: 0) else { return nil }
        scanner.skip(4)
        guard (0xD800...0xDFFF).contains(first) else { return first }
        guard first < 0xDC00, scanner.peek() == "\\", scanner.peek(1) == "u",
              let second = fourHex(&scanner, at: 2), (0xDC00...0xDFFF).contains(second)
        else { return nil }
        scanner.skip(6)
        return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
    }

    private static func fourHex(_ scanner: inout Scanner, at offset: Int) -> UInt32? {
        var value: UInt32 = 0
        for i in 0..<4 {
            guard let digit = scanner.peek(offset + i).flatMap(hexValue) else { return nil }
            value = value << 4 | digit
        }
        return value
    }

    private static func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": return c.value - 0x30
        case "a"..."f": return c.value - 0x61 + 10
        case "A"..."F": return c.value - 0x41 + 10
        default: return nil
        }
    }

    /// The code point `value` as an RE2 escape, which means it literally anywhere.
    private static func literal(_ value: UInt32) -> String {
        "\\x{\(String(value, radix: 16, uppercase: true))}"
    }

    private static func literalText(_ text: String) -> String {
        text.unicodeScalars.map { literal($0.value) }.joined()
    }

    /// Reads a pattern's code points with look-ahead.
    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        mutating func next() -> Unicode.Scalar? {
            guard index < scalars.count else { return nil }
            defer { index += 1 }
            return scalars[index]
        }

        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        mutating func skip(_ count: Int) { index = min(scalars.count, index + count) }
    }
}
