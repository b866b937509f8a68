/// Renders a JSON body as XML elements for `bodyEncoding: xml`: members become
/// elements named after their keys, arrays repeat their element, `null` is an empty
/// element, and text is escaped (`&`, `<`, `>`, quotes).
enum XMLBodyWriter {
    static func render(_ body: JSON, root: String) throws(NetworkError) -> [UInt8] {
        try checkName(root, what: "xmlRoot")
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        try element(root, body, into: &out)
        return Array(out.utf8)
    }

    private static func element(_ name: String, _ value: JSON, into out: inout String) throws(NetworkError) {
        switch value {
        case .null:
            out += "<\(name)/>"
        case .array(let items):
            // A top-level (or nested) array: one <item> per element inside the named element.
            out += "<\(name)>"
            for item in items { try element("item", item, into: &out) }
            out += "</\(name)>"
        case .object(let object):
            out += "<\(name)>"
            for member in object {
                try checkName(member.key, what: "body key")
                if case .array(let items) = member.value {
                    for item in items { try element(member.key, item, into: &out) }
                } else {
                    try element(member.key, member.value, into: &out)
                }
            }
            out += "</\(name)>"
        case .string(let s):
            out += "<\(name)>\(escape(s))</\(name)>"
        case .bool, .int, .double, .number:
            out += "<\(name)>\(String(decoding: JSONWriter.serialize(value), as: UTF8.self))</\(name)>"
        }
    }

    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 cannot carry most control characters, even escaped.
                if c.value < 0x20 && c != "\t" && c != "\n" && c != "\r" { continue }
                out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A conservative XML name: a letter or "_" first, then letters, digits, "-", "_", ".".
    private static func checkName(_ name: String, what: String) throws(NetworkError) {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_",
              !name.lowercased().hasPrefix("xml"),
              name.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) })
        else { throw .invalidRequest("\(what) '\(name.escapedForMessage)' is not a valid XML element name") }
    }
}
