// libFuzzer entry point over Netlayer's JSON entry points, OpenAPI documents and the
// header sections servers send. Built by Tests/fuzz/run.sh
// together with the Netlayer and NetlayerC sources as one module, so internal types
// are reachable. The first byte picks the entry point; the rest is its input.

@_cdecl("LLVMFuzzerTestOneInput")
public func netlayerFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 8 {
    case 0: fuzzConfig(input)
    case 1: fuzzEndpoint(input)
    case 2: fuzzDecoding(input)
    case 3: fuzzPathTemplate(input)
    case 4: fuzzStream(input)
    case 5: fuzzOpenAPI(input)
    case 7: fuzzResponseHeaders(input)
    default: fuzzJSONRoundTrip(input)
    }
    return 0
}

/// OpenAPI documents as JSON or YAML text (libyaml's events, scalars, aliases, `$ref`s),
/// then a call of each operation without arguments: its checks and serialization.
private func fuzzOpenAPI(_ input: UnsafeBufferPointer<UInt8>) {
    guard let document = try? OpenAPIDocument(text: input) else { return }
    for operation in document.operations.prefix(8) {
        _ = try? document.endpointDocument(for: operation, overlay: .object(["params": .object(JSONObject())]),
                                           credentials: OpenAPICredentials(), hasBaseURL: true)
    }
}

/// A header section as a server sends it (lines split at LF, each given the CRLF
/// libcurl passes on), with the first line's bytes as the body: the field records, the
/// `auto` decoder's Content-Type and charset reading (Fetch's "extract a MIME type",
/// the Encoding Standard's labels), HTTP-date fields, and the result document, which
/// must stay JSON whatever bytes the fields hold.
private func fuzzResponseHeaders(_ input: UnsafeBufferPointer<UInt8>) {
    var received = HTTPResponse.ReceivedHeaders()
    var body: [UInt8] = []
    var start = 0
    for i in 0...input.count where i == input.count || input[i] == 0x0A {
        let line = Array(input[start..<i]) + [0x0D, 0x0A]
        if start == 0 { body = Array(input[start..<i]) }
        start = i + 1
        guard line.withUnsafeBytes({ received.append(line: $0) }) == nil else { return }  // refused framing
    }
    let headers = HTTPHeaders(received: received)
    let response = HTTPResponse(statusCode: 200, headers: headers, body: body)
    if let reading = AutoResponseDecoder.reading(for: response) {
        _ = AutoResponseDecoder.decoder(for: reading.choice, charset: reading.charset)
    }
    for name in ["date", "expires", "last-modified", "retry-after"] {
        for value in headers.values(named: name) { _ = HTTPDate.parse(value) }
    }
    _ = CacheControl(headers["cache-control"])
    let document = RequestResult.ResultDocument.success(response, value: .value(.null), attempts: 1, decoder: nil, charset: nil,
                                          redactedQuery: [])
    let bytes = document.bytes
    let parsed: JSON
    do {
        parsed = try JSONParser.parse(bytes)
    } catch {
        fatalError("a header section made a result document that is not JSON (\(error)): \(bytes)")
    }
    guard case .object(let object) = parsed, case .object? = object["headers"] else {
        fatalError("a header section made a result document without headers: \(String(decoding: bytes, as: UTF8.self))")
    }
}

/// Config documents: parsing, validation, named endpoints.
private func fuzzConfig(_ input: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(input) else { return }
    _ = try? ConfigDocument(json)
}

/// Endpoint documents through request building: URL joining, query and header
/// validation, body encodings. Every built URL must keep the base host, and no
/// header may be one the library sets itself (Host, Content-Length, Transfer-Encoding).
private func fuzzEndpoint(_ input: UnsafeBufferPointer<UInt8>) {
    guard let json = try? JSONParser.parse(input),
          let endpoint = try? EndpointDocument(json).endpoint,
          let request = try? endpoint.httpRequest(with: fuzzConfiguration)
    else { return }
    if !endpoint.isFullPath, !request.url.hasPrefix("http://127.0.0.1:9/base/") {
        fatalError("a path changed the host: \(request.url)")
    }
    for field in request.headers where field.value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
        fatalError("a header value with CR, LF or NUL was built")
    }
    for field in request.headers where HTTPHeaders.libraryOwnedReason(field.name) != nil {
        fatalError("a caller's \(field.name) header was built")
    }
}

private let fuzzConfiguration = NetworkConfig(baseURL: "http://127.0.0.1:9/base/", headers: ["Accept": "application/json"],
                                              queryParameters: ["k": "v"])

/// A response body through the JSON decoder with a key path, via a stub transport.
private func fuzzDecoding(_ input: UnsafeBufferPointer<UInt8>) {
    // Input: keyPath, a NUL byte, then the body.
    let split = input.firstIndex(of: 0) ?? input.count
    let keyPath = String(decoding: UnsafeBufferPointer(rebasing: input[..<split]), as: UTF8.self)
    let body = split < input.count ? Array(input[(split + 1)...]) : []
    let service = DefaultDataTransferService(with: DefaultNetworkService(
        config: fuzzConfiguration, sessionManager: StubSession(body: body)))
    let decoders: [any ResponseDecoder] = [JSONResponseDecoder(keyPath: keyPath), StringResponseDecoder(),
                                           Base64ResponseDecoder()]
    for decoder in decoders {
        let request = HTTPRequest(url: "http://127.0.0.1:9/base/x")
        let outcome = service.networkService.sendBlocking(request, id: 1)
        let decoded: Result<DataResponse<JSON>, DataTransferError> = service.decode(outcome, request: request, decoder: decoder)
        guard case .success(let decodedResponse) = decoded, case .success(let http) = outcome.result else { continue }
        _ = RequestResult.ResultDocument.success(http, value: .value(decodedResponse.value), attempts: 1, decoder: nil, charset: nil,
                                   redactedQuery: [])
        // The checked JSON text too, as result documents carry a JSON body.
        let text: Result<DataResponse<RawJSON>, DataTransferError> = service.decode(outcome, request: request, decoder: decoder)
        if case .success(let checked) = text {
            _ = RequestResult.ResultDocument.success(http, value: .text(checked.value), attempts: 1, decoder: .json, charset: nil,
                                       redactedQuery: ["token"])
        }
    }
}

/// `{placeholder}` substitution with arbitrary templates and parameters.
private func fuzzPathTemplate(_ input: UnsafeBufferPointer<UInt8>) {
    let split = input.firstIndex(of: 0) ?? input.count
    let template = String(decoding: UnsafeBufferPointer(rebasing: input[..<split]), as: UTF8.self)
    let rest = split < input.count ? UnsafeBufferPointer(rebasing: input[(split + 1)...]) : UnsafeBufferPointer(start: nil, count: 0)
    guard case .object(let params)? = try? JSONParser.parse(rest) else { return }
    if let path = try? PathTemplate.render(template, params: params),
       path.contains("?") && !template.contains("?") {
        fatalError("a parameter added a query: \(path)")
    }
}

/// Server-sent events, lines and chunks, fed in two pieces, without a bound on a line
/// or event and with a small one.
private func fuzzStream(_ input: UnsafeBufferPointer<UInt8>) {
    let bounds: [(StreamMode, Int)] = StreamMode.allCases.map { ($0, .max) } + [(.sse, 16), (.lines, 16)]
    for (mode, bound) in bounds {
        var parser = StreamParser(mode: mode, maxItemBytes: bound)
        let half = input.count / 2
        let raw = UnsafeRawBufferPointer(input)
        _ = parser.feed(UnsafeRawBufferPointer(rebasing: raw[..<half]))
        _ = parser.feed(UnsafeRawBufferPointer(rebasing: raw[half...]))
        _ = parser.finish()
    }
}

/// Whatever parses must write back to text that parses to the same value.
private func fuzzJSONRoundTrip(_ input: UnsafeBufferPointer<UInt8>) {
    // The quick check that lets result documents copy a body must never pass
    // a text the parser refuses.
    if JSONParser.JSONFastCheck.isValid(input), (try? JSONParser.parse(input)) == nil {
        fatalError("JSONParser.JSONFastCheck accepted a text JSONParser rejects")
    }
    guard let value = try? JSONParser.parse(input) else { return }
    let written = JSONWriter.serialize(value)
    guard let again = try? JSONParser.parse(written), equivalent(again, value) else {
        fatalError("JSON round trip changed the value")
    }
}

/// Equal, counting 2.0 and 2 as the same number (the writer prints whole doubles as integers).
private func equivalent(_ a: JSON, _ b: JSON) -> Bool {
    switch (a, b) {
    case (.array(let x), .array(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { equivalent($0, $1) }
    case (.object(let x), .object(let y)):
        return x.keys == y.keys && zip(x, y).allSatisfy { $0.key == $1.key && equivalent($0.value, $1.value) }
    default:
        if let p = a.doubleValue, let q = b.doubleValue { return p == q }
        return a == b
    }
}

/// A transport that answers every request with the same body.
private struct StubSession: NetworkSessionManager {
    let body: [UInt8]

    func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        completion(requestBlocking(request))
        return DeferredCancellable()
    }

    func requestBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        .success(HTTPResponse(statusCode: 200, headers: ["content-type": "application/json"], body: body))
    }
}
