extension JSON {
    /// The size of this value as JSON text, in bytes, as documents are bounded by it:
    /// a string's or a key's UTF-8 bytes plus its two quotes (and a key's colon), a
    /// number's digits (24 for a double), `true`, `false` and `null` as written, a
    /// collection's brackets and one separator per item. Escapes are not counted, so
    /// it is at most what `JSONWriter` writes. A value held in several places (a YAML
    /// alias, or the same `JSON` built into a tree twice) counts each time.
    ///
    /// - Returns: the size, or nil as soon as it passes `limit`: the walk stops
    ///   there, so measuring costs at most `limit` steps, whatever the value holds.
    package func textSize(limit: Int) -> Int? {
        var remaining = limit
        return addTextSize(to: &remaining) ? limit - remaining : nil
    }

    /// The bytes of the value itself, without what it holds: a scalar's text, a
    /// collection's two brackets.
    package var ownTextSize: Int {
        switch self {
        case .null: return 4
        case .bool(let flag): return flag ? 4 : 5
        case .int(let value):
            var digits = value < 0 ? 2 : 1
            var rest = value.magnitude
            while rest >= 10 {
                rest /= 10
                digits += 1
            }
            return digits
        case .double: return 24
        case .number(let text): return text.utf8.count
        case .string(let text): return text.utf8.count + 2
        case .array, .object: return 2
        }
    }

    /// The text size of a member name: its bytes, quotes and colon.
    package static func keyTextSize(_ key: String) -> Int {
        key.utf8.count + 3
    }

    /// Takes this value's size from `remaining`; false once that goes below zero.
    private func addTextSize(to remaining: inout Int) -> Bool {
        remaining -= ownTextSize
        guard remaining >= 0 else { return false }
        switch self {
        case .array(let items):
            for item in items {
                remaining -= 1
                guard item.addTextSize(to: &remaining) else { return false }
            }
        case .object(let object):
            for member in object {
                remaining -= 1 + Self.keyTextSize(member.key)
                guard member.value.addTextSize(to: &remaining) else { return false }
            }
        default:
            break
        }
        return remaining >= 0
    }
}
