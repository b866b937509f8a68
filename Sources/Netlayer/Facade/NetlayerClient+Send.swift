import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// The Swift facade, in the spirit of kean/Get: `send` an endpoint and await its
/// decoded response. Cancelling the awaiting `Task` cancels the transfer.
///
/// ```swift
/// let client = try NetlayerClient(baseURL: "https://api.example.com/v3/")
/// let user: User = try await client.send(.get("user")).value
/// ```
extension NetlayerClient {
    /// Sends `endpoint` and decodes its body into `T` with the endpoint's decoder (a
    /// `JSONResponseDecoder` without its own `JSONDecoder` uses the client's).
    /// - Throws: `DataTransferError`, whose `kind` is the contract's error kind.
    public func send<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) async throws(DataTransferError) -> DataResponse<T> {
        try await service.response(with: withClientDecoding(endpoint))
    }

    /// Sends `endpoint`, keeping only whether it succeeded (the status is checked).
    public func send(_ endpoint: Endpoint<Void>) async throws(DataTransferError) {
        try await service.request(with: endpoint)
    }

    /// `endpoint` with the client's `JSONDecoder` where its JSON decoder names none.
    func withClientDecoding<T>(_ endpoint: Endpoint<T>) -> Endpoint<T> {
        guard let make = makeJSONDecoder, var json = endpoint.responseDecoder as? JSONResponseDecoder,
              json.makeDecoder == nil else { return endpoint }
        json.makeDecoder = make
        var endpoint = endpoint
        endpoint.responseDecoder = json
        return endpoint
    }
}
