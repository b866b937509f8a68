extension JSON {
    /// The size of this value as JSON text, in bytes, as documents are bounded by it:
    /// a string or a key as `JSONWriter` writes it (its UTF-8 bytes, escapes and
    /// quotes, and a key's colon), a number's digits (24 for a double, the most one
    /// takes), `true`, `false` and `null`, a collection's brackets and the commas between
    /// its items. So it is at least what `JSONWriter` writes, compactly, and exactly that
    /// without doubles. A value held in several places (a YAML alias, or the same `JSON`
    /// built into a tree twice) counts each time.
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
        case .string(let text): return Self.quotedTextSize(text)
        case .array, .object: return 2
        }
    }

    /// The text size of a member name: as a string, and its colon.
    package static func keyTextSize(_ key: String) -> Int {
        quotedTextSize(key) + 1
    }

    /// The bytes of `text` as a JSON string: quotes, and escapes as `JSONWriter`
    /// writes them (`\"`, `\\`, `\n` and the like, `\u00XX` for other controls).
    package static func quotedTextSize(_ text: String) -> Int {
        var size = text.utf8.count + 2
        for byte in text.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            switch byte {
            case 0x08, 0x09, 0x0A, 0x0C, 0x0D, UInt8(ascii: "\""), UInt8(ascii: "\\"): size += 1
            default: size += 5
            }
        }
        return size
    }

    /// Takes this value's size from `remaining`; false once that goes below zero.
    private func addTextSize(to remaining: inout Int) -> Bool {
        // A string longer than what is left is too long whatever its escapes: not scanned.
        if case .string(let text) = self, text.utf8.count + 2 > remaining { return false }
        remaining -= ownTextSize
        guard remaining >= 0 else { return false }
        switch self {
        case .array(let items):
            for (index, item) in items.enumerated() {
                if index > 0 { remaining -= 1 }
                guard item.addTextSize(to: &remaining) else { return false }
            }
        case .object(let object):
            for (index, member) in object.enumerated() {
                remaining -= (index > 0 ? 1 : 0) + Self.keyTextSize(member.key)
                guard member.value.addTextSize(to: &remaining) else { return false }
            }
        default:
            break
        }
        return remaining >= 0
    }
}
