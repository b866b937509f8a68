import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// Sends endpoints and decodes their responses (the seeds' `DataTransferService`).
///
/// The completion forms run their handler exactly once on a transport thread; the
/// async forms cancel the transfer when the calling `Task` is cancelled.
public protocol DataTransferService: Sendable {
    /// Sends `endpoint` and decodes the response with its `responseDecoder`,
    /// keeping status, headers and timing.
    @discardableResult
    func response<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping @Sendable (Result<DataResponse<T>, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == T

    /// Sends `endpoint` and only checks its status (the seeds' `Void` variant).
    @discardableResult
    func request<E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping @Sendable (Result<Void, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == Void
}

extension DataTransferService {
    /// The seeds' completion form: the decoded value only.
    @discardableResult
    public func request<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping @Sendable (Result<T, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == T {
        response(with: endpoint) { result in completion(result.map(\.value)) }
    }

    /// The decoded value and what came with it.
    public func response<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E
    ) async throws(DataTransferError) -> DataResponse<T> where E.Response == T {
        try await CancellableOperation.run { completion in
            response(with: endpoint, completion: completion)
        }
    }

    /// The decoded value.
    public func request<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E
    ) async throws(DataTransferError) -> T where E.Response == T {
        try await response(with: endpoint).value
    }

    /// Sends an endpoint whose response has no value.
    public func request<E: ResponseRequestable>(with endpoint: E) async throws(DataTransferError) where E.Response == Void {
        try await CancellableOperation.run { completion in
            request(with: endpoint, completion: completion)
        }
    }
}

/// The default `DataTransferService` over a `NetworkService`.
public struct DefaultDataTransferService: DataTransferService {
    public let networkService: any NetworkService
    public let errorResolver: any DataTransferErrorResolver
    public let errorLogger: any DataTransferErrorLogger

    public init(with networkService: any NetworkService,
                errorResolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver(),
                errorLogger: any DataTransferErrorLogger = DefaultNetworkErrorLogger()) {
        self.networkService = networkService
        self.errorResolver = errorResolver
        self.errorLogger = errorLogger
    }

    @discardableResult
    public func response<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping @Sendable (Result<DataResponse<T>, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == T {
        let request: HTTPRequest
        do {
            request = try networkService.makeRequest(for: endpoint)
        } catch {
            completion(.failure(finish(.networkFailure(error))))
            return nil
        }
        let decoder = endpoint.responseDecoder
        return networkService.send(request, id: nil) { outcome in
            completion(self.decode(outcome, request: request, decoder: decoder))
        }
    }

    @discardableResult
    public func request<E: ResponseRequestable>(
        with endpoint: E,
        completion: @escaping @Sendable (Result<Void, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == Void {
        networkService.request(endpoint: endpoint) { result in
            completion(result.map { _ in () }.mapError { self.finish(ResponseDecoding.resolve($0, with: self.errorResolver)) })
        }
    }

    /// Turns a transport result into a decoded result (`ResponseDecoding.decode`).
    public func decode<T: Decodable>(_ outcome: NetworkOutcome, request: HTTPRequest,
                                     decoder: any ResponseDecoder) -> Result<DataResponse<T>, DataTransferError> {
        ResponseDecoding.decode(outcome, method: request.method, decoder: decoder, resolver: errorResolver,
                                logger: errorLogger)
    }

    private func finish(_ error: DataTransferError) -> DataTransferError {
        errorLogger.log(error: error)
        return error
    }
}
