import Synchronization

extension RequestAttempts {
    /// What the attempts of a request need from their service: the transport, the
    /// interceptor, the logger and the status check. One per service.
    package final class AttemptEnvironment: Sendable {
        let sessionManager: any NetworkSessionManager
        /// `interceptor` is not nil: read before taking the lock, so that a client without
        /// one pays an atomic load per attempt for it.
        private let hasInterceptor: Atomic<Bool>
        private let installed: Locked<(any RequestInterceptor)?>
        /// nil when it logs nothing: then no event is made at all.
        let logger: (any NetworkErrorLogger)?
        package let cache: (any ResponseCaching)?
        /// `logger != nil` and `cache != nil`, asked first on every request: testing an
        /// optional existential copies it through its type's value witnesses, even a nil one.
        let logs: Bool
        let hasCache: Bool
        let retrierLock = Locked(())
        /// The transport's cookie jar, for those that must know every credential.
        let cookies: (any CookieSource)?
        /// One counter for the process: ids are unique across clients, so that results of
        /// several clients can share one queue (`nl_queue_push`) and still be told apart.
        private static let nextID = Atomic<UInt64>(1)

        package init(sessionManager: any NetworkSessionManager, interceptor: (any RequestInterceptor)?,
             logger: any NetworkErrorLogger, cache: (any ResponseCaching)?) {
            self.sessionManager = sessionManager
            cookies = sessionManager.cookieSource
            self.cache = cache
            hasCache = cache != nil
            hasInterceptor = Atomic(interceptor != nil)
            installed = Locked(interceptor)
            self.logger = logger.isEnabled ? logger : nil
            logs = logger.isEnabled
        }

        /// Whether an interceptor is installed (one atomic load; no optional to destroy).
        var mayIntercept: Bool { hasInterceptor.load(ordering: .acquiring) }

        /// The interceptor of the attempts that start from now on: adapts each attempt and
        /// decides retries before the policy (`NetlayerClient.setInterceptor`).
        var interceptor: (any RequestInterceptor)? {
            get {
                guard hasInterceptor.load(ordering: .acquiring) else { return nil }
                return installed.withLock { $0 }
            }
            set {
                installed.withLock { $0 = newValue }
                hasInterceptor.store(newValue != nil, ordering: .releasing)
            }
        }

        package func newID() -> UInt64 { Self.newRequestID() }

        /// A new request id: unique in the process, never 0.
        package static func newRequestID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

        /// Logs the attempt's outcome; a status outside the request's acceptable ones
        /// becomes `NetworkError.error`.
        func validate(_ result: consuming Result<HTTPResponse, NetworkError>, request: HTTPRequest,
                      attempts: RequestAttempts) -> Result<HTTPResponse, NetworkError> {
            // `result` is handed back as it came whenever it stands (no copy of the response).
            switch result {
            case .success(let response):
                if logs { logger?.log(response: response, request: request, context: attempts.contextForLog) }
                guard request.options.acceptableStatus.contains(response.statusCode) else {
                    let error = NetworkError.error(statusCode: response.statusCode, response: response)
                    if logs { logger?.log(error: error, request: request, context: attempts.contextForLog) }
                    return .failure(error)
                }
            case .failure(let error):
                if logs { logger?.log(error: error, request: request, context: attempts.contextForLog) }
            }
            return result
        }
    }
}
