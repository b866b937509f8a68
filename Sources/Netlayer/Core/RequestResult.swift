/// How one request ended, decoded: what `NetlayerClient` hands back for each request.
public enum RequestResult: Sendable {
    case success(DataResponse<ResponseValue>)
    /// `response` is what the server answered, when it answered.
    case failure(DataTransferError, response: HTTPResponse?, attempts: Int)

    /// Decodes `outcome` with `decoder` through `dataTransfer` (resolver, empty-body
    /// rules, logging). A JSON body held in memory is checked and kept as text
    /// (`RawJSON`), not parsed into a tree: a caller that writes it into another
    /// document copies it.
    init(_ outcome: NetworkOutcome, request: HTTPRequest, decoder: any ResponseDecoder,
         dataTransfer: DefaultDataTransferService) {
        // A metatype comparison: `decoder is JSONResponseDecoder` is a runtime cast.
        if type(of: decoder) == JSONResponseDecoder.self, outcome.holdsBodyInMemory {
            let decoded: Result<DataResponse<RawJSON>, DataTransferError> = dataTransfer.decode(
                outcome, request: request, decoder: decoder)
            self.init(decoded.map { $0.withValue(.text($0.value)) }, outcome: outcome)
        } else {
            let decoded: Result<DataResponse<JSON>, DataTransferError> = dataTransfer.decode(
                outcome, request: request, decoder: decoder)
            self.init(decoded.map { $0.withValue(.value($0.value)) }, outcome: outcome)
        }
    }

    private init(_ decoded: Result<DataResponse<ResponseValue>, DataTransferError>, outcome: NetworkOutcome) {
        switch decoded {
        case .success(let response): self = .success(response)
        case .failure(let error): self = .failure(error, response: try? outcome.result.get(), attempts: outcome.attempts)
        }
    }
}

/// A decoded response body: JSON text already checked, or any other JSON value
/// (text, base64, a downloaded file's description, null).
public enum ResponseValue: Sendable {
    case text(RawJSON)
    case value(JSON)
}

extension DataResponse {
    /// The same response with another value.
    func withValue<Other>(_ value: Other) -> DataResponse<Other> {
        var response = DataResponse<Other>(value: value, statusCode: statusCode, headers: headers, attempts: attempts,
                                           totalMs: totalMs, fromCache: fromCache)
        response.streamEvents = streamEvents
        response.httpVersion = httpVersion
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
