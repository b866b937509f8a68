import NetlayerJSON

extension HTTPResponse {
    /// A JSON text already known to be valid, kept as bytes: what a response body
    /// decodes to when it only has to be written into another JSON document (the C
    /// ABI's result document), so it is checked instead of parsed and written again.
    ///
    /// `JSONResponseDecoder` produces it: the body itself when it is valid JSON and no
    /// key path applies, else the selected value serialized. Decoding it from any other
    /// `Decoder` accepts only null.
    public struct RawJSON: Sendable, Hashable, Decodable {
        /// The JSON text, UTF-8.
        public let bytes: [UInt8]
        /// Whether the text holds an integer outside the signed 64-bit range.
        public let hasBigIntegers: Bool

        public static let null = RawJSON(checked: Array("null".utf8))

        /// Text `JSONParser.JSONFastCheck` accepted: its numbers have at most 15 digits.
        init(checked bytes: [UInt8]) {
            self.bytes = bytes
            hasBigIntegers = false
        }

        /// The text of `value`.
        public init(_ value: JSON) {
            var writer = JSONWriter()
            writer.write(value)
            bytes = writer.bytes
            hasBigIntegers = writer.wroteBigInteger
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            guard container.decodeNil() else {
                throw DecodingError.typeMismatch(RawJSON.self, .init(codingPath: decoder.codingPath,
                                                                     debugDescription: "RawJSON decodes only from JSONResponseDecoder"))
            }
            self = .null
        }
    }
}

/// `HTTPResponse.RawJSON` by the name it is known by.
public typealias RawJSON = HTTPResponse.RawJSON
