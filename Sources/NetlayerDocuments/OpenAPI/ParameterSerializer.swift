import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Writes OpenAPI parameter values in their `style`, as the specification's "Style
/// Values" and "Style Examples" describe: scalars as their text, arrays and objects
/// joined, or exploded into one member per item or property.
///
/// Scalars are written as JSON writes them (`.number` literals keep their exact text),
/// strings as they are, and null as an empty value. Arrays and objects nested inside an
/// array or object have no serialization in any style and are refused.
package enum ParameterSerializer {
    /// The text replacing `{name}` in a path: values percent-encoded (RFC 3986 unreserved
    /// characters kept, every other byte of their UTF-8 `%XX`), the style's own delimiters
    /// (`;`, `=`, `.`, `,`) literal. Styles: simple (the default), label, matrix.
    package static func pathText(name: String, value: JSON, style: ParameterStyle, explode: Bool) throws(NetworkError) -> String {
        let shape = try Shape(name: name, value: value)
        let e = { (text: String) in HTTPRequest.PercentEncoding.escaped(text, .component) }
        switch style {
        case .simple:
            return joined(shape.encoded(e), explode: explode, itemSeparator: ",")
        case .label:
            // RFC 6570 `{.x}` joins with commas, `{.x*}` with dots (OpenAPI 3.0.3's table
            // shows dots for both; 3.1 corrected it).
            return "." + joined(shape.encoded(e), explode: explode, itemSeparator: explode ? "." : ",")
        case .matrix:
            let label = e(name)
            func member(_ key: String, _ text: String) -> String { text.isEmpty ? ";\(key)" : ";\(key)=\(text)" }
            switch shape.encoded(e) {
            case .scalar(let text): return member(label, text)
            case .list(let items) where explode:
                return items.isEmpty ? ";\(label)" : items.map { member(label, $0) }.joined()
            case .pairs(let pairs) where explode:
                return pairs.isEmpty ? ";\(label)" : pairs.map { member($0.0, $0.1) }.joined()
            case let other: return member(label, joined(other, explode: false, itemSeparator: ","))
            }
        case .form, .spaceDelimited, .pipeDelimited, .deepObject:
            throw .invalidRequest("parameter '\(name.escapedForMessage)': style '\(style.rawValue)' is not one a path parameter can have (simple, label, matrix)")
        }
    }

    /// The query member of a form parameter not exploded whose value is an array or
    /// an object, written (`color=blue,black,brown`, `color=R,100,G,200`): name and items
    /// percent-encoded, the commas between items not, so that a comma inside an item
    /// (`%2C`) differs from one between items, as the specification's style examples
    /// and RFC 6570 write it. Nil for every other parameter: its pairs come from
    /// `queryPairs`, percent-encoded as they are sent.
    package static func joinedFormMember(name: String, value: JSON, style: ParameterStyle, explode: Bool) throws(NetworkError) -> String? {
        guard style == .form, !explode else { return nil }
        let shape = try Shape(name: name, value: value)
        if case .scalar = shape { return nil }
        let e = { (text: String) in HTTPRequest.PercentEncoding.escaped(text, .component) }
        return e(name) + "=" + joined(shape.encoded(e), explode: false, itemSeparator: ",")
    }

    /// The query pairs, not percent-encoded (the URL builder encodes them): form (the
    /// default), spaceDelimited and pipeDelimited (arrays, and objects not exploded),
    /// deepObject (objects: `("color[R]", "100")`, whatever `explode` says, since the
    /// style has no other form).
    package static func queryPairs(name: String, value: JSON, style: ParameterStyle, explode: Bool) throws(NetworkError) -> [(String, String)] {
        let shape = try Shape(name: name, value: value)
        switch style {
        case .form:
            return formPairs(name: name, shape, explode: explode)
        case .spaceDelimited, .pipeDelimited:
            let separator = style == .spaceDelimited ? " " : "|"
            switch shape {
            case .scalar(let text): return [(name, text)]
            case .list(let items) where explode: return items.map { (name, $0) }
            case .pairs where explode:
                throw .invalidRequest("parameter '\(name.escapedForMessage)': style '\(style.rawValue)' cannot explode an object; set explode to false or use style form or deepObject")
            default: return [(name, joined(shape, explode: false, itemSeparator: separator))]
            }
        case .deepObject:
            switch shape {
            case .pairs(let pairs): return pairs.map { ("\(name)[\($0.0)]", $0.1) }
            case .scalar where value.isNull: return []
            default:
                throw .invalidRequest("parameter '\(name.escapedForMessage)': style deepObject needs an object, not \(value.typeName)")
            }
        case .matrix, .label, .simple:
            throw .invalidRequest("parameter '\(name.escapedForMessage)': style '\(style.rawValue)' is not one a query parameter can have (form, spaceDelimited, pipeDelimited, deepObject)")
        }
    }

    /// A header value (style simple). CR, LF and NUL are refused: they would end the header.
    package static func headerText(name: String, value: JSON, explode: Bool) throws(NetworkError) -> String {
        let text = joined(try Shape(name: name, value: value), explode: explode, itemSeparator: ",")
        try refuseLineBreaks(text, in: name, for: "a header")
        return text
    }

    /// Cookie pairs (style form): an exploded array gives repeated pairs, an exploded
    /// object one pair per property; otherwise one pair, "a,b,c" or "R,100,G,200".
    /// Each value, item and property name is percent-encoded outside RFC 6265's
    /// cookie octets, its commas included, so `;`, `,`, spaces and quotes cannot end the
    /// cookie or split an item; only the commas the style joins with stay literal. A
    /// cookie name must be a token (RFC 9110's, as RFC 6265 asks).
    package static func cookiePairs(name: String, value: JSON, explode: Bool) throws(NetworkError) -> [(String, String)] {
        let shape = try Shape(name: name, value: value)
        let pairs: [(String, String)]
        if explode, case .pairs(let members) = shape {
            pairs = members.map { ($0.0, cookieText($0.1)) }  // each property is a cookie of its own
        } else {
            pairs = formPairs(name: name, shape.encoded(cookieText), explode: explode)
        }
        for (key, _) in pairs where key.isEmpty || !key.utf8.allSatisfy(HTTPHeaders.isTokenByte) {
            throw .invalidRequest("parameter '\(name.escapedForMessage)': cookie name '\(key.escapedForMessage)' is not a token (letters, digits and !#$%&'*+-.^_`|~)")
        }
        return pairs
    }

    /// `text` with every byte outside RFC 6265's cookie-octet (`%` too, which starts
    /// an escape) as %XX: controls, space, `"`, `,`, `;`, `\` and non-ASCII bytes.
    private static func cookieText(_ text: String) -> String {
        HTTPRequest.PercentEncoding.escaped(text, .cookieValue)
    }

    /// The default `explode` for a style: true only for form.
    package static func defaultExplode(for style: ParameterStyle) -> Bool {
        style == .form
    }

    /// Whether `style` is allowed for `location` ("path", "query", "header", "cookie").
    package static func allows(_ style: ParameterStyle, in location: String) -> Bool {
        switch location {
        case "path": return [.simple, .label, .matrix].contains(style)
        case "query": return [.form, .spaceDelimited, .pipeDelimited, .deepObject].contains(style)
        case "header": return style == .simple
        case "cookie": return style == .form
        default: return false
        }
    }

    // MARK: shared pieces

    private static func formPairs(name: String, _ shape: Shape, explode: Bool) -> [(String, String)] {
        switch shape {
        case .scalar(let text): return [(name, text)]
        case .list(let items) where explode: return items.map { (name, $0) }
        case .pairs(let pairs) where explode: return pairs
        default: return [(name, joined(shape, explode: false, itemSeparator: ","))]
        }
    }

    /// An array's items joined by `itemSeparator`; an object's properties as `k=v` joined
    /// by it when exploded, else as `k,v,k,v` with the separator between all of them.
    private static func joined(_ shape: Shape, explode: Bool, itemSeparator: String) -> String {
        switch shape {
        case .scalar(let text): return text
        case .list(let items): return items.joined(separator: itemSeparator)
        case .pairs(let pairs):
            if explode { return pairs.map { "\($0.0)=\($0.1)" }.joined(separator: itemSeparator) }
            return pairs.flatMap { [$0.0, $0.1] }.joined(separator: itemSeparator)
        }
    }

    private static func refuseLineBreaks(_ text: String, in name: String, for what: String) throws(NetworkError) {
        if text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            throw .invalidRequest("parameter '\(name.escapedForMessage)': \(what) cannot contain CR, LF or NUL")
        }
    }
}

/// A parameter value reduced to what styles serialize: one scalar's text, a list of
/// texts, or an object's (name, text) pairs in document order.
private enum Shape {
    case scalar(String)
    case list([String])
    case pairs([(String, String)])

    init(name: String, value: JSON) throws(NetworkError) {
        switch value {
        case .array(let items):
            var texts: [String] = []
            for (index, item) in items.enumerated() {
                texts.append(try Self.text(of: item, name: name, place: "item \(index)"))
            }
            self = .list(texts)
        case .object(let object):
            var pairs: [(String, String)] = []
            for member in object {
                pairs.append((member.key, try Self.text(of: member.value, name: name, place: "property '\(member.key.escapedForMessage)'")))
            }
            self = .pairs(pairs)
        default:
            self = .scalar(try Self.text(of: value, name: name, place: ""))
        }
    }

    func encoded(_ encode: (String) -> String) -> Shape {
        switch self {
        case .scalar(let text): return .scalar(encode(text))
        case .list(let items): return .list(items.map(encode))
        case .pairs(let pairs): return .pairs(pairs.map { (encode($0.0), encode($0.1)) })
        }
    }

    private static func text(of value: JSON, name: String, place: String) throws(NetworkError) -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        case .number(let literal): return literal
        case .double: return String(decoding: JSONWriter.serialize(value), as: UTF8.self)
        case .string(let text): return text
        case .array, .object:
            throw .invalidRequest("parameter '\(name.escapedForMessage)': \(place) is \(value.typeName); no parameter style serializes an array or object nested in another")
        }
    }
}
