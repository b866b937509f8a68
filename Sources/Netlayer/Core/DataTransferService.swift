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
            completion(result.map { _ in () }.mapError { self.finish(self.resolve($0)) })
        }
    }

    /// Turns a transport result into a decoded result: status errors go through the
    /// resolver, empty bodies follow the 204/205/HEAD rule, then the decoder runs.
    public func decode<T: Decodable>(_ outcome: NetworkOutcome, request: HTTPRequest,
                                     decoder: any ResponseDecoder) -> Result<DataResponse<T>, DataTransferError> {
        switch outcome.result {
        case .failure(let error):
            return .failure(finish(resolve(error)))
        case .success(let response):
            do {
                let value: T = try decodeBody(response, method: request.method,
                                              decoder: AutoResponseDecoder.resolve(decoder, for: response))
                var decoded = DataResponse(value: value, statusCode: response.statusCode, headers: response.headers,
                                           attempts: outcome.attempts, totalMs: response.totalMs)
                decoded.streamEvents = response.streamEvents
                decoded.httpVersion = response.httpVersion
                decoded.timing = response.timing
                decoded.fromCache = response.fromCache
                return .success(decoded)
            } catch {
                return .failure(finish(error))
            }
        }
    }

    private func decodeBody<T: Decodable>(_ response: HTTPResponse, method: HTTPMethod,
                                          decoder: any ResponseDecoder) throws(DataTransferError) -> T {
        if let file = response.downloadedFile {
            // The body is on disk: the value says where.
            if T.self == JSON.self {
                return JSON.object(["path": .string(file), "bytes": .int(response.bodyBytes)]) as! T
            }
            if let path = file as? T { return path }
            return try decoder.decodeEmpty()
        }
        if response.streamEvents != nil { return try EmptyResponseDecoder().decodeEmpty() }
        if response.body.isEmpty && decoder.requiresBody {
            if response.statusCode == 204 || response.statusCode == 205 || method == .head {
                return try decoder.decodeEmpty()
            }
            throw .noResponse
        }
        return try decoder.decode(response.body)
    }

    private func resolve(_ error: NetworkError) -> DataTransferError {
        let resolved = errorResolver.resolve(error: error)
        if let network = resolved as? NetworkError { return .networkFailure(network) }
        return .resolvedNetworkFailure(resolved)
    }

    private func finish(_ error: DataTransferError) -> DataTransferError {
        errorLogger.log(error: error)
        return error
    }
}
