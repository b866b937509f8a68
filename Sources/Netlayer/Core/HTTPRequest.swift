/// A fully built request, ready for a `NetworkSessionManager`: what the seeds had as
/// `URLRequest`, plus the per-request transport options.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]?
    public var options: RequestOptions
    /// Multipart, file upload and download, progress and streaming.
    public var transfer: TransferOptions

    public init(method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: [UInt8]? = nil,
                options: RequestOptions = RequestOptions(), transfer: TransferOptions = TransferOptions()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.options = options
        self.transfer = transfer
    }
}
