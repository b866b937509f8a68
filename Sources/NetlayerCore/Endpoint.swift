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
        get { rare?.query }
        set { rare = RareParameters.make(query: newValue, body: rare?.body, encodedQuery: rare?.encodedQuery) }
    }
    public var queryParameters: JSONObject
    /// A query its writer percent-encoded, without the leading "?", sent as written
    /// after the base URL's query and before the query parameters: for a syntax
    /// `queryParameters` cannot write, such as OpenAPI's `color=blue,black,brown`, whose
    /// commas separate items while a comma inside an item is `%2C`. `%XX` escapes stay;
    /// bytes that may not stand in a query (a space, `#`, controls) are escaped.
    public var encodedQuery: String? {
        get { rare?.encodedQuery }
        set { rare = RareParameters.make(query: rare?.query, body: rare?.body, encodedQuery: newValue) }
    }
    public var bodyParametersEncodable: (any Encodable & Sendable)? {
        get { rare?.body }
        set { rare = RareParameters.make(query: rare?.query, body: newValue, encodedQuery: rare?.encodedQuery) }
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
    /// The parameters almost no endpoint has (both encodables, an encoded query),
    /// behind one reference that is nil for almost every endpoint: an optional
    /// existential is copied and dropped through its type's value witnesses even when
    /// nil, and endpoints are built and copied for every request.
    private var rare: RareParameters?

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
        self.rare = RareParameters.make(query: queryParametersEncodable, body: bodyParametersEncodable, encodedQuery: nil)
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

/// The parameters of an endpoint that almost no endpoint has (immutable: a change
/// makes a new one, so endpoints keep value semantics).
private final class RareParameters: Sendable {
    let query: (any Encodable & Sendable)?
    let body: (any Encodable & Sendable)?
    let encodedQuery: String?

    private init(query: (any Encodable & Sendable)?, body: (any Encodable & Sendable)?, encodedQuery: String?) {
        self.query = query
        self.body = body
        self.encodedQuery = encodedQuery
    }

    static func make(query: (any Encodable & Sendable)?, body: (any Encodable & Sendable)?,
                     encodedQuery: String?) -> RareParameters? {
        query == nil && body == nil && encodedQuery == nil
            ? nil : RareParameters(query: query, body: body, encodedQuery: encodedQuery)
    }
}
