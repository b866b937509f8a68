import NetlayerJSON

/// Renders a JSON body as XML elements for `bodyEncoding: xml`: members become
/// elements named after their keys, arrays repeat their element, `null` is an empty
/// element, and text is escaped (`&`, `<`, `>`, quotes, and CR, which a parser would
/// otherwise read as LF). Text XML 1.0 cannot carry even escaped (control characters
/// other than TAB, LF and CR; U+FFFE and U+FFFF) is `invalidRequest` naming the key.
package enum XMLBodyWriter {
    static func render(_ body: JSON, root: String) throws(NetworkError) -> [UInt8] {
        try checkName(root, what: "xmlRoot")
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        try element(root, body, path: "", into: &out)
        return Array(out.utf8)
    }

    /// `path` is the dot-separated key path of `value` in the body ("" for the body itself).
    private static func element(_ name: String, _ value: JSON, path: String, into out: inout String) throws(NetworkError) {
        switch value {
        case .null:
            out += "<\(name)/>"
        case .array(let items):
            // A top-level (or nested) array: one <item> per element inside the named element.
            out += "<\(name)>"
            for (i, item) in items.enumerated() { try element("item", item, path: join(path, String(i)), into: &out) }
            out += "</\(name)>"
        case .object(let object):
            out += "<\(name)>"
            for member in object {
                try checkName(member.key, what: "body key")
                let memberPath = join(path, member.key)
                if case .array(let items) = member.value {
                    for (i, item) in items.enumerated() {
                        try element(member.key, item, path: join(memberPath, String(i)), into: &out)
                    }
                } else {
                    try element(member.key, member.value, path: memberPath, into: &out)
                }
            }
            out += "</\(name)>"
        case .string(let s):
            out += "<\(name)>"
            try escape(s, path: path, into: &out)
            out += "</\(name)>"
        case .bool, .int, .double, .number:
            out += "<\(name)>\(String(decoding: JSONWriter.serialize(value), as: UTF8.self))</\(name)>"
        }
    }

    private static func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    private static func escape(_ s: String, path: String, into out: inout String) throws(NetworkError) {
        out.reserveCapacity(out.utf8.count + s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\r": out += "&#13;"  // a literal CR is end-of-line handling's, read as LF
            default:
                if (c.value < 0x20 && c != "\t" && c != "\n") || c.value == 0xFFFE || c.value == 0xFFFF {
                    let code = String(c.value, radix: 16, uppercase: true).leftPadded(to: 4)
                    let place = path.isEmpty ? "body" : "body key '\(path.escapedForMessage)'"
                    throw .invalidRequest("\(place) holds U+\(code), which XML 1.0 cannot carry even escaped")
                }
                out.unicodeScalars.append(c)
            }
        }
    }

    /// A conservative XML name: a letter or "_" first, then letters, digits, "-", "_", ".".
    private static func checkName(_ name: String, what: String) throws(NetworkError) {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_",
              !name.lowercased().hasPrefix("xml"),
              name.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) })
        else { throw .invalidRequest("\(what) '\(name.escapedForMessage)' is not a valid XML element name") }
    }
}
