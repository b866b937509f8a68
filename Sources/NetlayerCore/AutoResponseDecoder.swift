import NetlayerJSON

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
    /// JSON for `application/json` and any `+json` type; text for `text/*`, the
    /// `+xml` types and the textual `application/` types of `textualApplicationTypes`,
    /// and for any type that names a `charset`; base64 for the rest. A body that is
    /// empty is `none` (null) unless it was declared JSON, where an empty body is
    /// `no_response`; a textual body that is not UTF-8 is base64, not a failure.
    public static func choice(contentType: String?, body: [UInt8]) -> Choice {
        guard var contentType else { return body.isEmpty ? .none : .base64 }
        return contentType.withUTF8 { choice(contentType: $0, body: body) }
    }

    /// `choice(contentType:body:)` on the header's bytes: no string is made, since
    /// every response of an `auto` request comes through here.
    static func choice(contentType: UnsafeBufferPointer<UInt8>, body: [UInt8]) -> Choice {
        let media = MediaType(contentType)
        if media.isJSON { return .json }
        if body.isEmpty { return .none }
        guard media.isTextual else { return .base64 }
        return String(validating: body, as: UTF8.self) != nil ? .text : .base64
    }

    /// The choice for `response`; nil when its body is not in memory (written to a
    /// file, or streamed), where no decoder reads it.
    public static func choice(for response: HTTPResponse) -> Choice? {
        guard response.downloadedFile == nil, response.streamEvents == nil else { return nil }
        var found: Choice?
        response.headers.withEachFieldUTF8 { name, value in
            if found == nil, name.count == 12, MediaType.equalsIgnoringCase(name, "content-type") {
                found = choice(contentType: value, body: response.body)
            }
        }
        return found ?? (response.body.isEmpty ? Choice.none : .base64)
    }

    /// `decoder` itself, or for one that follows the `Content-Type` (this one, an
    /// OpenAPI operation's) the one it becomes for `response`.
    public static func resolve(_ decoder: any ResponseDecoder, for response: HTTPResponse) -> any ResponseDecoder {
        guard decoder.followsContentType, let choice = choice(for: response) else { return decoder }
        return decoder.resolved(for: choice)
    }

    public var followsContentType: Bool { true }

    public func resolved(for choice: Choice) -> any ResponseDecoder { Self.decoder(for: choice) }

    /// The decoder for `choice`.
    public static func decoder(for choice: Choice) -> any ResponseDecoder {
        switch choice {
        case .json: return JSONResponseDecoder()
        case .text: return StringResponseDecoder()
        case .base64: return Base64ResponseDecoder()
        case .none: return EmptyResponseDecoder()
        }
    }

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

    /// A media type's essence (`type/subtype`, parameters cut off) and whether it
    /// names a charset, read in place; comparisons ignore ASCII case.
    private struct MediaType {
        let type: UnsafeBufferPointer<UInt8>
        let subtype: UnsafeBufferPointer<UInt8>
        let hasCharset: Bool

        init(_ text: UnsafeBufferPointer<UInt8>) {
            var end = text.firstIndex(of: UInt8(ascii: ";")) ?? text.count
            var start = 0
            while start < end, text[start] == 0x20 || text[start] == 0x09 { start += 1 }
            while end > start, text[end - 1] == 0x20 || text[end - 1] == 0x09 { end -= 1 }
            let essence = UnsafeBufferPointer(rebasing: text[start..<end])
            let slash = essence.firstIndex(of: UInt8(ascii: "/")) ?? essence.count
            type = UnsafeBufferPointer(rebasing: essence[..<slash])
            subtype = UnsafeBufferPointer(rebasing: essence[min(slash + 1, essence.count)...])
            let parameters = UnsafeBufferPointer(rebasing: text[min(end, text.count)...])
            hasCharset = Self.contains(parameters, "charset=")
        }

        var isJSON: Bool {
            (Self.equalsIgnoringCase(type, "application") && Self.equalsIgnoringCase(subtype, "json"))
                || Self.hasSuffix(subtype, "+json")
        }

        var isTextual: Bool {
            if Self.equalsIgnoringCase(type, "text") || Self.hasSuffix(subtype, "+xml") || hasCharset { return true }
            guard Self.equalsIgnoringCase(type, "application") else { return false }
            return AutoResponseDecoder.textualApplicationTypes.contains(String(decoding: subtype, as: UTF8.self).lowercased())
        }

        static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
            bytes.count == lower.utf8CodeUnitCount
                && zip(bytes, UnsafeBufferPointer(start: lower.utf8Start, count: lower.utf8CodeUnitCount))
                    .allSatisfy { ($0 &- 0x41 < 26 ? $0 | 0x20 : $0) == $1 }
        }

        static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
            let n = lower.utf8CodeUnitCount
            return bytes.count >= n && equalsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[(bytes.count - n)...]), lower)
        }

        static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
            let n = lower.utf8CodeUnitCount
            guard bytes.count >= n else { return false }
            return (0...(bytes.count - n)).contains { equalsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[$0..<($0 + n)]), lower) }
        }
    }
}
