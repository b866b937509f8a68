/// Sends endpoints and validates the status (the seeds' `NetworkService`).
public protocol NetworkService: Sendable {
    typealias CompletionHandler = @Sendable (Result<HTTPResponse, NetworkError>) -> Void

    /// The request `endpoint` describes under this service's config.
    func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest

    /// Sends a built request; a status outside its `acceptableStatus` is
    /// `NetworkError.error`. `completion` runs exactly once, on a transport thread.
    func send(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable

    /// Sends a built request and waits for it on the calling thread, with the same
    /// status validation as `send`.
    func sendBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError>
}

extension NetworkService {
    /// Builds and sends `endpoint`. A request that cannot be built completes at once,
    /// on the calling thread, and returns nil.
    @discardableResult
    public func request(endpoint: some Requestable, completion: @escaping CompletionHandler) -> (any NetworkCancellable)? {
        let request: HTTPRequest
        do {
            request = try makeRequest(for: endpoint)
        } catch {
            completion(.failure(error))
            return nil
        }
        return send(request, completion: completion)
    }
}

/// The default `NetworkService` over a `NetworkSessionManager`.
public struct DefaultNetworkService: NetworkService {
    public let config: any NetworkConfigurable
    public let sessionManager: any NetworkSessionManager
    public let logger: any NetworkErrorLogger
    private let base: BaseURL?
    private let baseError: NetworkError?

    public init(config: any NetworkConfigurable,
                sessionManager: any NetworkSessionManager,
                logger: any NetworkErrorLogger = DefaultNetworkErrorLogger()) {
        self.config = config
        self.sessionManager = sessionManager
        self.logger = logger
        // Parsed once: every request reuses it.
        do {
            base = config.baseURL.isEmpty ? nil : try BaseURL(config.baseURL)
            baseError = nil
        } catch {
            base = nil
            baseError = error
        }
    }

    public func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest {
        if let baseError { throw baseError }
        return try RequestBuilder.build(endpoint, config: config, base: base)
    }

    public func send(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        logger.log(request: request)
        return sessionManager.request(request) { [self] result in
            completion(validate(result, for: request))
        }
    }

    public func sendBlocking(_ request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        logger.log(request: request)
        return validate(sessionManager.requestBlocking(request), for: request)
    }

    /// A status outside the request's acceptable ones becomes `NetworkError.error`.
    private func validate(_ result: Result<HTTPResponse, NetworkError>,
                          for request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        switch result {
        case .success(let response) where !request.options.acceptableStatus.contains(response.statusCode):
            let error = NetworkError.error(statusCode: response.statusCode, response: response)
            logger.log(error: error)
            return .failure(error)
        case .success(let response):
            logger.log(response: response)
            return .success(response)
        case .failure(let error):
            logger.log(error: error)
            return .failure(error)
        }
    }
}
