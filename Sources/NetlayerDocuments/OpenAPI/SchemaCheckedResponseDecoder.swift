import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Decodes like `AutoResponseDecoder` (the body's `Content-Type` decides), then checks
/// a JSON body against the operation's response schemas (config
/// `openapi.validateResponses`): a body that none of them accepts is `parsing`,
/// naming the JSON pointer at fault.
///
/// `RequestResult` picks `inner` from the response, as it does for
/// `AutoResponseDecoder`; only a JSON body is checked.
package struct SchemaCheckedResponseDecoder: ResponseDecoder {
    let schemas: [JSON]
    let validator: SchemaValidator
    let operation: String
    var inner: any ResponseDecoder = AutoResponseDecoder()

    package var requiresBody: Bool { inner.requiresBody }

    package func decode<T: Decodable>(_ data: [UInt8]) throws(DataTransferError) -> T {
        let value: T = try inner.decode(data)
        guard T.self == JSON.self else { return value }
        let json = unsafeBitCast(value, to: JSON.self)
        var first: SchemaViolation?
        for schema in schemas {
            guard let violation = validator.firstViolation(of: json, against: schema, direction: .response) else { return value }
            if first == nil { first = violation }
        }
        if let first {
            let place = first.pointer.isEmpty ? "the response body" : "the response body at '\(first.shownPointer)'"
            throw .parsing("operation '\(SchemaViolation.quoted(operation))': \(place) \(first.message)")
        }
        return value
    }

    /// This decoder for `response`: its inner decoder chosen as `AutoResponseDecoder`
    /// chooses, and the check kept only for a JSON body.
    public var followsContentType: Bool { true }

    public func resolved(for choice: AutoResponseDecoder.Choice) -> any ResponseDecoder {
        resolved(for: choice, charset: nil)
    }

    public func resolved(for choice: AutoResponseDecoder.Choice, charset: TextEncoding?) -> any ResponseDecoder {
        var resolved = self
        resolved.inner = AutoResponseDecoder.decoder(for: choice, charset: charset)
        return choice == .json ? resolved : resolved.inner
    }
}
