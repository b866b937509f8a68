import NetlayerJSON

/// What every request of a service shares: the base URL, default headers and
/// default query (the seeds' `NetworkConfigurable`), plus default transport options.
public protocol NetworkConfigurable: Sendable {
    /// An absolute `http` or `https` URL; endpoint paths are joined to it.
    var baseURL: String { get }
    /// Sent with every request; an endpoint's headers override these by name.
    var headers: HTTPHeaders { get }
    /// Added to every URL; an endpoint's query overrides these by key.
    var queryParameters: JSONObject { get }
    /// Defaults for timeouts, redirects, limits and TLS.
    var requestOptions: RequestOptions { get }
}

extension NetworkConfigurable {
    public var requestOptions: RequestOptions { RequestOptions() }
}

/// The default `NetworkConfigurable`.
public struct NetworkConfig: NetworkConfigurable {
    public var baseURL: String
    public var headers: HTTPHeaders
    public var queryParameters: JSONObject
    public var requestOptions: RequestOptions

    public init(baseURL: String = "", headers: HTTPHeaders = [:], queryParameters: JSONObject = [:],
                requestOptions: RequestOptions = RequestOptions()) {
        self.baseURL = baseURL
        self.headers = headers
        self.queryParameters = queryParameters
        self.requestOptions = requestOptions
    }
}

/// The seeds' name for the default config.
public typealias ApiDataNetworkConfig = NetworkConfig
