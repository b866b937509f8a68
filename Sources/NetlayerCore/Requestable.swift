import FoundationEssentials
import NetlayerJSON

/// Everything needed to build one request, relative to a `NetworkConfigurable`
/// (the seeds' `Requestable`).
public protocol Requestable: Sendable {
    var path: String { get }
    /// `path` is a complete URL rather than a path under `baseURL`.
    var isFullPath: Bool { get }
    var method: HTTPMethod { get }
    /// Merged over the config's headers (names compare case-insensitively).
    var headerParameters: HTTPHeaders { get }
    /// Encoded to a JSON object and merged over `queryParameters`.
    var queryParametersEncodable: (any Encodable & Sendable)? { get }
    /// Merged over the config's query; arrays repeat the key.
    var queryParameters: JSONObject { get }
    /// A query already percent-encoded, sent as written before the query parameters
    /// (`Endpoint.encodedQuery`).
    var encodedQuery: String? { get }
    /// Sent as the body, encoded with `bodyEncoding`; wins over `bodyParameters`.
    var bodyParametersEncodable: (any Encodable & Sendable)? { get }
    var bodyParameters: JSON? { get }
    var bodyEncoding: BodyEncoding { get }
    /// Bytes sent as the body as they are; wins over the body parameters.
    var bodyData: Data? { get }
    /// The root element of an XML body.
    var xmlRoot: String { get }
    /// Overrides the config's per-attempt timeout, in seconds.
    var timeout: Double? { get }
    /// Overrides the config's acceptable status codes.
    var acceptableStatus: AcceptableStatus? { get }
    /// Adjusts any other option of the config for this endpoint (retry, deadline, ...).
    var configureOptions: (@Sendable (inout RequestOptions) -> Void)? { get }
    /// Multipart, file upload and download, progress and streaming.
    var transfer: TransferOptions { get }

}

extension Requestable {
    public var configureOptions: (@Sendable (inout RequestOptions) -> Void)? { nil }
    public var transfer: TransferOptions { TransferOptions() }
    public var xmlRoot: String { "request" }
    public var bodyData: Data? { nil }
    public var encodedQuery: String? { nil }
}

/// A `Requestable` that knows how to decode its response (the seeds' `ResponseRequestable`).
public protocol ResponseRequestable: Requestable {
    associatedtype Response
    var responseDecoder: any ResponseDecoder { get }
}
