import NetlayerJSON

/// A fully built request, ready for a `NetworkSessionManager`: what the seeds had as
/// `URLRequest`, plus the per-request transport options.
///
/// A value type whose fields live in one shared, copy-on-write box (`CopyOnWrite`).
public struct HTTPRequest: Sendable {
    private struct Fields: Sendable {
        var method: HTTPMethod
        var url: String
        var headers: HTTPHeaders
        var body: [UInt8]?
        var options: RequestOptions
        var transfer: TransferOptions
    }

    private var fields: CopyOnWrite<Fields>

    public init(method: HTTPMethod = .get, url: String, headers: HTTPHeaders = [:], body: [UInt8]? = nil,
                options: RequestOptions = RequestOptions(), transfer: TransferOptions = TransferOptions()) {
        fields = CopyOnWrite(Fields(method: method, url: url, headers: headers, body: body, options: options,
                                    transfer: transfer))
    }

    public var method: HTTPMethod {
        get { fields.value.method }
        set { fields.value.method = newValue }
    }

    public var url: String {
        _read { yield fields.value.url }  // borrowed: reading one field copies nothing
        set { fields.value.url = newValue }
    }

    public var headers: HTTPHeaders {
        _read { yield fields.value.headers }
        _modify { yield &fields.value.headers }
    }

    public var body: [UInt8]? {
        _read { yield fields.value.body }
        set { fields.value.body = newValue }
    }

    public var options: RequestOptions {
        _read { yield fields.value.options }
        _modify { yield &fields.value.options }
    }

    /// Multipart, file upload and download, progress and streaming.
    public var transfer: TransferOptions {
        _read { yield fields.value.transfer }
        _modify { yield &fields.value.transfer }
    }
}
