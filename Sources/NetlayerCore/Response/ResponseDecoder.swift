import FoundationEssentials
import NetlayerJSON

/// Turns a response body into a value.
public protocol ResponseDecoder: Sendable {
    func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T
    /// Whether an empty body means "no response" (true) or is itself a value.
    var requiresBody: Bool { get }
    /// Whether the decoder follows the response's `Content-Type` (`resolved(for:)`).
    var followsContentType: Bool { get }
    /// For a decoder that follows the response's `Content-Type`: the decoder it is
    /// for a body of that kind (`AutoResponseDecoder.choice(for:)`).
    func resolved(for choice: AutoResponseDecoder.Choice) -> any ResponseDecoder
    /// `resolved(for:)` for a textual body whose `Content-Type` names `charset` (text
    /// is decoded from it); by default, `resolved(for:)`.
    func resolved(for choice: AutoResponseDecoder.Choice, charset: TextEncoding?) -> any ResponseDecoder
}

extension ResponseDecoder {
    public var requiresBody: Bool { true }
    public var followsContentType: Bool { false }
    public func resolved(for choice: AutoResponseDecoder.Choice) -> any ResponseDecoder { self }
    public func resolved(for choice: AutoResponseDecoder.Choice, charset: TextEncoding?) -> any ResponseDecoder {
        resolved(for: choice)
    }

    /// The value for a body that is legitimately empty (204, 205, HEAD): `JSON.null`,
    /// nil for an optional type, else `noResponse`.
    public func decodeEmpty<T: Decodable>() throws(DataTransferError) -> T {
        if T.self == JSON.self { return JSON.null as! T }
        if T.self == RawJSON.self { return RawJSON.null as! T }
        if let value = try? JSONDecoder().decode(T.self, from: Data("null".utf8)) { return value }
        throw .noResponse
    }
}

extension HTTPResponse {
    /// Decodes JSON, optionally from a sub-value at a dot-separated key path
    /// ("data.results.0"). `JSON` itself is decoded by Netlayer's own parser; other
    /// `Decodable` types by a `JSONDecoder`, which `makeDecoder` configures:
    ///
    /// ```swift
    /// let decoder = JSONResponseDecoder(keyPath: "data") {
    ///     let decoder = JSONDecoder()
    ///     decoder.keyDecodingStrategy = .convertFromSnakeCase
    ///     decoder.dateDecodingStrategy = .iso8601
    ///     return decoder
    /// }
    /// ```
    public struct JSONResponseDecoder: ResponseDecoder {
        public var keyPath: String?
        /// Makes the `JSONDecoder` for each response (dates, key strategy, user info);
        /// nil is a plain `JSONDecoder()`, or the client's own (`NetlayerClient.Parts.makeJSONDecoder`).
        public var makeDecoder: (@Sendable () -> JSONDecoder)?

        public init(keyPath: String? = nil, makeDecoder: (@Sendable () -> JSONDecoder)? = nil) {
            self.keyPath = keyPath
            self.makeDecoder = makeDecoder
        }

        /// A UTF-8 byte order mark before the JSON text is skipped (RFC 8259 section 8.1
        /// lets a parser ignore it; the Fetch standard's `json()` does, and servers on
        /// Windows send it).
        public func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
            // T is known to be the type compared: a bit cast, not `as!`, which would ask
            // the runtime for a dynamic cast on every response.
            if T.self == JSON.self { return unsafeBitCast(try decodeJSON(data), to: T.self) }
            if T.self == RawJSON.self { return unsafeBitCast(try decodeRawJSON(data), to: T.self) }
            let data = Self.withoutByteOrderMark(data)
            do {
                if let keyPath, !keyPath.isEmpty {
                    let sub = try parseJSON(data)
                    return try (makeDecoder?() ?? JSONDecoder()).decode(T.self, from: Data(JSONWriter.serialize(sub)))
                }
                return try (makeDecoder?() ?? JSONDecoder()).decode(T.self, from: Data(data))
            } catch let error as DataTransferError {
                throw error
            } catch {
                throw .parsing("the body does not decode as \(T.self): \(error)")
            }
        }

        /// The body as checked JSON text, at `keyPath`: the body itself when it is valid
        /// and no key path applies, which spares parsing it and writing it again.
        public func decodeRawJSON(_ data: [UInt8]) throws(DataTransferError) -> RawJSON {
            let data = Self.withoutByteOrderMark(data)
            if keyPath?.isEmpty ?? true, data.withUnsafeBufferPointer(JSONParser.JSONFastCheck.isValid) {
                return RawJSON(checked: data)
            }
            return RawJSON(try parseJSON(data))
        }

        /// The body without one leading byte order mark. Only one: a second is U+FEFF,
        /// which JSON does not allow, and is the parser's to refuse.
        private static func withoutByteOrderMark(_ data: [UInt8]) -> [UInt8] {
            guard data.count >= 3, data[0] == 0xEF, data[1] == 0xBB, data[2] == 0xBF else { return data }
            return Array(data.dropFirst(3))
        }

        /// The body parsed as `JSON`, at `keyPath`.
        public func decodeJSON(_ data: [UInt8]) throws(DataTransferError) -> JSON {
            try parseJSON(Self.withoutByteOrderMark(data))
        }

        /// `data`, which has no byte order mark left to skip, parsed as `JSON`, at `keyPath`.
        private func parseJSON(_ data: [UInt8]) throws(DataTransferError) -> JSON {
            let value: JSON
            do {
                value = try JSONParser.parse(data)
            } catch {
                throw .parsing("the body is not valid JSON: \(error)")
            }
            guard let keyPath, !keyPath.isEmpty else { return value }
            return try value.value(atKeyPath: keyPath)
        }
    }
}

/// `HTTPResponse.JSONResponseDecoder` by the name it is known by.
public typealias JSONResponseDecoder = HTTPResponse.JSONResponseDecoder

/// Decodes the body as UTF-8 text (into `String` or `JSON.string`); invalid UTF-8 is `parsing`.
public struct StringResponseDecoder: ResponseDecoder {
    /// The encoding the body is read in: UTF-8 unless the `auto` decoder found another
    /// in the response's `Content-Type`.
    public var encoding: TextEncoding

    public init(encoding: TextEncoding = .utf8) {
        self.encoding = encoding
    }

    public var requiresBody: Bool { false }

    public func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
        let decoded = encoding.decodeBody(data)
        guard let text = decoded else {
            guard encoding == .utf8 else { throw .parsing("the body is not valid \(encoding.name)") }
            let offset = data.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset($0) }
            throw .parsing("the body is not valid UTF-8 (byte \(offset))")
        }
        if let value = text as? T { return value }
        if let value = JSON.string(text) as? T { return value }
        throw .parsing("StringResponseDecoder cannot produce \(T.self)")
    }
}

/// Returns the body bytes themselves (`[UInt8]` or `Data`).
public struct RawDataResponseDecoder: ResponseDecoder {
    public init() {}
    public var requiresBody: Bool { false }

    public func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
        if let value = data as? T { return value }
        if let value = Data(data) as? T { return value }
        throw .parsing("RawDataResponseDecoder cannot produce \(T.self)")
    }
}

/// Returns the body as base64 text (`String` or `JSON.string`), for binary bodies
/// that must cross a JSON boundary.
public struct Base64ResponseDecoder: ResponseDecoder {
    public init() {}
    public var requiresBody: Bool { false }

    public func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
        let text = Data(data).base64EncodedString()
        if let value = text as? T { return value }
        if let value = JSON.string(text) as? T { return value }
        throw .parsing("Base64ResponseDecoder cannot produce \(T.self)")
    }
}

/// Ignores the body: `JSON.null`, or nil for an optional type.
public struct EmptyResponseDecoder: ResponseDecoder {
    public init() {}
    public var requiresBody: Bool { false }

    public func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
        try decodeEmpty()
    }
}
