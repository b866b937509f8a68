import Glibc
import Synchronization
import NetlayerJSON

/// Runs one request through its attempts: adapt, send, follow redirects, validate the
/// status, and on failure ask the retrier and the retry policy whether and when to go
/// again, all within the request's deadline. One driver for every way to run a
/// request: it hops between transport callbacks and scheduled back-off, and a blocking
/// call is a start and a wait (`NetworkSessionManager.run(_:until:interrupt:)`), with
/// the calling thread driving the transport meanwhile when it can.
///
/// Without a completion, the attempts are themselves what a blocking caller waits
/// for: they keep the outcome and open as a `CompletionSignal` (one object where a
/// closure and a signal would be three).
package final class RequestAttempts: CompletionSignal, NetworkCancellable, @unchecked Sendable {
    let environment: AttemptEnvironment
    let original: HTTPRequest
    private let id: UInt64
    private let startedAt = Platform.MonotonicClock.now()
    private let completion: (@Sendable (NetworkOutcome) -> Void)?
    /// Guards `current`, `cancelled` and `finished`, which `cancel()` reaches from any thread.
    private var mutex = pthread_mutex_t()
    /// The transfer of the hop in flight, for `cancel()`; `NothingToCancel` between
    /// hops. Not an optional: a nil optional existential is still dropped through value
    /// witnesses, on every request.
    private var current: any NetworkCancellable = NothingToCancel()
    private var cancelled = false
    private var finished = false
    /// The caller paused reading (`pauseReading`): each hop's transfer starts paused.
    private var readingPaused = false
    /// Between attempts, waiting out a back-off: a cancel then ends the request at once.
    private var backingOff = false
    /// Set once a streamed attempt has handed an event to the caller: events cannot be
    /// taken back, so such a request is never tried again (curl does not retry once it
    /// has written output it cannot rewind). Made for streamed requests only.
    private var streamed: Locked<Bool>?  // touched like `attempt`
    private var attempt = 0  // touched by one thread at a time: each step hands over to the next
    /// Validators and the cached response of a stale cache entry being revalidated.
    var revalidation: (validators: HTTPHeaders, cached: HTTPResponse)?
    /// The credentials the last attempt was sent with (after the adapter, the jar's
    /// cookies as they were then): a response is cached under the credentials it was
    /// fetched with, including a hook's.
    private(set) var sentCredentials: RequestCredentials?

    package init(environment: AttemptEnvironment, request: HTTPRequest, id: UInt64,
         completion: (@Sendable (NetworkOutcome) -> Void)?) {
        self.environment = environment
        self.original = request
        self.id = id
        self.completion = completion
        super.init()
        pthread_mutex_init(&mutex, nil)
    }

    /// The outcome of attempts made without a completion, once `isOpen`.
    package var outcome: NetworkOutcome? { isOpen ? finalOutcome : nil }
    /// Set before the signal opens.
    private var finalOutcome: NetworkOutcome?

    deinit { pthread_mutex_destroy(&mutex) }

    private func withState<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// Where the request is, for the interceptor and the logger (made only for them).
    var contextForLog: RequestContext { context }
    private var context: RequestContext { RequestContext(id: id, attempt: attempt, cookies: environment.cookies) }

    // MARK: Async driver

    package func start() {
        guard environment.hasCache, cache != nil else {
            attemptNext(lastError: nil)
            return
        }
        // The first attempt is prepared (adapted) before the cache is asked, as
        // URLSession asks URLCache after Alamofire's adapter: a stored response answers
        // only a request with the credentials it was fetched with, a hook's included.
        var request: HTTPRequest
        switch prepareAttempt(lastError: nil) {
        case .failure(let error):
            finish(.failure(error))
            return
        case .success(let prepared):
            request = prepared
        }
        if let (cached, refresh) = cachedAnswer(sentWith: request) {
            attempt = 0  // nothing was sent
            // Like any answer, on a transport thread and never inside send(): a caller
            // may hold a lock its completion takes. Until then it can be cancelled.
            environment.sessionManager.schedule(after: 0) { [self] in
                finish(cached)
                refresh?.attemptNext(lastError: nil)  // stale-while-revalidate, once the caller has its answer
            }
            return
        }
        if let revalidation {
            for field in revalidation.validators where request.headers[field.name] == nil {
                request.headers[field.name] = field.value
            }
        }
        if environment.logs { environment.logger?.log(request: request, context: context) }
        send(request, redirects: [], redirectMs: 0)
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
        if environment.logs { environment.logger?.log(request: request, context: context) }
        send(request, redirects: [], redirectMs: 0)
    }

    /// One hop of an attempt: the request, or a redirect of it, after the `redirects`
    /// followed so far, which took `redirectMs`.
    private func send(_ request: HTTPRequest, redirects: [RedirectHop], redirectMs: Double) {
        let transfer = environment.sessionManager.request(request) { [self] result in
            switch RedirectPolicy.next(after: result, request: request, redirects: redirects.count,
                                       parser: environment.sessionManager.urlParser) {
            case .follow(var next):
                // One attempt, its redirects included, keeps to its timeout and the
                // deadline, as curl's --max-time covers the redirects it follows.
                // What the hop took, as libcurl timed it (a clock read per request would
                // cost every request; only redirects need it).
                if let exhausted = Self.timeLeft(after: Self.spent(result) / 1000, for: &next,
                                                 redirects: redirects.count + 1) {
                    conclude(.failure(exhausted), request: request)
                    return
                }
                if let revalidation {
                    // The validators of the stored response for the request's URL
                    // (RFC 9111 section 4.3.1) say nothing about another URL: a 304 from
                    // there would answer a request that asked for none.
                    for field in revalidation.validators where original.headers[field.name] == nil {
                        next.headers[field.name] = nil
                    }
                }
                if environment.logs, let logger = environment.logger {
                    // Each hop is an exchange of its own: the redirect that answered, then the next request.
                    if case .success(let redirect) = result { logger.log(response: redirect, request: request, context: context) }
                    logger.log(request: next, context: context)
                }
                let hop = RedirectHop(status: (try? result.get())?.statusCode ?? 0, url: request.url)
                send(next, redirects: redirects + [hop], redirectMs: redirectMs + Self.spent(result))
            case .fail(let error):
                conclude(.failure(error), request: request)
            case .done:
                if !redirects.isEmpty, case .failure(.timedOut(let message)) = result {
                    // libcurl's message counts only this hop's share of the time.
                    conclude(.failure(.timedOut("\(message), on the request after \(redirects.count) redirects "
                                                + "(the timeout covers the redirects followed)")), request: request)
                    return
                }
                if case .failure(.timedOut(let message)) = result, let deadline = original.options.deadline,
                   request.transfer.stream == nil, let used = request.options.timeout,
                   used < (original.options.timeout ?? .infinity) - 0.0005 {
                    // The deadline, not the timeout, cut this attempt short: say so.
                    conclude(.failure(.timedOut("\(message) (what was left of the request's deadline of \(deadline) s)")),
                             request: request)
                    return
                }
                conclude(Self.adding(redirects, redirectMs, to: result), request: request)
            }
        }
        pthread_mutex_lock(&mutex)
        // The transfer may have finished already (on the loop thread): keeping it then
        // would tie it and this object to each other for good.
        if !finished { current = transfer }
        let cancelNow = cancelled
        if readingPaused, !cancelNow { transfer.pauseReading(true) }  // under the lock, as in pauseReading
        pthread_mutex_unlock(&mutex)
        if cancelNow { transfer.cancel() }
    }

    /// The end of an attempt: finish, or schedule the next one.
    private func conclude(_ result: Result<HTTPResponse, NetworkError>, request: HTTPRequest) {
        if environment.hasCache, let stale = revalidation, case .success(let response) = result,
           response.statusCode == 304, !response.selects(stored: stale.cached) {
            // RFC 9111 section 4.3.4: a 304 that names another representation than the
            // stored one updates nothing, and cannot answer a request that asked for
            // none: the next attempt asks again, without validators.
            revalidation = nil
            attemptNext(lastError: nil)
            return
        }
        let validated = environment.validate(throughCache(result, hop: request), request: request, attempts: self)
        switch validated {
        case .success:
            finish(validated)
        case .failure(let error):
            switch decide(after: error, request: request) {
            case .success(.retry(let delay)):
                // A cancel made while the retry was decided found no back-off to end
                // (`cancel()`): it ends the request now, not when the delay has passed.
                if withState({ () -> Bool in
                    backingOff = !cancelled
                    return cancelled
                }) {
                    return finish(.failure(.cancelled))
                }
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
        pthread_mutex_lock(&mutex)
        let first = !finished
        let wasCancelled = cancelled
        finished = true
        let transfer = current
        current = NothingToCancel()
        pthread_mutex_unlock(&mutex)
        _ = transfer  // released outside the lock
        guard first else { return }
        let outcome = NetworkOutcome(result: wasCancelled ? .failure(.cancelled) : result, attempts: attempt, id: id)
        if let completion {
            completion(outcome)
        } else {
            finalOutcome = outcome
            signal()
        }
    }

    @discardableResult
    package func cancel() -> Bool {
        pthread_mutex_lock(&mutex)
        let transfer = current
        let wasLive = !finished && !cancelled
        let endsBackOff = wasLive && backingOff
        cancelled = true
        pthread_mutex_unlock(&mutex)
        transfer.cancel()
        if endsBackOff {
            // No transfer to stop: the back-off's timer would only notice the cancel
            // when it fires (a Retry-After may ask for an hour). Like any answer, on a
            // transport thread, never inside the caller's cancel.
            environment.sessionManager.schedule(after: 0) { [self] in finish(.failure(.cancelled)) }
        }
        return wasLive
    }

    @discardableResult
    package func pauseReading(_ paused: Bool) -> Bool {
        // Forwarded under the lock: pauses and resumes from different threads reach the
        // transfer in the order they were made here (the transfer only queues them).
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let wasLive = !finished && !cancelled
        readingPaused = paused
        if wasLive { current.pauseReading(paused) }
        return wasLive
    }

    private var isCancelled: Bool { withState { cancelled } }

    // MARK: Shared steps

    /// The request for the next attempt, with the per-attempt timeout clipped to what
    /// is left of the deadline and the deadline set to what is left; fails when the
    /// deadline has passed or the adapter refuses.
    private func prepareAttempt(lastError: NetworkError?) -> Result<HTTPRequest, NetworkError> {
        let wasCancelled = withState { () -> Bool in
            backingOff = false
            return cancelled
        }
        if wasCancelled { return .failure(.cancelled) }
        var request = original
        if let deadline = original.options.deadline {
            let remaining = deadline - Platform.MonotonicClock.seconds(since: startedAt)
            if remaining <= 0.001 {
                return .failure(lastError ?? .timedOut("the deadline of \(deadline) s passed"))
            }
            request.options.timeout = min(request.options.timeout ?? remaining, remaining)
            request.options.deadline = remaining  // bounds a stream, whose timeout bounds only its silences
        }
        attempt += 1  // counted once it is sure to be sent (an adapter's refusal aside)
        if let deliver = request.transfer.onStreamEvent {
            let streamed = self.streamed ?? Locked(false)
            self.streamed = streamed
            request.transfer.onStreamEvent = { event in
                streamed.withLock { $0 = true }
                return deliver(event)
            }
        }
        if let revalidation {
            for field in revalidation.validators where request.headers[field.name] == nil {
                request.headers[field.name] = field.value
            }
        }
        if environment.mayIntercept, let adapter = environment.interceptor {
            do {
                request = try adapter.adapt(request, context: context)
                try request.headers.validate()
            } catch {
                attempt -= 1  // refused before it was sent: `attempts` counts what was sent
                return .failure(error)
            }
        }
        if environment.hasCache, cache != nil { sentCredentials = RequestCredentials(of: request, cookies: environment.cookies) }
        return .success(request)
    }

    /// Retry or not after a failed attempt: the retrier first (serialised per
    /// service), then the policy; never past `maxAttempts` or the deadline. A
    /// retrier that throws (a malformed hook reply) fails the request with its error.
    private func decide(after error: NetworkError, request: HTTPRequest) -> Result<RetryDecision, NetworkError> {
        if error.isCancelled || isCancelled { return .success(.doNotRetry) }
        let policy = original.options.retry
        guard attempt < policy.maxAttempts, !(streamed?.withLock { $0 } ?? false),
              original.transfer.whyBodyIsNotRepeatable() == nil
        else { return .success(.doNotRetry) }
        var decision = RetryDecision.useDefault
        if environment.mayIntercept, let retrier = environment.interceptor {
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
        case .retry(let d): delay = min(max(0, d), policy.maxBackoff)
        case .useDefault:
            // The method of the request the next attempt sends: the original's, whatever
            // a redirect made of it (a POST answered by a 303 whose GET fails is not
            // sent again unless POST is listed).
            guard policy.shouldRetry(error, method: original.method) else { return .success(.doNotRetry) }
            delay = policy.delay(after: attempt, error: error)
        }
        if let deadline = original.options.deadline {
            let remaining = deadline - Platform.MonotonicClock.seconds(since: startedAt)
            // An attempt that would start at the deadline has no time to run: the
            // caller gets this error now rather than after waiting for nothing.
            guard delay < remaining - 0.001 else { return .success(.doNotRetry) }
        }
        return .success(.retry(delay: delay))
    }
}

extension RequestAttempts {
    /// Takes `elapsed`, what the hop before `next` took, from `next`'s timeout (not a
    /// stream's: its timeout bounds silences) and deadline; the error once nothing is left.
    private static func timeLeft(after elapsed: Double, for next: inout HTTPRequest, redirects: Int) -> NetworkError? {
        if next.transfer.stream == nil, let timeout = next.options.timeout {
            guard timeout - elapsed > 0.001 else {
                return .timedOut("the request's timeout passed while following its redirects (\(redirects) followed)")
            }
            next.options.timeout = timeout - elapsed
        }
        if let deadline = next.options.deadline {
            guard deadline - elapsed > 0.001 else {
                return .timedOut("the deadline passed while following the request's redirects (\(redirects) followed)")
            }
            next.options.deadline = deadline - elapsed
        }
        return nil
    }

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

extension RequestAttempts {
    /// What `RequestAttempts.current` holds while no hop is in flight.
    private struct NothingToCancel: NetworkCancellable {
        func cancel() -> Bool { false }
    }
}
