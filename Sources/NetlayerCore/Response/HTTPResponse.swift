import NetlayerJSON

/// What the server answered: status, headers (names lower-cased, repeated fields
/// joined with ", ") and the body bytes.
///
/// A value type whose fields live in one shared, copy-on-write box (`CopyOnWrite`).
public struct HTTPResponse: Sendable {
    private struct Fields: Sendable {
        var statusCode: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var totalMs: Double
        var timing = TransferTiming()
        var effectiveURL: String
        var downloadedFile: String?
        var bodyBytes: Int64 = 0
        var streamEvents: Int?
        var fromCache = false
        var httpVersion: String?
        var sentCredentials: [String] = []
        var sentHeaderLines: [String] = []
        var redirects: [RedirectHop] = []
    }

    private var fields: CopyOnWrite<Fields>

    public init(statusCode: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], totalMs: Double = 0,
                effectiveURL: String = "") {
        fields = CopyOnWrite(Fields(statusCode: statusCode, headers: headers, body: body, totalMs: totalMs,
                                    effectiveURL: effectiveURL))
    }

    public var statusCode: Int {
        get { fields.value.statusCode }
        _modify { yield &fields.value.statusCode }
    }
    public var headers: HTTPHeaders {
        _read { yield fields.value.headers }  // borrowed: reading one field copies nothing
        _modify { yield &fields.value.headers }
    }
    public var body: [UInt8] {
        _read { yield fields.value.body }
        _modify { yield &fields.value.body }
    }
    /// Wall time in milliseconds, the redirects followed to get here included.
    public var totalMs: Double {
        get { fields.value.totalMs }
        _modify { yield &fields.value.totalMs }
    }
    /// The phases of the transfer, and the time its redirects took.
    public var timing: TransferTiming {
        get { fields.value.timing }
        _modify { yield &fields.value.timing }
    }
    /// The URL of the last request, after redirects.
    public var effectiveURL: String {
        _read { yield fields.value.effectiveURL }
        _modify { yield &fields.value.effectiveURL }
    }
    /// Where the body was saved, for a request with `downloadTo`.
    public var downloadedFile: String? {
        _read { yield fields.value.downloadedFile }
        _modify { yield &fields.value.downloadedFile }
    }
    /// Body bytes received (also when they went to a file or a stream).
    public var bodyBytes: Int64 {
        get { fields.value.bodyBytes }
        _modify { yield &fields.value.bodyBytes }
    }
    /// Events delivered, for a streamed body.
    public var streamEvents: Int? {
        get { fields.value.streamEvents }
        _modify { yield &fields.value.streamEvents }
    }
    /// Answered from the response cache (fresh, or revalidated with a 304).
    public var fromCache: Bool {
        get { fields.value.fromCache }
        _modify { yield &fields.value.fromCache }
    }
    /// Values of the credential headers the transport added as it sent the request,
    /// which Netlayer did not set itself (libcurl's answer to a digest challenge): kept
    /// so that logs and cassettes can redact a server's echo of them.
    public var sentCredentials: [String] {
        _read { yield fields.value.sentCredentials }
        _modify { yield &fields.value.sentCredentials }
    }
    /// The request line and header lines the transport sent for this response, as it
    /// sent them (HTTP/2 and 3 written as HTTP/1 lines), the ones it added itself
    /// included (`Host`, `Accept-Encoding`, `Content-Length`, the jar's `Cookie`, a
    /// digest answer): kept only with `RequestOptions.recordsSentHeaders`, up to
    /// `HTTPResponse.maxSentHeaderBytes`; credentials as they went, so log them redacted.
    public var sentHeaderLines: [String] {
        _read { yield fields.value.sentHeaderLines }
        _modify { yield &fields.value.sentHeaderLines }
    }
    /// The most bytes of sent header lines a response keeps.
    public static let maxSentHeaderBytes = 64 * 1024
    /// The redirects followed to get here, in order (empty when there were none).
    public var redirects: [RedirectHop] {
        _read { yield fields.value.redirects }
        _modify { yield &fields.value.redirects }
    }
    /// The HTTP version the response came in: "1.0", "1.1", "2" or "3" (nil when unknown).
    public var httpVersion: String? {
        _read { yield fields.value.httpVersion }
        _modify { yield &fields.value.httpVersion }
    }
}
