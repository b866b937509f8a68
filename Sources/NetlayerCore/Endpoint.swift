import FoundationEssentials
import NetlayerJSON

/// A request description with its expected response type: the seeds' `Endpoint<R>`.
///
/// ```swift
/// let popular = Endpoint<MoviesPage>(path: "movie/popular",
///                                    queryParameters: ["page": 1],
///                                    responseDecoder: JSONResponseDecoder(keyPath: "data"))
/// let page = try await service.request(with: popular)
/// ```
public struct Endpoint<R>: ResponseRequestable {
    public typealias Response = R

    public var path: String
    public var isFullPath: Bool
    public var method: HTTPMethod
    public var headerParameters: HTTPHeaders
    public var queryParametersEncodable: (any Encodable & Sendable)? {
        get { encodables?.query }
        set { encodables = EncodableParameters.make(query: newValue, body: encodables?.body) }
    }
    public var queryParameters: JSONObject
    public var bodyParametersEncodable: (any Encodable & Sendable)? {
        get { encodables?.body }
        set { encodables = EncodableParameters.make(query: encodables?.query, body: newValue) }
    }
    public var bodyParameters: JSON?
    public var bodyEncoding: BodyEncoding
    /// Bytes sent as the body as they are (`application/octet-stream` unless the
    /// headers name a type); when set, `bodyParameters` and `bodyEncoding` are unused.
    public var bodyData: Data?
    public var xmlRoot = "request"
    public var responseDecoder: any ResponseDecoder
    public var timeout: Double?
    public var acceptableStatus: AcceptableStatus?
    public var configureOptions: (@Sendable (inout RequestOptions) -> Void)?
    public var transfer: TransferOptions
    /// Both encodable parameters, behind one reference that is nil for almost every
    /// endpoint: an optional existential is copied and dropped through its type's value
    /// witnesses even when nil, and endpoints are built and copied for every request.
    private var encodables: EncodableParameters?

    public init(path: String,
                isFullPath: Bool = false,
                method: HTTPMethod = .get,
                headerParameters: HTTPHeaders = [:],
                queryParametersEncodable: (any Encodable & Sendable)? = nil,
                queryParameters: JSONObject = [:],
                bodyParametersEncodable: (any Encodable & Sendable)? = nil,
                bodyParameters: JSON? = nil,
                bodyEncoding: BodyEncoding = .json,
                responseDecoder: any ResponseDecoder = JSONResponseDecoder(),
                timeout: Double? = nil,
                acceptableStatus: AcceptableStatus? = nil,
                configureOptions: (@Sendable (inout RequestOptions) -> Void)? = nil,
                transfer: TransferOptions = TransferOptions()) {
        self.path = path
        self.isFullPath = isFullPath
        self.method = method
        self.headerParameters = headerParameters
        self.encodables = EncodableParameters.make(query: queryParametersEncodable, body: bodyParametersEncodable)
        self.queryParameters = queryParameters
        self.bodyParameters = bodyParameters
        self.bodyEncoding = bodyEncoding
        self.responseDecoder = responseDecoder
        self.timeout = timeout
        self.acceptableStatus = acceptableStatus
        self.configureOptions = configureOptions
        self.transfer = transfer
    }
}

/// The encodable parameters of an endpoint that has any (immutable: a change makes a
/// new one, so endpoints keep value semantics).
private final class EncodableParameters: Sendable {
    let query: (any Encodable & Sendable)?
    let body: (any Encodable & Sendable)?

    private init(query: (any Encodable & Sendable)?, body: (any Encodable & Sendable)?) {
        self.query = query
        self.body = body
    }

    static func make(query: (any Encodable & Sendable)?, body: (any Encodable & Sendable)?) -> EncodableParameters? {
        query == nil && body == nil ? nil : EncodableParameters(query: query, body: body)
    }
}
