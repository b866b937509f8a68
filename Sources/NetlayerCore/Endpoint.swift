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
    public var queryParametersEncodable: (any Encodable & Sendable)?
    public var queryParameters: JSONObject
    public var bodyParametersEncodable: (any Encodable & Sendable)?
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
        self.queryParametersEncodable = queryParametersEncodable
        self.queryParameters = queryParameters
        self.bodyParametersEncodable = bodyParametersEncodable
        self.bodyParameters = bodyParameters
        self.bodyEncoding = bodyEncoding
        self.responseDecoder = responseDecoder
        self.timeout = timeout
        self.acceptableStatus = acceptableStatus
        self.configureOptions = configureOptions
        self.transfer = transfer
    }
}
