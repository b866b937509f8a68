/// A fully built request, ready for a `NetworkSessionManager`: what the seeds had as
/// `URLRequest`, plus the per-request transport options.
///
/// A value type whose fields live in one shared, copy-on-write box: a request is
/// handed through several layers (attempts, redirects, the transfer, the decoder),
/// and copying a dozen strings, sets and closures at each step cost more reference
/// counting than the rest of the request's bookkeeping.
public struct HTTPRequest: Sendable {
    private final class Storage: @unchecked Sendable {
        var method: HTTPMethod
        var url: String
        var headers: HTTPHeaders
        var body: [UInt8]?
        var options: RequestOptions
        var transfer: TransferOptions

        init(method: HTTPMethod, url: String, headers: HTTPHeaders, body: [UInt8]?, options: RequestOptions,
             transfer: TransferOptions) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.options = options
            self.transfer = transfer
        }

        func copy() -> Storage {
            Storage(method: method, url: url, headers: headers, body: body, options: options, transfer: transfer)
        }
    }

    // Never mutated in place unless uniquely referenced (see `unique`), so sharing
    // it between threads is as safe as sharing the value.
    private var storage: Storage

    public init(method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: [UInt8]? = nil,
                options: RequestOptions = RequestOptions(), transfer: TransferOptions = TransferOptions()) {
        storage = Storage(method: method, url: url, headers: headers, body: body, options: options, transfer: transfer)
    }

    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    public var method: HTTPMethod {
        get { storage.method }
        set { unique.method = newValue }
    }

    public var url: String {
        _read { yield storage.url }  // borrowed: reading one field copies nothing
        set { unique.url = newValue }
    }

    public var headers: HTTPHeaders {
        _read { yield storage.headers }  // borrowed: reading one field copies nothing
        _modify { yield &unique.headers }
    }

    public var body: [UInt8]? {
        _read { yield storage.body }  // borrowed: reading one field copies nothing
        set { unique.body = newValue }
    }

    public var options: RequestOptions {
        _read { yield storage.options }  // borrowed: reading one field copies nothing
        _modify { yield &unique.options }
    }

    /// Multipart, file upload and download, progress and streaming.
    public var transfer: TransferOptions {
        _read { yield storage.transfer }  // borrowed: reading one field copies nothing
        _modify { yield &unique.transfer }
    }
}
