import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// Sends endpoints and validates the status (the seeds' `NetworkService`), with
/// retries, the interceptor and logging around every attempt.
public protocol NetworkService: Sendable {
    typealias CompletionHandler = @Sendable (NetworkOutcome) -> Void

    /// The request `endpoint` describes under this service's config.
    func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest

    /// Sends a built request; a status outside its `acceptableStatus` is
    /// `NetworkError.error`. `completion` runs exactly once, on a transport thread.
    /// - Parameter id: the request's id in logs and hooks; nil picks a new one.
    func send(_ request: HTTPRequest, id: UInt64?, completion: @escaping CompletionHandler) -> any NetworkCancellable

    /// Sends a built request and waits for it on the calling thread, with the same
    /// attempts, status validation and logging as `send`.
    func sendBlocking(_ request: HTTPRequest, id: UInt64?) -> NetworkOutcome
}

extension NetworkService {
    /// Builds and sends `endpoint` (the seeds' form). A request that cannot be built
    /// completes at once, on the calling thread, and returns nil.
    @discardableResult
    public func request(endpoint: some Requestable,
                        completion: @escaping @Sendable (Result<HTTPResponse, NetworkError>) -> Void) -> (any NetworkCancellable)? {
        let request: HTTPRequest
        do {
            request = try makeRequest(for: endpoint)
        } catch {
            completion(.failure(error))
            return nil
        }
        return send(request, id: nil) { completion($0.result) }
    }
}

/// The default `NetworkService` over a `NetworkSessionManager`.
public struct DefaultNetworkService: NetworkService {
    public let config: any NetworkConfigurable
    public let sessionManager: any NetworkSessionManager
    private let environment: RequestAttempts.AttemptEnvironment
    /// The config's base URL, headers, query and options, checked once.
    private let defaults: Result<RequestDefaults, NetworkError>

    /// - Parameters:
    ///   - interceptor: adapts every attempt and decides retries before the policy.
    ///   - logger: sees every attempt's request, response and error.
    ///   - cache: answers and stores requests whose endpoint sets `useCache`.
    public init(config: any NetworkConfigurable,
                sessionManager: any NetworkSessionManager,
                interceptor: (any RequestInterceptor)? = nil,
                logger: any NetworkErrorLogger = DefaultNetworkErrorLogger(),
                cache: (any ResponseCaching)? = nil) {
        self.config = config
        self.sessionManager = sessionManager
        environment = RequestAttempts.AttemptEnvironment(sessionManager: sessionManager, interceptor: interceptor, logger: logger,
                                         cache: cache)
        defaults = Result { () throws(NetworkError) in
            try sessionManager.check(config.requestOptions)
            return try RequestDefaults(config, parser: sessionManager.urlParser)
        }
    }

    /// Why this service's config cannot make requests (a bad base URL, an option the
    /// transport cannot honour), or nil: a client checks it when it is made.
    package var configError: NetworkError? {
        if case .failure(let error) = defaults { return error }
        return nil
    }

    public func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest {
        let request = try HTTPRequest.build(endpoint, defaults: try defaults.get())
        if request.transfer.useCache, environment.cache == nil {
            throw .invalidRequest("useCache needs a response cache (config cache.enabled)")
        }
        return request
    }

    public func send(_ request: HTTPRequest, id: UInt64? = nil,
                     completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let attempts = RequestAttempts(environment: environment, request: request, id: id ?? environment.newID(),
                                       completion: completion)
        attempts.start()
        return attempts
    }

    public func sendBlocking(_ request: HTTPRequest, id: UInt64? = nil) -> NetworkOutcome {
        let id = id ?? environment.newID()
        let attempts = RequestAttempts(environment: environment, request: request, id: id, completion: nil)
        guard sessionManager.run({ attempts.start() }, until: attempts, interrupt: Platform.ThreadInterrupt.armed()) else {
            attempts.cancel()
            return NetworkOutcome(result: .failure(Platform.ThreadInterrupt.error), attempts: 1, id: id)
        }
        return attempts.outcome ?? NetworkOutcome(result: .failure(.cancelled), attempts: 1, id: id)
    }
}
