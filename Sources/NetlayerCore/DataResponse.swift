import NetlayerJSON

/// A decoded value with what came with it.
public struct DataResponse<Value> {
    public var value: Value
    public var statusCode: Int
    /// Response headers, names lower-cased, repeated fields joined with ", ".
    public var headers: HTTPHeaders
    /// How many attempts the request took.
    public var attempts: Int
    /// Milliseconds from the first attempt to the end of the last one.
    public var totalMs: Double
    /// The phases of the last transfer, and the time its redirects took.
    public var timing = TransferTiming()
    public var fromCache: Bool
    /// Events delivered, for a streamed body.
    public var streamEvents: Int?
    /// The HTTP version of the response: "1.1", "2", ...
    public var httpVersion: String?
    /// The URL that answered, after redirects ("" when unknown).
    public var url = ""
    /// The redirects followed to get here, in order.
    public var redirects: [RedirectHop] = []

    public init(value: Value, statusCode: Int, headers: HTTPHeaders, attempts: Int = 1, totalMs: Double = 0,
                fromCache: Bool = false) {
        self.value = value
        self.statusCode = statusCode
        self.headers = headers
        self.attempts = attempts
        self.totalMs = totalMs
        self.fromCache = fromCache
    }
}

extension DataResponse: Sendable where Value: Sendable {}

extension DataResponse {
    /// `value`, with what came with it from `response`.
    public init(value: Value, response: HTTPResponse, attempts: Int) {
        self.init(value: value, statusCode: response.statusCode, headers: response.headers, attempts: attempts,
                  totalMs: response.totalMs, fromCache: response.fromCache)
        streamEvents = response.streamEvents
        httpVersion = response.httpVersion
        timing = response.timing
        url = response.effectiveURL
        redirects = response.redirects
    }
}
