import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// A JSON number as an exact decimal — sign, significant digits and a power of ten —
/// so that schema checks treat `1`, `1.0` and the literal `1.000000000000000000001`
/// by their values, whichever of `.int`, `.double` or `.number` carries them.
package struct SchemaNumber: Comparable, Hashable {
    var negative: Bool
    /// Significant digits (0–9) without leading or trailing zeros; empty for zero.
    var digits: [UInt8]
    /// The value is `digits` read as an integer times 10^exponent.
    var exponent: Int

    /// The number `value` holds, or nil when it is not a number.
    init?(_ value: JSON) {
        switch value {
        case .int(let i): self.init(text: String(i))
        case .double(let d):
            guard d.isFinite else { return nil }
            self.init(text: d.description)
        case .number(let text): self.init(text: text)
        default: return nil
        }
    }

    /// Reads a JSON number literal (also Swift's `1e-05` spelling of doubles).
    init?(text: String) {
        var negative = false
        var digits: [UInt8] = []
        var fractionDigits = 0
        var exponent = 0
        var exponentNegative = false
        var part = 0  // 0 integer, 1 fraction, 2 exponent
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-") where part == 0 && digits.isEmpty: negative = true
            case UInt8(ascii: "-") where part == 2: exponentNegative = true
            case UInt8(ascii: "+") where part == 2: break
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = byte - UInt8(ascii: "0")
                if part == 2 {
                    // An exponent beyond any real document's is clamped, not overflowed.
                    exponent = min(exponent * 10 + Int(digit), 1_000_000_000)
                } else {
                    if part == 1 { fractionDigits += 1 }
                    if !(digits.isEmpty && digit == 0) { digits.append(digit) }
                }
            default: return nil
            }
        }
        var power = (exponentNegative ? -exponent : exponent) - fractionDigits
        while digits.last == 0 {
            digits.removeLast()
            power += 1
        }
        self.negative = negative && !digits.isEmpty
        self.digits = digits
        self.exponent = digits.isEmpty ? 0 : power
    }

    var isZero: Bool { digits.isEmpty }
    var isIntegral: Bool { digits.isEmpty || exponent >= 0 }

    /// The value's integer significand scaled to 10^`power` (`power` ≤ `exponent`), when
    /// it fits in 64 bits.
    func scaled(to power: Int) -> Int64? {
        var result: Int64 = 0
        for digit in digits {
            let (times10, o1) = result.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(digit))
            if o1 || o2 { return nil }
            result = sum
        }
        for _ in 0..<max(0, exponent - power) {
            let (times10, overflow) = result.multipliedReportingOverflow(by: 10)
            if overflow { return nil }
            result = times10
        }
        return result
    }

    /// Whether the value is an integer multiple of `divisor` — exactly when both fit in
    /// 64 bits at a common scale, else within a Double's precision.
    func isMultiple(of divisor: SchemaNumber, approximately: (Double, Double)) -> Bool {
        if divisor.isZero { return true }  // a schema error, not the value's
        if isZero { return true }
        let power = min(exponent, divisor.exponent)
        if let a = scaled(to: power), let b = divisor.scaled(to: power) {
            return a % b == 0
        }
        let quotient = approximately.0 / approximately.1
        guard quotient.isFinite else { return false }
        return abs(quotient - quotient.rounded()) <= 1e-9 * max(1, abs(quotient))
    }

    package static func < (lhs: SchemaNumber, rhs: SchemaNumber) -> Bool {
        if lhs.negative != rhs.negative { return lhs.negative }
        let smallerMagnitude = lhs.magnitudeLess(than: rhs)
        let largerMagnitude = rhs.magnitudeLess(than: lhs)
        return lhs.negative ? largerMagnitude : smallerMagnitude
    }

    private func magnitudeLess(than other: SchemaNumber) -> Bool {
        if digits.isEmpty { return !other.digits.isEmpty }
        if other.digits.isEmpty { return false }
        // The position of the leading digit decides, then the digits themselves.
        let lead = digits.count + exponent, otherLead = other.digits.count + other.exponent
        if lead != otherLead { return lead < otherLead }
        return digits.lexicographicallyPrecedes(other.digits)
    }
}

extension JSON {
    /// Equality as JSON Schema defines it: numbers by value (`1 == 1.0`), strings by
    /// code points (Swift's `==` would equate "é" with "e" + combining accent), objects
    /// regardless of member order, `true` never equal to `1`.
    func schemaEquals(_ other: JSON) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.int(let a), .int(let b)): return a == b
        case (.int, .double), (.int, .number), (.double, .int), (.double, .double), (.double, .number),
            (.number, .int), (.number, .double), (.number, .number):
            return SchemaNumber(self) == SchemaNumber(other)
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.schemaEquals($1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            return a.allSatisfy { member in b[member.key].map { member.value.schemaEquals($0) } ?? false }
        default: return self == other
        }
    }
}

extension JSON {
    /// A hash that agrees with `schemaEquals`: values it calls equal hash alike (numbers
    /// by value, objects whatever their member order), so that `uniqueItems` compares
    /// only the items that share a hash instead of every pair.
    func schemaHash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .int, .double, .number: hasher.combine(SchemaNumber(self))
        case .string(let text): hasher.combine(text)  // Swift's == is looser than code points: same hash
        case .array(let items):
            hasher.combine(items.count)
            for item in items { item.schemaHash(into: &hasher) }
        case .object(let object):
            // Order-independent: the members' own hashes summed.
            var sum = 0
            for member in object {
                var inner = Hasher()
                inner.combine(member.key)
                member.value.schemaHash(into: &inner)
                sum &+= inner.finalize()
            }
            hasher.combine(object.count)
            hasher.combine(sum)
        }
    }
}
