import Glibc
import NetlayerJSON

/// Reading the fields a `ReceivedHeaders` holds: as strings, as bytes, one by name;
/// and a copy with one field replaced.
extension HTTPResponse.ReceivedHeaders {
    /// The fields as strings (`HTTPHeaders.text(ofValue:)`), a repeated name's values
    /// joined with ", " (RFC 9110 5.3).
    var fields: [HTTPHeaders.Field] {
        var result: [HTTPHeaders.Field] = []
        result.reserveCapacity(recordCount)
        forEachField { name, value in
            result.append(HTTPHeaders.Field(name: String(decoding: name, as: UTF8.self),
                                            value: HTTPHeaders.text(ofValue: value).text))
        }
        return result
    }

    /// Each field's name and value bytes, in order of first appearance, a repeated
    /// name's values joined with ", " as bytes (so that joining never changes them).
    func forEachField(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        guard hasRepeats else { return forEachRecord(body) }
        var names: [[UInt8]] = []
        var values: [[UInt8]] = []
        var indexOf: [[UInt8]: Int] = [:]
        forEachRecord { name, value in
            let key = Array(name)
            if let i = indexOf[key] {
                values[i] += ", ".utf8
                values[i] += value
            } else {
                indexOf[key] = names.count
                names.append(key)
                values.append(Array(value))
            }
        }
        for (name, value) in zip(names, values) {
            name.withUnsafeBufferPointer { n in value.withUnsafeBufferPointer { v in body(n, v) } }
        }
    }

    /// The value of `name` (any case), repeated values joined.
    package func value(named name: String) -> String? {
        var wanted = name
        return wanted.withUTF8 { wanted -> String? in
            var first: UnsafeBufferPointer<UInt8>?
            var joined: [UInt8]?  // only when the name repeats
            forEachRecord { recordName, value in
                guard recordName.count == wanted.count,
                      zip(recordName, wanted).allSatisfy({ $0 == HTTPResponse.MIMEScan.lowercased($1) })
                else { return }
                if let earlier = first {
                    if joined == nil { joined = Array(earlier) }
                    joined! += ", ".utf8
                    joined! += value
                } else {
                    first = value
                }
            }
            if let joined { return joined.withUnsafeBufferPointer { HTTPHeaders.text(ofValue: $0).text } }
            return first.map { HTTPHeaders.text(ofValue: $0).text }
        }
    }

    /// These fields with those named `name` removed and `value`, when given, in the
    /// place of the first of them (at the end when there was none); the other fields
    /// keep their bytes, a value that is not UTF-8 included. Nil when `name` is not a
    /// lower-case token (a field named otherwise keeps its case as a string) or `value`
    /// holds more than printable ASCII and HTAB, or starts or ends with whitespace: such
    /// a field is the caller's to keep as a string.
    package func replacing(_ name: String, with value: String?) -> HTTPResponse.ReceivedHeaders? {
        guard !name.isEmpty, name.allUTF8({ HTTPHeaders.isTokenByte($0) && !(0x41...0x5A).contains($0) }) else { return nil }
        if let value {
            guard value.allUTF8({ $0 == 0x09 || (0x20...0x7E).contains($0) }),
                  value.utf8.first.map({ $0 != 0x20 && $0 != 0x09 }) ?? true,
                  value.utf8.last.map({ $0 != 0x20 && $0 != 0x09 }) ?? true else { return nil }
        }
        let wanted = name.utf8.map(HTTPResponse.MIMEScan.lowercased)
        var rebuilt = HTTPResponse.ReceivedHeaders()
        var line: [UInt8] = []
        var placed = value == nil
        forEachRecord { recordName, recordValue in
            guard recordName.elementsEqual(wanted) else { return rebuilt.appendField(recordName, recordValue, line: &line) }
            if !placed, let value { rebuilt.appendField(wanted, value.utf8, line: &line) }
            placed = true
        }
        if !placed, let value { rebuilt.appendField(wanted, value.utf8, line: &line) }
        return rebuilt
    }

    /// Appends a field given as its name and value bytes, read as the line
    /// `name: value` libcurl would hand over (one the parser refuses is left out);
    /// `line` is room the caller keeps between calls.
    package mutating func appendField<Name: Sequence, Value: Sequence>(_ name: Name, _ value: Value, line: inout [UInt8])
    where Name.Element == UInt8, Value.Element == UInt8 {
        line.removeAll(keepingCapacity: true)
        line += name
        line += ": ".utf8
        line += value
        line += "\r\n".utf8
        _ = line.withUnsafeBytes { append(line: $0) }
    }
}
