/// What the server answered: status, headers (names lower-cased, repeated fields
/// joined with ", ") and the body bytes.
public struct HTTPResponse: Sendable {
    public var statusCode: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Wall time in milliseconds, the redirects followed to get here included.
    public var totalMs: Double
    /// The phases of the transfer, and the time its redirects took.
    public var timing = TransferTiming()
    /// The URL of the last request, after redirects.
    public var effectiveURL: String
    /// Where the body was saved, for a request with `downloadTo`.
    public var downloadedFile: String?
    /// Body bytes received (also when they went to a file or a stream).
    public var bodyBytes: Int64 = 0
    /// Events delivered, for a streamed body.
    public var streamEvents: Int?
    /// Answered from the response cache (fresh, or revalidated with a 304).
    public var fromCache = false
    /// The HTTP version the response came in: "1.0", "1.1", "2" or "3" (nil when unknown).
    public var httpVersion: String?

    public init(statusCode: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], totalMs: Double = 0,
                effectiveURL: String = "") {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.totalMs = totalMs
        self.effectiveURL = effectiveURL
    }
}
