import Glibc

/// A response's header fields as libcurl hands them over, kept as bytes: one buffer
/// holding a record count and a repeats flag (8 bytes), then `[name length][value
/// length][lower-cased name][value]` records (lengths as 32-bit little-endian).
/// Making two strings per field costs more than the rest of the header handling
/// together, and most responses only have their fields copied into a result document;
/// `HTTPHeaders` makes strings when they are asked for. One array keeps `HTTPHeaders`,
/// and every response that carries it, small to copy.
struct ReceivedHeaders: Sendable {
    private var bytes: [UInt8] = []
    private static let prefix = 8

    /// Records in `bytes`.
    private(set) var recordCount: Int {
        get { bytes.isEmpty ? 0 : bytes.withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) } }
        set { setPrefix(UInt32(truncatingIfNeeded: newValue), at: 0) }
    }

    /// Whether a name occurs more than once (its values are joined when read).
    private(set) var hasRepeats: Bool {
        get { bytes.isEmpty ? false : bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self) != 0 } }
        set { setPrefix(newValue ? 1 : 0, at: 4) }
    }

    var isEmpty: Bool { recordCount == 0 }

    /// Fields, counting a repeated name once.
    var count: Int { hasRepeats ? fields.count : recordCount }

    private mutating func setPrefix(_ value: UInt32, at offset: Int) {
        if bytes.isEmpty {
            // Room for a typical response's fields: one allocation.
            bytes = [UInt8](unsafeUninitializedCapacity: 512) { buffer, count in
                buffer.baseAddress!.initialize(repeating: 0, count: Self.prefix)
                count = Self.prefix
            }
        }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value, toByteOffset: offset, as: UInt32.self) }
    }

    /// Takes one header line as libcurl delivers it (with its line end). Returns why
    /// the line breaks HTTP framing where libcurl lets it through (bare LF line ends,
    /// conflicting Content-Length: RFC 9112 2.2, 6.3), else nil. A status line starts
    /// a new response (a redirect, or after 100 Continue): the fields so far are dropped.
    mutating func append(line: UnsafeRawBufferPointer) -> String? {
        let n = line.count
        if n >= 1, line[n - 1] == 0x0A, n < 2 || line[n - 2] != 0x0D {
            return "the response uses bare LF line ends"
        }
        var end = n
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        if end == 0 { return nil }
        if end >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
           line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/") {
            bytes.removeAll(keepingCapacity: true)
            return nil
        }
        guard let base = line.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let found = memchr(base, Int32(UInt8(ascii: ":")), end)
        else { return nil }
        let colon = UnsafeRawPointer(found) - UnsafeRawPointer(base)
        guard colon > 0 else { return nil }
        var valueStart = colon + 1
        while valueStart < end, base[valueStart] == 0x20 || base[valueStart] == 0x09 { valueStart += 1 }
        var valueEnd = end
        while valueEnd > valueStart, base[valueEnd - 1] == 0x20 || base[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        let valueLength = valueEnd - valueStart

        if bytes.isEmpty { recordCount = 0 }
        let recordStart = bytes.count
        var lengths = (UInt32(truncatingIfNeeded: colon).littleEndian, UInt32(truncatingIfNeeded: valueLength).littleEndian)
        withUnsafeBytes(of: &lengths) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: colon))
        bytes.append(contentsOf: UnsafeBufferPointer(start: base + valueStart, count: valueLength))
        var repeated = false
        let violation = bytes.withUnsafeMutableBufferPointer { all -> String? in
            let record = all.baseAddress! + recordStart
            // Header names are ASCII tokens: lower-case the bytes, not Unicode.
            for i in 8..<8 + colon where record[i] >= 0x41 && record[i] <= 0x5A { record[i] |= 0x20 }

            let name = UnsafeBufferPointer(start: record + 8, count: colon)
            var offset = Self.prefix
            while offset < recordStart {
                let earlier = Record(UnsafeBufferPointer(all), at: offset)
                if earlier.name.count == colon, memcmp(earlier.name.baseAddress!, name.baseAddress!, colon) == 0 {
                    repeated = true
                    let value = UnsafeBufferPointer(start: record + 8 + colon, count: valueLength)
                    if name.elementsEqual("content-length".utf8), !earlier.value.elementsEqual(value) {
                        return "the response has conflicting Content-Length headers (\(String(decoding: earlier.value, as: UTF8.self)), \(String(decoding: value, as: UTF8.self)))"
                    }
                    break
                }
                offset = earlier.end
            }
            return nil
        }
        if repeated { hasRepeats = true }
        recordCount += 1
        return violation
    }

    /// The fields as strings, a repeated name's values joined with ", " (RFC 9110 5.3).
    var fields: [HTTPHeaders.Field] {
        var result: [HTTPHeaders.Field] = []
        result.reserveCapacity(recordCount)
        forEachRecord { name, value in
            let name = String(decoding: name, as: UTF8.self)
            let value = String(decoding: value, as: UTF8.self)
            if hasRepeats, let i = result.firstIndex(where: { $0.name == name }) {
                result[i].value += ", " + value
            } else {
                result.append(HTTPHeaders.Field(name: name, value: value))
            }
        }
        return result
    }

    /// The value of `name` (any case), repeated values joined.
    func value(named name: String) -> String? {
        var wanted = name
        return wanted.withUTF8 { wanted -> String? in
            var found: String?
            forEachRecord { recordName, value in
                guard recordName.count == wanted.count,
                      zip(recordName, wanted).allSatisfy({ $0 == ($1 >= 0x41 && $1 <= 0x5A ? $1 | 0x20 : $1) })
                else { return }
                let text = String(decoding: value, as: UTF8.self)
                found = found.map { $0 + ", " + text } ?? text
            }
            return found
        }
    }

    /// Each record's name and value bytes, in order (repeats not joined).
    func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        forEachRecord(body)
    }

    private func forEachRecord(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        bytes.withUnsafeBufferPointer { all in
            var offset = Self.prefix
            while offset < all.count {
                let record = Record(all, at: offset)
                body(record.name, record.value)
                offset = record.end
            }
        }
    }

    private struct Record {
        let name: UnsafeBufferPointer<UInt8>
        let value: UnsafeBufferPointer<UInt8>
        let end: Int

        init(_ all: UnsafeBufferPointer<UInt8>, at offset: Int) {
            func length(at i: Int) -> Int {
                Int(all[i]) | Int(all[i + 1]) << 8 | Int(all[i + 2]) << 16 | Int(all[i + 3]) << 24
            }
            let nameLength = length(at: offset), valueLength = length(at: offset + 4)
            let nameStart = offset + 8
            name = UnsafeBufferPointer(rebasing: all[nameStart..<nameStart + nameLength])
            value = UnsafeBufferPointer(rebasing: all[nameStart + nameLength..<nameStart + nameLength + valueLength])
            end = nameStart + nameLength + valueLength
        }
    }
}
