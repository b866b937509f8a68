import NetlayerJSON

extension HTTPRequest {
    /// Turns a JSON object into key/value pairs for a query string or a form body:
    /// arrays repeat the key, booleans are `true`/`false`, nulls are left out. Any text
    /// is carried: CR, LF and NUL are percent-encoded like every other byte, so a server's
    /// parser decodes exactly the text given.
    package enum QueryEncoding {
        /// The pairs of `object`, or `invalidRequest` naming the key whose value cannot
        /// be a query value. `context` names the document key ("query", "body").
        package static func pairs(from object: JSONObject, context: String) throws(NetworkError) -> [(String, String)] {
            var pairs: [(String, String)] = []
            pairs.reserveCapacity(object.count)
            for member in object {
                switch member.value {
                case .null:
                    continue
                case .array(let elements):
                    for element in elements {
                        pairs.append((member.key, try scalarText(element, context: context, key: member.key)))
                    }
                default:
                    pairs.append((member.key, try scalarText(member.value, context: context, key: member.key)))
                }
            }
            return pairs
        }

        /// `pairs(from:context:)` encoded and appended to `out` in one pass (`a=1&b=x%20y`),
        /// or `invalidRequest` naming the key whose value cannot be a query value.
        static func encode(_ object: JSONObject, context: String, into out: inout [UInt8]) throws(NetworkError) {
            var first = true
            func append(_ key: String, _ value: JSON) throws(NetworkError) {
                if !first { out.append(UInt8(ascii: "&")) }
                first = false
                HTTPRequest.PercentEncoding.append(key, escaping: .component, into: &out)
                out.append(UInt8(ascii: "="))
                switch value {
                case .string(let text): HTTPRequest.PercentEncoding.append(text, escaping: .component, into: &out)
                case .int(let number): JSONWriter.appendDecimal(number, to: &out)  // digits and "-": nothing to encode
                default: HTTPRequest.PercentEncoding.append(try scalarText(value, context: context, key: key), escaping: .component, into: &out)
                }
            }
            for member in object {
                switch member.value {
                case .null:
                    continue
                case .array(let elements):
                    for element in elements { try append(member.key, element) }
                default:
                    try append(member.key, member.value)
                }
            }
        }

        /// `a=1&b=x%20y`, every key and value percent-encoded per RFC 3986.
        package static func encode(_ pairs: [(String, String)]) -> String {
            var out: [UInt8] = []
            encode(pairs, into: &out)
            return String(decoding: out, as: UTF8.self)
        }

        /// Appends the encoded pairs to `out`.
        static func encode(_ pairs: [(String, String)], into out: inout [UInt8]) {
            for (i, (key, value)) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: "&")) }
                HTTPRequest.PercentEncoding.append(key, escaping: .component, into: &out)
                out.append(UInt8(ascii: "="))
                HTTPRequest.PercentEncoding.append(value, escaping: .component, into: &out)
            }
        }

        private static func scalarText(_ value: JSON, context: String, key: String) throws(NetworkError) -> String {
            switch value {
            case .string(let s): return s
            case .bool(let b): return b ? "true" : "false"
            case .int(let i): return String(i)
            case .double:
                return String(decoding: JSONWriter.serialize(value), as: UTF8.self)
            case .number(let literal): return literal
            default:
                throw .invalidRequest("\(context) '\(key.escapedForMessage)' must be a string, number, boolean or an array of them, not \(value.typeName)")
            }
        }
    }
}
