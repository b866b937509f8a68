/// What the server answered: status, headers (names lower-cased, repeated fields
/// joined with ", ") and the body bytes.
///
/// A value type whose fields live in one shared, copy-on-write box: a response passes
/// through the attempt, retry, redirect and decoding layers by value, and copying a
/// dozen fields (six of them reference-counted) at every step cost more than the
/// one allocation of the box.
public struct HTTPResponse: Sendable {
    public var statusCode: Int {
        get { storage.statusCode }
        _modify { yield &unique().statusCode }
    }
    public var headers: HTTPHeaders {
        _read { yield storage.headers }  // borrowed: reading one field copies nothing
        _modify { yield &unique().headers }
    }
    public var body: [UInt8] {
        _read { yield storage.body }  // borrowed: reading one field copies nothing
        _modify { yield &unique().body }
    }
    /// Wall time in milliseconds, the redirects followed to get here included.
    public var totalMs: Double {
        get { storage.totalMs }
        _modify { yield &unique().totalMs }
    }
    /// The phases of the transfer, and the time its redirects took.
    public var timing: TransferTiming {
        get { storage.timing }
        _modify { yield &unique().timing }
    }
    /// The URL of the last request, after redirects.
    public var effectiveURL: String {
        _read { yield storage.effectiveURL }  // borrowed: reading one field copies nothing
        _modify { yield &unique().effectiveURL }
    }
    /// Where the body was saved, for a request with `downloadTo`.
    public var downloadedFile: String? {
        _read { yield storage.downloadedFile }  // borrowed: reading one field copies nothing
        _modify { yield &unique().downloadedFile }
    }
    /// Body bytes received (also when they went to a file or a stream).
    public var bodyBytes: Int64 {
        get { storage.bodyBytes }
        _modify { yield &unique().bodyBytes }
    }
    /// Events delivered, for a streamed body.
    public var streamEvents: Int? {
        get { storage.streamEvents }
        _modify { yield &unique().streamEvents }
    }
    /// Answered from the response cache (fresh, or revalidated with a 304).
    public var fromCache: Bool {
        get { storage.fromCache }
        _modify { yield &unique().fromCache }
    }
    /// The HTTP version the response came in: "1.0", "1.1", "2" or "3" (nil when unknown).
    public var httpVersion: String? {
        _read { yield storage.httpVersion }  // borrowed: reading one field copies nothing
        _modify { yield &unique().httpVersion }
    }

    public init(statusCode: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], totalMs: Double = 0,
                effectiveURL: String = "") {
        storage = Storage(statusCode: statusCode, headers: headers, body: body, totalMs: totalMs,
                          effectiveURL: effectiveURL)
    }

    private var storage: Storage

    /// The box, copied first when another value shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    // Only ever mutated through `unique()`, by the one value that owns it: shared boxes
    // are read-only, which is what makes the value Sendable.
    private final class Storage: @unchecked Sendable {
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

        init(statusCode: Int, headers: HTTPHeaders, body: [UInt8], totalMs: Double, effectiveURL: String) {
            self.statusCode = statusCode
            self.headers = headers
            self.body = body
            self.totalMs = totalMs
            self.effectiveURL = effectiveURL
        }

        func copy() -> Storage {
            let other = Storage(statusCode: statusCode, headers: headers, body: body, totalMs: totalMs,
                                effectiveURL: effectiveURL)
            other.timing = timing
            other.downloadedFile = downloadedFile
            other.bodyBytes = bodyBytes
            other.streamEvents = streamEvents
            other.fromCache = fromCache
            other.httpVersion = httpVersion
            return other
        }
    }
}
