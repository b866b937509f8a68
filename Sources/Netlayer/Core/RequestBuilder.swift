import FoundationEssentials

/// Builds an `HTTPRequest` from an endpoint and a config: the merge rules of
/// headers, query, body and options live here and nowhere else.
enum RequestBuilder {
    static func build(_ endpoint: some Requestable, config: any NetworkConfigurable,
                      base: BaseURL?) throws(NetworkError) -> HTTPRequest {
        var query = config.queryParameters
        if let encodable = endpoint.queryParametersEncodable {
            guard case .object(let object) = try encodeToJSON(encodable, what: "query") else {
                throw .invalidRequest("queryParametersEncodable must encode to a JSON object")
            }
            for member in object where !member.value.isNull { query[member.key] = member.value }
        }
        for member in endpoint.queryParameters where !member.value.isNull { query[member.key] = member.value }
        let pairs = try QueryEncoding.pairs(from: query, context: "query")
        let url = try URLBuilder.url(base: base, path: endpoint.path, isFullPath: endpoint.isFullPath, query: pairs)

        var headers = config.headers.merging(endpoint.headerParameters)
        try headers.validate()

        var body: [UInt8]?
        if let encodable = endpoint.bodyParametersEncodable {
            let (bytes, contentType) = try encodeBody(encodable, encoding: endpoint.bodyEncoding, xmlRoot: endpoint.xmlRoot)
            body = bytes
            if headers["Content-Type"] == nil { headers["Content-Type"] = contentType }
        } else if let parameters = endpoint.bodyParameters {
            let (bytes, contentType) = try endpoint.bodyEncoding.encode(parameters, xmlRoot: endpoint.xmlRoot)
            body = bytes
            if headers["Content-Type"] == nil { headers["Content-Type"] = contentType }
        }

        let transfer = endpoint.transfer
        try validate(transfer, method: endpoint.method, hasBody: body != nil)
        if transfer.uploadFrom != nil, headers["Content-Type"] == nil { headers["Content-Type"] = "application/octet-stream" }

        var options = config.requestOptions
        if let timeout = endpoint.timeout { options.timeout = timeout }
        if let acceptable = endpoint.acceptableStatus { options.acceptableStatus = acceptable }
        endpoint.configureOptions?(&options)
        try validate(options)
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
        for part in transfer.multipart ?? [] {
            try HTTPHeaders.validate(name: "Content-Disposition", value: part.name + (part.filename ?? ""))
            if let type = part.contentType { try HTTPHeaders.validate(name: "Content-Type", value: type) }
        }
    }

    /// Options a config or endpoint may set to nonsense when built in Swift.
    static func validate(_ options: RequestOptions) throws(NetworkError) {
        if let t = options.timeout, !(t > 0 && t.isFinite) { throw .invalidRequest("timeout must be a positive number of seconds") }
        if let t = options.connectTimeout, !(t > 0 && t.isFinite) { throw .invalidRequest("connectTimeout must be a positive number of seconds") }
        if options.maxRedirects < 0 { throw .invalidRequest("maxRedirects must not be negative") }
        if options.maxResponseBytes < 0 { throw .invalidRequest("maxResponseBytes must not be negative") }
        if let d = options.deadline, !(d > 0 && d.isFinite) { throw .invalidRequest("deadline must be a positive number of seconds") }
        if options.retry.maxAttempts < 1 { throw .invalidRequest("retry maxAttempts must be at least 1") }
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
