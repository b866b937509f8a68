import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// How one request ended, decoded: what `NetlayerClient` hands back for each request,
/// and what a result document (`document`) is written from.
public struct RequestResult: Sendable {
    /// What the server answered, when a complete response arrived: for a success, and
    /// for a failure that came with one (a status outside `acceptableStatus`, a body
    /// that does not decode).
    public var response: HTTPResponse?
    /// The decoded body of a success; nil for a failure.
    public var value: ResponseValue?
    /// Why the request failed; nil for a success. Its message holds no value of the
    /// client's secret query parameters.
    public var error: DataTransferError?
    /// How many attempts were made.
    public var attempts: Int
    /// What an `AutoResponseDecoder` chose for the body, or the text, base64 or none
    /// decoder an endpoint named; nil for JSON (and any other decoder) it named.
    public var decoderChoice: AutoResponseDecoder.Choice?
    /// For a textual body an `AutoResponseDecoder` read: the encoding its
    /// `Content-Type` names, when the Encoding Standard knows it.
    public var charset: TextEncoding?
    /// The client's secret query names (besides the well-known ones), kept out of the
    /// URLs the result document names.
    package var secretQueryNames: Set<String> = []

    /// The result document (`{"ok": true, "status": ..., "value": ...}` or a failure's),
    /// as the C ABI's `nl_request` returns it: UTF-8 JSON text.
    public var document: [UInt8] { ResultDocument.write(self).bytes }

    /// The decoded response, or the error.
    public var decoded: Result<DataResponse<ResponseValue>, DataTransferError> {
        if let error { return .failure(error) }
        guard let value, let response else { return .failure(.noResponse) }
        return .success(DataResponse(value: value, response: response, attempts: attempts))
    }

    /// Decodes `outcome` with `decoder` as `client` decodes (resolver, empty-body
    /// rules, logging, redaction). A JSON body held in memory is checked and kept as
    /// text (`RawJSON`), not parsed into a tree: a caller that writes it into another
    /// document copies it.
    package init(_ outcome: NetworkOutcome, request: HTTPRequest, decoder: any ResponseDecoder, client: NetlayerClient) {
        attempts = outcome.attempts
        secretQueryNames = client.secretQueryNames
        let response: HTTPResponse
        switch outcome.result {
        case .failure(let failure):
            error = client.failure(failure, of: request)
            self.response = failure.response
            return
        case .success(let received):
            response = received
        }
        self.response = response
        var decoder = decoder
        if decoder.followsContentType, let reading = AutoResponseDecoder.reading(for: response) {
            decoderChoice = reading.choice
            charset = reading.charset
            decoder = decoder.resolved(for: reading.choice, charset: reading.charset)
        } else if type(of: decoder) == StringResponseDecoder.self {
            // Named too when the endpoint chose it: a reader (the Python package's
            // `.content`, `.json()`) then knows text from base64 from JSON.
            decoderChoice = .text
        } else if type(of: decoder) == Base64ResponseDecoder.self {
            decoderChoice = .base64
        } else if type(of: decoder) == EmptyResponseDecoder.self {
            decoderChoice = AutoResponseDecoder.Choice.none  // spelt out: `.none` would be the optional's nil
        }
        do throws(DataTransferError) {
            // A metatype comparison: `decoder is JSONResponseDecoder` is a runtime cast.
            if type(of: decoder) == JSONResponseDecoder.self, response.downloadedFile == nil, response.streamEvents == nil {
                let text: RawJSON = try ResponseDecoding.value(of: response, method: request.method, decoder: decoder)
                value = .text(text)
            } else {
                let tree: JSON = try ResponseDecoding.value(of: response, method: request.method, decoder: decoder)
                value = .value(tree)
            }
        } catch {
            self.error = client.failure(decoding: error)
        }
    }
}

extension RequestResult {
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
}

/// `RequestResult.ResponseValue` by the name it is known by.
public typealias ResponseValue = RequestResult.ResponseValue

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
