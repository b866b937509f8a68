import FoundationEssentials
import NetlayerJSON

/// How an endpoint's body parameters become bytes.
public enum BodyEncoding: String, Sendable, CaseIterable {
    /// `application/json`; the default.
    case json
    /// `application/x-www-form-urlencoded`, RFC 3986 escaping, arrays as repeated keys.
    case form
    /// The body is a string, sent as is as `text/plain; charset=utf-8`.
    case text
    /// `application/xml`: the body rendered as XML elements under a root element.
    case xml
    /// The body is base64 text (RFC 4648) of bytes sent as they are (protobuf, images),
    /// as `application/octet-stream` unless the headers name a type: binary bodies
    /// held in memory, through a JSON document.
    case base64

    /// The seeds' name for `form`.
    public static let stringEncodingAscii = BodyEncoding.form

    /// The bytes and content type of `body` in this encoding.
    public func encode(_ body: JSON, xmlRoot: String = "request") throws(NetworkError) -> (bytes: [UInt8], contentType: String) {
        switch self {
        case .json:
            return (JSONWriter.serialize(body), "application/json")
        case .form:
            guard case .object(let object) = body else {
                throw .invalidRequest("body must be an object for bodyEncoding 'form', not \(body.typeName)")
            }
            let pairs = try HTTPRequest.QueryEncoding.pairs(from: object, context: "body")
            return (Array(HTTPRequest.QueryEncoding.encode(pairs).utf8), "application/x-www-form-urlencoded")
        case .text:
            guard case .string(let text) = body else {
                throw .invalidRequest("body must be a string for bodyEncoding 'text', not \(body.typeName)")
            }
            return (Array(text.utf8), "text/plain; charset=utf-8")
        case .xml:
            return (try XMLBodyWriter.render(body, root: xmlRoot), "application/xml; charset=utf-8")
        case .base64:
            guard case .string(let text) = body else {
                throw .invalidRequest("body must be a base64 string for bodyEncoding 'base64', not \(body.typeName)")
            }
            guard let bytes = Data(base64Encoded: text) else {
                throw .invalidRequest("body is not valid base64 (bodyEncoding 'base64')")
            }
            return ([UInt8](bytes), "application/octet-stream")
        }
    }
}
