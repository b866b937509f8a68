import FoundationEssentials
import NetlayerJSON

/// Building a request from an endpoint and a config: the merge rules of headers,
/// query, body and options live here and nowhere else, and this is where a request is
/// checked, once.
extension HTTPRequest {
    /// The request `endpoint` describes under `defaults`, built and checked. A static
    /// function rather than an initializer: an initializer takes its arguments owned,
    /// which copied the endpoint for every request.
    package static func build(_ endpoint: some Requestable, defaults: RequestDefaults) throws(NetworkError) -> HTTPRequest {
        var query = defaults.query
        if let encodable = endpoint.queryParametersEncodable {
            guard case .object(let object) = try Self.encodeToJSON(encodable, what: "query") else {
                throw .invalidRequest("queryParametersEncodable must encode to a JSON object")
            }
            for member in object where !member.value.isNull { query[member.key] = member.value }
        }
        if query.isEmpty {
            query = endpoint.queryParameters  // nulls are left out as the query is written
        } else {
            for member in endpoint.queryParameters where !member.value.isNull { query[member.key] = member.value }
        }
        let url = try URLBuilder.url(base: defaults.base, path: endpoint.path, isFullPath: endpoint.isFullPath, query: query,
                                     encodedQuery: endpoint.encodedQuery, parser: defaults.parser)

        var headers = defaults.headers.merging(endpoint.headerParameters)
        try headers.validateOnce()  // nothing to do when both sides were checked already

        var body: [UInt8]?
        if let data = endpoint.bodyData {
            body = [UInt8](data)
            if headers["Content-Type"] == nil { headers.setChecked("Content-Type", "application/octet-stream") }
        } else if let encodable = endpoint.bodyParametersEncodable {
            let (bytes, contentType) = try Self.encodeBody(encodable, encoding: endpoint.bodyEncoding, xmlRoot: endpoint.xmlRoot)
            body = bytes
            if headers["Content-Type"] == nil { headers.setChecked("Content-Type", contentType) }
        } else if let parameters = endpoint.bodyParameters {
            let (bytes, contentType) = try endpoint.bodyEncoding.encode(parameters, xmlRoot: endpoint.xmlRoot)
            body = bytes
            if headers["Content-Type"] == nil { headers.setChecked("Content-Type", contentType) }
        }

        let transfer = endpoint.transfer
        try Self.validate(transfer, method: endpoint.method, hasBody: body != nil)
        if transfer.uploadFrom != nil, headers["Content-Type"] == nil {
            headers.setChecked("Content-Type", "application/octet-stream")
        }

        var options = defaults.options  // checked with the defaults; only what the endpoint changes is checked here
        if let acceptable = endpoint.acceptableStatus { options.acceptableStatus = acceptable }
        if endpoint.timeout != nil || endpoint.configureOptions != nil {
            if let timeout = endpoint.timeout { options.timeout = timeout }
            endpoint.configureOptions?(&options)
            try Self.validate(options)
        }
        if let auth = options.auth, let value = try auth.authorization(for: url, parser: defaults.parser) {
            headers.setChecked("Authorization", value)
        }
        return HTTPRequest(method: endpoint.method, url: url, headers: headers, body: body, options: options,
                           transfer: transfer)
    }

    /// Combinations that cannot be sent.
    static func validate(_ transfer: TransferOptions, method: HTTPMethod, hasBody: Bool) throws(NetworkError) {
        let sources = (hasBody ? 1 : 0) + (transfer.multipart != nil ? 1 : 0) + (transfer.uploadFrom != nil ? 1 : 0)
        if sources > 1 { throw .invalidRequest("body, multipart and uploadFrom exclude each other") }
        if sources == 1, method == .get || method == .head {
            throw .invalidRequest("a \(method.rawValue) request cannot carry a body, multipart or uploadFrom")
        }
        if transfer.stream != nil, transfer.downloadTo != nil {
            throw .invalidRequest("stream and downloadTo exclude each other")
        }
        if let path = transfer.downloadTo, path.isEmpty || path.hasSuffix("/") {
            throw .invalidRequest("downloadTo must be a file path, not '\(path)'")
        }
        // Checked one by one: a list of the two would be made for every request.
        if let path = transfer.downloadTo, path.utf8.contains(0) { throw Self.nulInPath("downloadTo") }
        if let path = transfer.uploadFrom, path.utf8.contains(0) { throw Self.nulInPath("uploadFrom") }
        for (i, part) in (transfer.multipart ?? []).enumerated() {
            try validate(part, index: i)
        }
    }

    /// A part's name, filename and type go into its header lines, where HTTP allows no
    /// control character but HTAB; libcurl escapes `"` and `\` in the quoted name and
    /// filename (CurlTransfer+Body), and anything else is sent as its UTF-8 bytes.
    private static func nulInPath(_ key: String) -> NetworkError {
        .invalidRequest("\(key) holds a NUL byte (\\u0000), which no file path can hold")
    }

    /// A file part without `filename` is named by its file's name, which goes into the
    /// same header line: a name holding CR LF would add header lines and parts of its
    /// own, so it is checked as a given filename is.
    private static func validate(_ part: MultipartPart, index: Int) throws(NetworkError) {
        var filename = part.filename.map { ("filename", $0) }
        if case .file(let path) = part.content {
            if path.utf8.contains(0) {
                throw .invalidRequest("multipart part \(index) key 'file' holds a NUL byte (\\u0000), which no file path can hold")
            }
            if filename == nil { filename = ("file", MultipartPart.fileName(of: path)) }
        }
        for (key, value) in [("name", part.name), filename ?? ("filename", nil), ("contentType", part.contentType)] {
            guard let value, let bad = HTTPHeaders.forbiddenValueByte(in: value) else { continue }
            let what = key == "file" ? "key 'file' names a file whose name has" : "key '\(key)' has"
            throw .invalidRequest("multipart part \(index) \(what) \(HTTPHeaders.describeControl(bad)), which a multipart header cannot carry (only HTAB among control characters)\(key == "file" ? "; give the part a 'filename'" : "")")
        }
    }

    /// The longest a duration given in seconds may be (a timeout, a deadline, a
    /// WebSocket's intervals): a year, the bound documents put on them too. Beyond it,
    /// seconds in nanoseconds or milliseconds no longer fit the integers the clock and
    /// libcurl take.
    package static let maxSeconds: Double = 31_536_000

    /// Throws `invalidRequest` naming `key` unless `seconds` is positive and at most
    /// `maxSeconds` (nil: not set).
    package static func checkSeconds(_ seconds: Double?, key: String) throws(NetworkError) {
        guard let seconds, !(seconds > 0 && seconds <= maxSeconds) else { return }
        throw .invalidRequest("\(key) must be a positive number of seconds (at most a year), not \(seconds)")
    }

    /// Options a config or endpoint may set to nonsense when built in Swift.
    static func validate(_ options: RequestOptions) throws(NetworkError) {
        try checkSeconds(options.timeout, key: "timeout")
        try checkSeconds(options.connectTimeout, key: "connectTimeout")
        if options.maxRedirects < 0 { throw .invalidRequest("maxRedirects must not be negative") }
        if options.maxResponseBytes < 0 { throw .invalidRequest("maxResponseBytes must not be negative") }
        if options.maxStreamItemBytes < 1 { throw .invalidRequest("maxStreamItemBytes must be at least 1") }
        if let m = options.maxDownloadBytes, m < 0 { throw .invalidRequest("maxDownloadBytes must not be negative") }
        try checkSeconds(options.deadline, key: "deadline")
        if options.retry.maxAttempts < 1 { throw .invalidRequest("retry maxAttempts must be at least 1") }
        if !(options.retry.backoff >= 0 && options.retry.backoff <= 3600) {
            throw .invalidRequest("retry backoff must be a number of seconds from 0 to 3600, not \(options.retry.backoff)")
        }
        if !(options.retry.maxBackoff >= 0 && options.retry.maxBackoff <= 3600) {
            throw .invalidRequest("retry maxBackoff must be a number of seconds from 0 to 3600, not \(options.retry.maxBackoff)")
        }
        try options.auth?.validate()
        try options.transport.validate()
        if let ua = options.userAgent { try HTTPHeaders.validate(name: "User-Agent", value: ua) }
    }

    private static func encodeBody(_ value: any Encodable & Sendable, encoding: BodyEncoding,
                                   xmlRoot: String) throws(NetworkError) -> ([UInt8], String) {
        if encoding == .json {
            do {
                return (Array(try JSONEncoder.sorted.encode(value)), "application/json")
            } catch {
                throw .invalidRequest("body could not be encoded: \(error)")
            }
        }
        return try encoding.encode(try encodeToJSON(value, what: "body"), xmlRoot: xmlRoot)
    }

    private static func encodeToJSON(_ value: any Encodable & Sendable, what: String) throws(NetworkError) -> JSON {
        do {
            let data = try JSONEncoder.sorted.encode(value)
            return try JSONParser.parse(data)
        } catch {
            throw .invalidRequest("\(what) could not be encoded: \(error)")
        }
    }
}

extension JSONEncoder {
    /// Sorted keys make encoded queries and bodies deterministic.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
