import Glibc
import Synchronization
import NetlayerJSON

/// Runs one request through its attempts: adapt, send, follow redirects, validate the
/// status, and on failure ask the retrier and the retry policy whether and when to go
/// again, all within the request's deadline. One driver for every way to run a
/// request: it hops between transport callbacks and scheduled back-off, and a blocking
/// call is a start and a wait (`NetworkSessionManager.run(_:until:interrupt:)`), with
/// the calling thread driving the transport meanwhile when it can.
package final class RequestAttempts: NetworkCancellable, @unchecked Sendable {
    private let environment: AttemptEnvironment
    private let original: HTTPRequest
    private let id: UInt64
    private let startedAt = MonotonicClock.now()
    private let completion: (@Sendable (NetworkOutcome) -> Void)?
    private let state = Locked<(current: (any NetworkCancellable)?, cancelled: Bool, finished: Bool)>((nil, false, false))
    private var attempt = 0  // touched by one thread at a time: each step hands over to the next
    /// Validators and the cached response of a stale cache entry being revalidated.
    private var revalidation: (validators: HTTPHeaders, cached: HTTPResponse)?
    /// The credentials the last attempt was sent with (after the adapter, the jar's
    /// cookies as they were then): a response is cached under the credentials it was
    /// fetched with, including a hook's.
    private var sentCredentials: RequestCredentials?

    package init(environment: AttemptEnvironment, request: HTTPRequest, id: UInt64,
         completion: (@Sendable (NetworkOutcome) -> Void)?) {
        self.environment = environment
        self.original = request
        self.id = id
        self.completion = completion
    }

    /// Where the request is, for the interceptor and the logger.
    private var context: RequestContext { RequestContext(id: id, attempt: attempt, cookies: environment.cookies) }

    // MARK: Async driver

    package func start() {
        if let cached = cachedAnswer() {
            // Like any answer, on a transport thread and never inside send(): a caller
            // may hold a lock its completion takes. Until then it can be cancelled.
            environment.sessionManager.schedule(after: 0) { [self] in finish(.success(cached)) }
            return
        }
        attemptNext(lastError: nil)
    }

    private func attemptNext(lastError: NetworkError?) {
        let request: HTTPRequest
        switch prepareAttempt(lastError: lastError) {
        case .failure(let error):
            finish(.failure(error))
            return
        case .success(let prepared):
            request = prepared
        }
        send(request, context: context, redirects: [], redirectMs: 0)
    }

    /// One hop of an attempt: the request, or a redirect of it, after the `redirects`
    /// followed so far, which took `redirectMs`.
    private func send(_ request: HTTPRequest, context: RequestContext, redirects: [RedirectHop], redirectMs: Double) {
        let transfer = environment.sessionManager.request(request) { [self] result in
            switch RedirectPolicy.next(after: result, request: request, redirects: redirects.count,
                                       parser: environment.sessionManager.urlParser) {
            case .follow(let next):
                environment.logger.log(request: next, context: context)  // each hop is a request of its own
                let hop = RedirectHop(status: (try? result.get())?.statusCode ?? 0, url: request.url)
                send(next, context: context, redirects: redirects + [hop], redirectMs: redirectMs + Self.spent(result))
            case .fail(let error):
                conclude(.failure(error), request: request, context: context)
            case .done:
                conclude(Self.adding(redirects, redirectMs, to: result), request: request, context: context)
            }
        }
        let cancelNow = state.withLock { s -> Bool in
            // The transfer may have finished already (on the loop thread): keeping it
            // then would tie it and this object to each other for good.
            if !s.finished { s.current = transfer }
            return s.cancelled
        }
        if cancelNow { transfer.cancel() }
    }

    /// The end of an attempt: finish, or schedule the next one.
    private func conclude(_ result: Result<HTTPResponse, NetworkError>, request: HTTPRequest, context: RequestContext) {
        let validated = environment.validate(throughCache(result), request: request, context: context)
        switch validated {
        case .success:
            finish(validated)
        case .failure(let error):
            switch decide(after: error, request: request) {
            case .success(.retry(let delay)):
                environment.sessionManager.schedule(after: delay) { [self] in attemptNext(lastError: error) }
            case .success:
                finish(validated)
            case .failure(let hookError):
                finish(.failure(hookError))
            }
        }
    }

    /// A `cancel()` that returned true before this point wins: the completion then
    /// reports `cancelled` even if the transfer had already succeeded (it reached the
    /// loop thread while the completion was on its way), as `cancel()` promised.
    private func finish(_ result: Result<HTTPResponse, NetworkError>) {
        let (first, cancelled) = state.withLock { s -> (Bool, Bool) in
            defer { s.finished = true; s.current = nil }
            return (!s.finished, s.cancelled)
        }
        guard first else { return }
        completion?(NetworkOutcome(result: cancelled ? .failure(.cancelled) : result, attempts: attempt, id: id))
    }

    @discardableResult
    package func cancel() -> Bool {
        let (current, wasLive) = state.withLock { s -> ((any NetworkCancellable)?, Bool) in
            defer { s.cancelled = true }
            return (s.current, !s.finished && !s.cancelled)
        }
        current?.cancel()
        return wasLive
    }

    // MARK: Shared steps

    private var cache: (any ResponseCaching)? {
        guard original.transfer.useCache, let cache = environment.cache, cache.isCacheable(original) else { return nil }
        return cache
    }

    /// A fresh cached response, or nil (noting validators of a stale entry to send).
    private func cachedAnswer() -> HTTPResponse? {
        guard let cache else { return nil }
        let lookup = cache.lookup(original, credentials: RequestCredentials(of: original, cookies: environment.cookies))
        if var response = lookup.fresh {
            response.fromCache = true
            return response
        }
        if let stale = lookup.revalidation { revalidation = (stale.validators, stale.cached) }
        return nil
    }

    /// Stores what may be cached, and turns a 304 into the cached response.
    private func throughCache(_ result: consuming Result<HTTPResponse, NetworkError>) -> Result<HTTPResponse, NetworkError> {
        guard let cache, case .success(let response) = result else { return result }
        // The original's URL and method are the key; the credentials are those it was sent with.
        let credentials = sentCredentials ?? RequestCredentials(of: original, cookies: environment.cookies)
        if response.statusCode == 304, let cached = revalidation?.cached {
            return .success(cache.revalidated(response, cached: cached, for: original, credentials: credentials))
        }
        cache.store(response, for: original, credentials: credentials)
        return result
    }

    /// The request for the next attempt, with the per-attempt timeout clipped to what
    /// is left of the deadline and the deadline set to what is left; fails when the
    /// deadline has passed or the adapter refuses.
    private func prepareAttempt(lastError: NetworkError?) -> Result<HTTPRequest, NetworkError> {
        if state.withLock({ $0.cancelled }) { return .failure(.cancelled) }
        attempt += 1
        var request = original
        if let deadline = original.options.deadline {
            let remaining = deadline - MonotonicClock.seconds(since: startedAt)
            if remaining <= 0.001 {
                return .failure(lastError ?? .timedOut("the deadline of \(deadline) s passed"))
            }
            request.options.timeout = min(request.options.timeout ?? remaining, remaining)
            request.options.deadline = remaining  // bounds a stream, whose timeout bounds only its silences
        }
        if let revalidation {
            for field in revalidation.validators where request.headers[field.name] == nil {
                request.headers[field.name] = field.value
            }
        }
        if let adapter = environment.adapter {
            do {
                request = try adapter.adapt(request, context: context)
                try request.headers.validate()
            } catch {
                return .failure(error)
            }
        }
        if cache != nil { sentCredentials = RequestCredentials(of: request, cookies: environment.cookies) }
        environment.logger.log(request: request, context: context)
        return .success(request)
    }

    /// Retry or not after a failed attempt: the retrier first (serialised per
    /// service), then the policy; never past `maxAttempts` or the deadline. A
    /// retrier that throws (a malformed hook reply) fails the request with its error.
    private func decide(after error: NetworkError, request: HTTPRequest) -> Result<RetryDecision, NetworkError> {
        if error.isCancelled || state.withLock({ $0.cancelled }) { return .success(.doNotRetry) }
        let policy = original.options.retry
        guard attempt < policy.maxAttempts else { return .success(.doNotRetry) }
        var decision = RetryDecision.useDefault
        if let retrier = environment.retrier {
            do {
                decision = try environment.retrierLock.withLock { _ throws(NetworkError) -> RetryDecision in
                    try retrier.retry(request, context: context, dueTo: error)
                }
            } catch {
                return .failure(error)
            }
        }
        var delay: Double
        switch decision {
        case .doNotRetry: return .success(.doNotRetry)
        case .retry(let d): delay = max(0, d)
        case .useDefault:
            guard policy.shouldRetry(error, method: request.method) else { return .success(.doNotRetry) }
            delay = policy.delay(after: attempt, error: error)
        }
        if let deadline = original.options.deadline {
            let remaining = deadline - MonotonicClock.seconds(since: startedAt)
            guard remaining > 0.001 else { return .success(.doNotRetry) }
            delay = min(delay, remaining)  // the next attempt then ends at the deadline
        }
        return .success(.retry(delay: delay))
    }
}

/// What the attempts of a request need from their service: the transport, the
/// interceptor, the logger and the status check. One per service.
package final class AttemptEnvironment: Sendable {
    let sessionManager: any NetworkSessionManager
    let adapter: (any RequestAdapter)?
    let retrier: (any RequestRetrier)?
    let logger: any NetworkErrorLogger
    package let cache: (any ResponseCaching)?
    let retrierLock = Locked(())
    /// The transport's cookie jar, for those that must know every credential.
    let cookies: (any CookieSource)?
    private let nextID = Atomic<UInt64>(1)

    package init(sessionManager: any NetworkSessionManager, interceptor: (any RequestInterceptor)?,
         logger: any NetworkErrorLogger, cache: (any ResponseCaching)?) {
        self.sessionManager = sessionManager
        cookies = sessionManager.cookieSource
        self.cache = cache
        self.adapter = interceptor
        self.retrier = interceptor
        self.logger = logger
    }

    package func newID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Logs the attempt's outcome; a status outside the request's acceptable ones
    /// becomes `NetworkError.error`.
    func validate(_ result: consuming Result<HTTPResponse, NetworkError>, request: HTTPRequest,
                  context: RequestContext) -> Result<HTTPResponse, NetworkError> {
        // `result` is handed back as it came whenever it stands (no copy of the response).
        switch result {
        case .success(let response):
            logger.log(response: response, request: request, context: context)
            guard request.options.acceptableStatus.contains(response.statusCode) else {
                let error = NetworkError.error(statusCode: response.statusCode, response: response)
                logger.log(error: error, request: request, context: context)
                return .failure(error)
            }
        case .failure(let error):
            logger.log(error: error, request: request, context: context)
        }
        return result
    }
}

/// Monotonic time for deadlines.
package enum MonotonicClock {
    package static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func seconds(since start: UInt64) -> Double {
        Double(now() &- start) / 1e9
    }
}

extension RequestAttempts {
    /// What a redirect hop took.
    private static func spent(_ result: Result<HTTPResponse, NetworkError>) -> Double {
        (try? result.get())?.totalMs ?? 0
    }

    /// `result` with the redirects before it, and their time, counted in.
    private static func adding(_ redirects: [RedirectHop], _ redirectMs: Double,
                               to result: Result<HTTPResponse, NetworkError>) -> Result<HTTPResponse, NetworkError> {
        guard !redirects.isEmpty else { return result }
        return result.map { response in
            var response = response
            response.redirects = redirects
            response.timing.redirectMs = redirectMs
            response.totalMs += redirectMs
            return response
        }
    }
}
