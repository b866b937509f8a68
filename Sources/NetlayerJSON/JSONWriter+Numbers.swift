/// Numbers as JSON text: integers, the three-decimal timings of result documents, and
/// other doubles; written straight into the writer's buffer.
extension JSONWriter {
    package mutating func write(int: Int64) {
        if int < 0 { append(UInt8(ascii: "-")) }
        write(uint: int.magnitude)
    }

    package mutating func write(uint: UInt64) {
        if uint < 10 {
            reserve(1)
            storage[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: uint)
            count += 1
            return
        }
        // Written backwards straight into the buffer, once the digits are counted.
        var digits = 2
        var rest = uint / 100
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        reserve(digits)
        var out = storage + count + digits
        var magnitude = uint
        repeat {
            out -= 1
            let next = magnitude / 10
            out.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude &- next &* 10)
            magnitude = next
        } while magnitude > 0
        count += digits
    }

    /// `number` in decimal, appended to `out` (a query value), as `String(number)` writes it.
    package static func appendDecimal(_ number: Int64, to out: inout [UInt8]) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        if magnitude < 10 {  // a page number, an index: one append
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch for up to 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var n = 0
            repeat {
                scratch[23 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            } while magnitude > 0
            // Byte by byte: for a few digits, cheaper than the generic append(contentsOf:).
            for i in (24 - n)..<24 { out.append(scratch[i]) }
        }
    }

    /// A non-negative number rounded to three decimals ("12.5", "0.692"): timings,
    /// without the cost of `Double.description`.
    package mutating func write(thousandths value: Double) {
        guard value >= 0, value < 1e12 else { write(double: value); return }  // NaN fails both
        // Rounded half away from zero, as `rounded()` does, without its libm call or a
        // checked conversion: below 2^52, adding 2^52 rounds to an integer (a tie to
        // even), which is then the low bits of the sum. A tie rounded down goes up.
        let scaledValue = value * 1000
        let magic = 4_503_599_627_370_496.0  // 2^52
        let shifted = scaledValue + magic
        var scaled = shifted.bitPattern & 0x000F_FFFF_FFFF_FFFF
        if scaledValue - (shifted - magic) == 0.5 { scaled &+= 1 }
        guard scaled < 10_000 else { return write(thousandths: scaled) }
        // Most timings: one digit and a fraction.
        reserve(5)
        let whole = UInt32(truncatingIfNeeded: scaled) / 1000
        storage[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: whole)
        count &+= 1
        appendFraction(UInt32(truncatingIfNeeded: scaled) &- whole &* 1000)
    }

    /// `scaled` thousandths, from 10 up.
    @inline(never)
    private mutating func write(thousandths scaled: UInt64) {
        let whole = scaled / 1000
        write(uint: whole)
        reserve(4)
        appendFraction(UInt32(truncatingIfNeeded: scaled &- whole &* 1000))
    }

    /// ".d", ".dd" or ".ddd" for a fraction below 1000, trailing zeros left out;
    /// nothing for 0. Room for four bytes has been reserved.
    @inline(__always)
    private mutating func appendFraction(_ fraction: UInt32) {
        guard fraction != 0 else { return }
        let hundreds = fraction / 100, tens = fraction / 10 &- hundreds &* 10
        let ones = fraction &- fraction / 10 &* 10
        let out = storage + count
        out[0] = UInt8(ascii: ".")
        out[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: hundreds)
        out[2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: tens)
        out[3] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: ones)
        count &+= ones != 0 ? 4 : tens != 0 ? 3 : 2
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
}
