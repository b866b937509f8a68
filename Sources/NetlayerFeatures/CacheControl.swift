/// The directives of a `Cache-Control` field (RFC 9111 section 5.2), request's or
/// response's: names compared without case, arguments in token or quoted-string form
/// (recipients accept both, section 5.2), commas inside quotes kept
/// (`no-cache="Set-Cookie, X-Id"`). A directive given twice counts as its first
/// occurrence (section 4.2.1 allows that or "stale").
struct CacheControl {
    /// Lower-case names, each with its argument (unquoted), or "" when it has none.
    private var directives: [String: String] = [:]

    /// The largest delta-seconds a cache needs to tell apart: RFC 9111 section 1.2.2
    /// has larger values read as this one.
    static let maxDeltaSeconds: Double = 2_147_483_648

    /// A field's directives; `value` is its lines joined with ", " (nil: none).
    init(_ value: String?) {
        guard let value else { return }
        for member in Self.members(of: value) {
            let (name, argument) = Self.split(member)
            if !name.isEmpty, directives[name] == nil { directives[name] = argument }
        }
    }

    var isEmpty: Bool { directives.isEmpty }

    func has(_ name: String) -> Bool { directives[name] != nil }

    /// The argument of `name` as given ("" when it has none), nil when absent.
    func argument(_ name: String) -> String? { directives[name] }

    /// The argument of `name` as delta-seconds: nil when the directive is absent, 0
    /// when its argument is not a non-negative integer (an invalid `max-age` makes a
    /// response stale, as RFC 9111 section 4.2.1 advises for invalid freshness),
    /// values past 2^31 read as 2^31.
    func seconds(_ name: String) -> Double? {
        guard let argument = directives[name] else { return nil }
        return Self.deltaSeconds(argument) ?? 0
    }

    /// `text` as delta-seconds (RFC 9111 section 1.2.2: one or more digits), or nil.
    static func deltaSeconds(_ text: some StringProtocol) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        var value: Double = 0
        for digit in text.utf8 {
            value = value * 10 + Double(digit - UInt8(ascii: "0"))
            if value >= maxDeltaSeconds { return maxDeltaSeconds }
        }
        return value
    }

    /// The comma-separated members of a list field, commas inside quoted strings kept,
    /// each trimmed of optional whitespace; empty members dropped (RFC 9110 5.6.1).
    static func members(of value: String) -> [Substring] {
        var out: [Substring] = []
        var start = value.startIndex
        var inQuotes = false
        var escaped = false
        var i = value.startIndex
        while i < value.endIndex {
            let c = value[i]
            if escaped {
                escaped = false
            } else if inQuotes && c == "\\" {
                escaped = true
            } else if c == "\"" {
                inQuotes.toggle()
            } else if c == ",", !inQuotes {
                out.append(value[start..<i])
                start = value.index(after: i)
            }
            i = value.index(after: i)
        }
        out.append(value[start...])
        return out.map(trimmed).filter { !$0.isEmpty }
    }

    static func trimmed(_ s: Substring) -> Substring {
        var s = s
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return s
    }

    /// `name=argument`: the name in lower case, the argument without its quotes.
    private static func split(_ member: Substring) -> (String, String) {
        guard let eq = member.firstIndex(of: "=") else { return (trimmed(member).lowercased(), "") }
        let name = trimmed(member[..<eq]).lowercased()
        var argument = trimmed(member[member.index(after: eq)...])
        if argument.count >= 2, argument.first == "\"", argument.last == "\"" {
            argument = argument.dropFirst().dropLast()
            return (name, String(argument).replacingBackslashEscapes())
        }
        return (name, String(argument))
    }
}

extension String {
    /// A quoted-string's content with its quoted-pairs (`\x`) resolved.
    fileprivate func replacingBackslashEscapes() -> String {
        guard contains("\\") else { return self }
        var out = ""
        var escaped = false
        for c in self {
            if !escaped, c == "\\" { escaped = true; continue }
            escaped = false
            out.append(c)
        }
        return out
    }
}
