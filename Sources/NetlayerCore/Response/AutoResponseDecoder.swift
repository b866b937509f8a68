import Glibc
import NetlayerJSON

extension HTTPResponse {
    /// The decoder that follows the response: JSON for `application/json` and `+json`
    /// types, text for `text/*` and other textual types, base64 for the rest (contract
    /// section 8). The default of endpoint documents; an explicit decoder wins.
    ///
    /// A decoder only sees the body, so the choice is made where the response is at
    /// hand: `decoder(for:)` picks the concrete decoder from `Content-Type`.
    public struct AutoResponseDecoder: ResponseDecoder {
        /// What `decoder(for:)` chose; its raw value is the decoder's document name.
        public enum Choice: String, Sendable {
            case json, text, base64, none
        }

        public init() {}

        public var requiresBody: Bool { false }

        /// The choice for a response with this `Content-Type` and body.
        ///
        /// The MIME type is the Fetch standard's (`MIMEType.extract(fromContentType:)`: of
        /// repeated or comma-separated types, the last valid one). JSON for
        /// `application/json` and any `+json` type; text for `text/*`, the `+xml` types,
        /// the textual `application/` types of `textualApplicationTypes`, and any type that
        /// names a `charset`; base64 for the rest. A body that is empty is `none` (null)
        /// unless it was declared JSON, where an empty body is `no_response`; a textual
        /// body that does not decode in its charset (UTF-8 when it names none the Encoding
        /// Standard knows) is base64, not a failure.
        public static func choice(contentType: String?, body: [UInt8]) -> Choice {
            reading(contentType: contentType, body: body).choice
        }

        /// What the decoder makes of a body: the choice, and for a textual body whose
        /// `Content-Type` names a charset the Encoding Standard knows, that encoding (the
        /// text is decoded from it; a body that is not valid in it is base64).
        public struct Reading: Sendable {
            public var choice: Choice
            public var charset: TextEncoding?
        }

        /// `choice(contentType:body:)`, with the charset.
        public static func reading(contentType: String?, body: [UInt8]) -> Reading {
            guard var contentType else { return Reading(choice: body.isEmpty ? .none : .base64, charset: nil) }
            return contentType.withUTF8 { reading(contentType: $0, body: body) }
        }

        /// `reading(contentType:body:)` on the header's bytes: no string is made for a
        /// type without a charset, since every response of an `auto` request comes through here.
        static func reading(contentType: UnsafeBufferPointer<UInt8>, body: [UInt8]) -> Reading {
            // The type most API responses carry, as servers write it: what extraction finds
            // for it, without extracting.
            if contentType.count == 16, memcmp(contentType.baseAddress!, "application/json", 16) == 0 {
                return Reading(choice: .json, charset: nil)
            }
            guard let media = HTTPResponse.MIMEScan.extract(contentType) else {
                return Reading(choice: body.isEmpty ? .none : .base64, charset: nil)
            }
            let type = UnsafeBufferPointer(rebasing: contentType[media.essence.type])
            let subtype = UnsafeBufferPointer(rebasing: contentType[media.essence.subtype])
            let isJSON = (HTTPResponse.MIMEScan.equalsIgnoringCase(type, "application") && HTTPResponse.MIMEScan.equalsIgnoringCase(subtype, "json"))
                || HTTPResponse.MIMEScan.hasSuffix(subtype, "+json")
            if isJSON { return Reading(choice: .json, charset: nil) }
            if body.isEmpty { return Reading(choice: .none, charset: nil) }
            guard media.charset != nil || isTextual(type: type, subtype: subtype) else {
                return Reading(choice: .base64, charset: nil)
            }
            // A byte order mark names the encoding over any label (the Encoding Standard's "decode").
            let labelled = media.charset?.withBytes(in: contentType) { TextEncoding.find(label: $0) }
            let charset = TextEncoding.byteOrderMark(of: body).map { $0 == .utf8 && labelled == nil ? nil : $0 } ?? labelled
            let decodes = (charset ?? .utf8).decodeBody(body) != nil
            return Reading(choice: decodes ? .text : .base64, charset: charset)
        }

        /// The charset a `Content-Type` value names, if the Encoding Standard knows it: for
        /// text that arrives in pieces (a `lines` stream), where no body is there to look at.
        package static func charset(ofContentType contentType: String?) -> TextEncoding? {
            guard var contentType else { return nil }
            return contentType.withUTF8 { bytes in
                HTTPResponse.MIMEScan.extract(bytes)?.charset?.withBytes(in: bytes) { TextEncoding.find(label: $0) }
            }
        }

        private static func isTextual(type: UnsafeBufferPointer<UInt8>, subtype: UnsafeBufferPointer<UInt8>) -> Bool {
            if HTTPResponse.MIMEScan.equalsIgnoringCase(type, "text") || HTTPResponse.MIMEScan.hasSuffix(subtype, "+xml") { return true }
            guard HTTPResponse.MIMEScan.equalsIgnoringCase(type, "application") else { return false }
            return textualApplicationTypes.contains(String(decoding: subtype.map(HTTPResponse.MIMEScan.lowercased), as: UTF8.self))
        }

        /// The choice for `response`; nil when its body is not in memory (written to a
        /// file, or streamed), where no decoder reads it.
        public static func choice(for response: HTTPResponse) -> Choice? {
            reading(for: response)?.choice
        }

        /// `choice(for:)`, with the charset. Repeated `Content-Type` lines count as the
        /// Fetch standard counts them: joined with ", ", as `headers` has them.
        public static func reading(for response: HTTPResponse) -> Reading? {
            guard response.downloadedFile == nil, response.streamEvents == nil else { return nil }
            var found: Reading?
            response.headers.withEachFieldUTF8 { name, value in
                if found == nil, name.count == 12, HTTPResponse.MIMEScan.equalsIgnoringCase(name, "content-type") {
                    found = reading(contentType: value, body: response.body)
                }
            }
            return found ?? Reading(choice: response.body.isEmpty ? .none : .base64, charset: nil)
        }

        /// `decoder` itself, or for one that follows the `Content-Type` (this one, an
        /// OpenAPI operation's) the one it becomes for `response`.
        public static func resolve(_ decoder: any ResponseDecoder, for response: HTTPResponse) -> any ResponseDecoder {
            guard decoder.followsContentType, let reading = reading(for: response) else { return decoder }
            return decoder.resolved(for: reading.choice, charset: reading.charset)
        }

        public var followsContentType: Bool { true }

        public func resolved(for choice: Choice) -> any ResponseDecoder { Self.decoder(for: choice) }

        public func resolved(for choice: Choice, charset: TextEncoding?) -> any ResponseDecoder {
            Self.decoder(for: choice, charset: charset)
        }

        /// The decoder for `choice`; text is decoded from `charset` when given.
        public static func decoder(for choice: Choice, charset: TextEncoding? = nil) -> any ResponseDecoder {
            switch choice {
            case .json: return plainJSON
            case .text: return StringResponseDecoder(encoding: charset ?? .utf8)
            case .base64: return Base64ResponseDecoder()
            case .none: return EmptyResponseDecoder()
            }
        }

        /// One shared: a `JSONResponseDecoder` is too large to sit inside an `any
        /// ResponseDecoder`, so each new one would be a heap box; a shared box is retained.
        private static let plainJSON: any ResponseDecoder = JSONResponseDecoder()

        /// Without a response at hand: JSON when the body parses as JSON, else text when
        /// it is UTF-8, else base64.
        public func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
            if data.isEmpty { return try decodeEmpty() }
            if (try? JSONParser.parse(data)) != nil { return try JSONResponseDecoder().decode(data) }
            if String(validating: data, as: UTF8.self) != nil { return try StringResponseDecoder().decode(data) }
            return try Base64ResponseDecoder().decode(data)
        }

        /// `application/` subtypes that are text although they do not say so.
        public static let textualApplicationTypes: Set<String> = [
            "xml", "javascript", "ecmascript", "x-javascript", "x-www-form-urlencoded", "yaml", "x-yaml",
            "toml", "graphql", "sql", "csv", "x-sh", "xhtml+xml", "rtf", "x-ndjson", "jsonl",
        ]
    }
}

/// `HTTPResponse.AutoResponseDecoder` by the name it is known by.
public typealias AutoResponseDecoder = HTTPResponse.AutoResponseDecoder
