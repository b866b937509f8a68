/// A MIME type as the WHATWG MIME Sniffing standard parses one: type, subtype (both
/// lower case) and parameters (names lower case, the first of a repeated name kept,
/// values as given, quoted ones unquoted). `extract(fromContentType:)` reads a
/// response's `Content-Type` lines as the Fetch standard's "extract a MIME type" does.
///
/// Header bytes are code points U+0000 to U+00FF (the Fetch standard's isomorphic
/// decoding): a parameter value may hold bytes from 0x80 up, and its text has them as
/// those code points.
public struct MIMEType: Sendable, Hashable {
    /// One parameter: its name in lower case and its value.
    public struct Parameter: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    /// The type, in lower case (`text` of `text/html`).
    public let type: String
    /// The subtype, in lower case (`html` of `text/html`).
    public let subtype: String
    /// The parameters in the order they came.
    public private(set) var parameters: [Parameter]

    /// `type/subtype`.
    public var essence: String { type + "/" + subtype }

    /// The value of the parameter `name` (lower case), or nil.
    public func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// The MIME type as the standard serializes it: `type/subtype;name=value`, a value
    /// quoted (with `\` before `"` and `\`) when it is empty or not a token.
    public var serialized: String {
        var text = essence
        for parameter in parameters {
            text += ";" + parameter.name + "="
            if !parameter.value.isEmpty, parameter.value.unicodeScalars.allSatisfy({ $0.value < 0x80 && HTTPResponse.MIMEScan.isToken(UInt8($0.value)) }) {
                text += parameter.value
            } else {
                text += "\""
                for scalar in parameter.value.unicodeScalars {
                    if scalar == "\"" || scalar == "\\" { text += "\\" }
                    text.unicodeScalars.append(scalar)
                }
                text += "\""
            }
        }
        return text
    }

    /// Parses one MIME type (the standard's "parse a MIME type"); nil when `bytes`
    /// are not one.
    public init?<Bytes: Collection>(parsing bytes: Bytes) where Bytes.Element == UInt8 {
        let parsed: MIMEType? = Array(bytes).withUnsafeBufferPointer { text in
            Self.make(from: text, range: 0..<text.count)
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The MIME type of a response whose `Content-Type` field value is `value`, its
    /// lines joined with ", " (the Fetch standard's "extract a MIME type"): of the
    /// comma-separated types (commas in quoted strings do not count), the last valid one
    /// other than `*/*`, with the `charset` of an earlier one of the same essence when
    /// it names none itself. Nil when no type is valid.
    public static func extract<Bytes: Collection>(fromContentType value: Bytes) -> MIMEType? where Bytes.Element == UInt8 {
        Array(value).withUnsafeBufferPointer { text -> MIMEType? in
            guard let found = HTTPResponse.MIMEScan.extract(text) else { return nil }
            guard var mimeType = make(from: text, range: found.range) else { return nil }
            if mimeType.parameter("charset") == nil, let carried = found.charset {
                mimeType.parameters.append(Parameter(name: "charset", value: carried.text(in: text)))
            }
            return mimeType
        }
    }

    private init(type: String, subtype: String, parameters: [Parameter]) {
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
    }

    private static func make(from text: UnsafeBufferPointer<UInt8>, range: Range<Int>) -> MIMEType? {
        var parameters: [Parameter] = []
        let parsed = HTTPResponse.MIMEScan.parse(text, range) { name, value in
            let name = HTTPResponse.MIMEScan.latin1(text[name]).lowercased()
            if !parameters.contains(where: { $0.name == name }) {
                parameters.append(Parameter(name: name, value: value.text(in: text)))
            }
        }
        guard let parsed else { return nil }
        return MIMEType(type: HTTPResponse.MIMEScan.latin1(text[parsed.type]).lowercased(),
                        subtype: HTTPResponse.MIMEScan.latin1(text[parsed.subtype]).lowercased(), parameters: parameters)
    }
}
