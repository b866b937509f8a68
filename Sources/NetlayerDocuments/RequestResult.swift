import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// How one request ended, decoded: what `NetlayerClient` hands back for each request.
public struct RequestResult: Sendable {
    /// The decoded response, or the error.
    public var decoded: Result<DataResponse<ResponseValue>, DataTransferError>
    /// For a failure: what the server answered, when it answered.
    public var response: HTTPResponse?
    /// How many attempts were made.
    public var attempts: Int
    /// What an `AutoResponseDecoder` chose for the body; nil for any other decoder.
    public var decoderChoice: AutoResponseDecoder.Choice?
    /// For a textual body an `AutoResponseDecoder` read: the encoding its
    /// `Content-Type` names, when the Encoding Standard knows it.
    public var charset: TextEncoding?

    /// Decodes `outcome` with `decoder` as `client` decodes (resolver, empty-body
    /// rules, logging). A JSON body held in memory is checked and kept as text
    /// (`RawJSON`), not parsed into a tree: a caller that writes it into another
    /// document copies it.
    package init(_ outcome: NetworkOutcome, request: HTTPRequest, decoder: any ResponseDecoder, client: NetlayerClient) {
        attempts = outcome.attempts
        var decoder = decoder
        if decoder.followsContentType, case .success(let response) = outcome.result,
           let reading = AutoResponseDecoder.reading(for: response) {
            decoderChoice = reading.choice
            charset = reading.charset
            decoder = decoder.resolved(for: reading.choice, charset: reading.charset)
        }
        // A metatype comparison: `decoder is JSONResponseDecoder` is a runtime cast.
        if type(of: decoder) == JSONResponseDecoder.self, outcome.holdsBodyInMemory {
            let decoded: Result<DataResponse<RawJSON>, DataTransferError> = client.decode(
                outcome, request: request, decoder: decoder)
            self.decoded = decoded.map { $0.withValue(.text($0.value)) }
        } else {
            let decoded: Result<DataResponse<JSON>, DataTransferError> = client.decode(
                outcome, request: request, decoder: decoder)
            self.decoded = decoded.map { $0.withValue(.value($0.value)) }
        }
        if case .failure(let error) = decoded { response = error.response ?? (try? outcome.result.get()) }
    }
}

/// A decoded response body: JSON text already checked, or any other JSON value
/// (text, base64, a downloaded file's description, null).
public struct ResponseValue: Sendable {
    /// The checked JSON text of a JSON body, when the body was JSON held in memory.
    public let text: RawJSON?
    /// The value otherwise (`.null` when `text` is set).
    public let value: JSON

    public static func text(_ text: RawJSON) -> ResponseValue { ResponseValue(text: text, value: .null) }
    public static func value(_ value: JSON) -> ResponseValue { ResponseValue(text: nil, value: value) }
}

extension DataResponse {
    /// The same response with another value.
    func withValue<Other>(_ value: Other) -> DataResponse<Other> {
        var response = DataResponse<Other>(value: value, statusCode: statusCode, headers: headers, attempts: attempts,
                                           totalMs: totalMs, fromCache: fromCache)
        response.streamEvents = streamEvents
        response.httpVersion = httpVersion
        response.timing = timing
        response.url = url
        response.redirects = redirects
        return response
    }
}

private extension NetworkOutcome {
    /// A success whose body is in memory: not written to a file, not streamed.
    var holdsBodyInMemory: Bool {
        guard case .success(let response) = result else { return false }
        return response.downloadedFile == nil && response.streamEvents == nil
    }
}

extension NetlayerClient {
    /// `perform(_:id:)`, decoded with `decoder`.
    public func perform(_ request: HTTPRequest, decoder: any ResponseDecoder, id: UInt64) -> RequestResult {
        RequestResult(perform(request, id: id), request: request, decoder: decoder, client: self)
    }

    /// `start(_:id:completion:)`, decoded with `decoder` (on the completion's thread).
    public func start(_ request: HTTPRequest, decoder: any ResponseDecoder, id: UInt64,
                      completion: @escaping @Sendable (RequestResult) -> Void) {
        start(request, id: id) { [self] outcome in
            completion(RequestResult(outcome, request: request, decoder: decoder, client: self))
        }
    }

    /// A batch (`perform(count:prepare:)`), each result decoded with its decoder.
    public func perform(count: Int, prepare: (Int) -> (HTTPRequest, any ResponseDecoder, UInt64)?) -> [RequestResult?] {
        perform(count: count) { index -> (HTTPRequest, UInt64, finish: @Sendable (NetworkOutcome) -> RequestResult)? in
            guard let (request, decoder, id) = prepare(index) else { return nil }
            return (request, id, { [self] in RequestResult($0, request: request, decoder: decoder, client: self) })
        }
    }
}
