import FoundationEssentials
import Synchronization
import NetlayerJSON

/// A client: one transport (for libcurl: a multi handle, and so one connection pool),
/// the config's defaults checked once, request ids and cancellation, and the one way
/// requests run (`RequestAttempts`): started, with a completion; blocking, a start and
/// a wait; in batches, many starts and one wait. The C ABI's `nl_client` is one of
/// these with documents in front.
///
/// A client keeps working in a child of `fork()`: there its first use makes a new
/// transport (`Parts.makeTransport`, given the parent's, whose state such as cookies
/// the new one may copy), and the parent's is left untouched.
public final class NetlayerClient: @unchecked Sendable {
    /// What a client is made of.
    public struct Parts: Sendable {
        public var config: any NetworkConfigurable
        /// Makes the client's transport: once, and again in a child of `fork()`, where
        /// it is given the parent's transport (inherited, never used again).
        public var makeTransport: @Sendable ((any NetworkSessionManager)?) throws(NetworkError) -> any NetworkSessionManager
        /// Adapts every attempt and decides retries before the policy.
        public var interceptor: (any RequestInterceptor)?
        public var errorResolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver()
        public var logger: any NetworkErrorLogger & DataTransferErrorLogger = DefaultNetworkErrorLogger()
        /// A new response cache (one per transport), or nil for none.
        public var makeCache: (@Sendable () -> any ResponseCaching)?
        /// Makes the `JSONDecoder` of `send`'s `JSONResponseDecoder`s that name none
        /// (dates, key strategy); nil is a plain `JSONDecoder()`.
        public var makeJSONDecoder: (@Sendable () -> JSONDecoder)?
        /// What the layer that described the client keeps with it (a config document's
        /// named endpoints and OpenAPI document).
        public var attachment: (any Sendable)?
        /// Query parameters whose values never appear in an error message, besides
        /// `Redaction.defaultQueryNames` (in `Redaction.normalized` form).
        public var secretQueryNames: Set<String> = []

        public init(config: any NetworkConfigurable,
                    makeTransport: @escaping @Sendable ((any NetworkSessionManager)?) throws(NetworkError)
                        -> any NetworkSessionManager) {
            self.config = config
            self.makeTransport = makeTransport
        }
    }

    /// The transport and what requests need of it; a child of `fork()` gets new ones.
    private final class Engine: Sendable {
        let transport: any NetworkSessionManager
        let environment: RequestAttempts.AttemptEnvironment
        let defaults: RequestDefaults
        /// `Platform.ProcessFork.generation` when it started.
        let generation: UInt64
        /// `setStartsOnLoopThread`'s setting (a child of `fork()` keeps its parent's).
        let loopThreadOnly: Atomic<Bool>
        var startsOnLoopThread: Bool { loopThreadOnly.load(ordering: .acquiring) }

        init(_ parts: Parts, inheriting parent: Engine? = nil) throws(NetworkError) {
            generation = Platform.ProcessFork.generation
            loopThreadOnly = Atomic(parent?.startsOnLoopThread ?? false)
            let transport = try parts.makeTransport(parent?.transport)
            do {
                try transport.check(parts.config.requestOptions)
                defaults = try RequestDefaults(parts.config, parser: transport.urlParser,  // a bad base URL fails here
                                               recordsSentHeaders: parts.logger.isEnabled && parts.logger.wantsSentHeaders)
            } catch {
                transport.shutdown()
                throw error
            }
            self.transport = transport
            let interceptor = parent.map { $0.environment.interceptor } ?? parts.interceptor
            environment = RequestAttempts.AttemptEnvironment(sessionManager: transport, interceptor: interceptor,
                                             logger: parts.logger, cache: parts.makeCache?())
        }

        /// Runs what follows a transfer (decoding, the caller's completion), called on
        /// the transport's thread: beside it (`deliver`), since with requests in flight
        /// that thread is the bottleneck; while `startsOnLoopThread` (callbacks that
        /// promise the transport's thread are set), at once.
        func followUp(_ task: @escaping @Sendable () -> Void) {
            if startsOnLoopThread { task() } else { transport.deliver(task) }
        }
    }

    private let parts: Parts
    /// `setErrorResolver`'s, when set (`hasResolverOverride`).
    private let resolverOverride = Locked<(any DataTransferErrorResolver)?>(nil)
    private let hasResolverOverride = Atomic<Bool>(false)
    private let inFlight: Locked<[UInt64: DeferredCancellable]>
    /// Replaced only in a child of `fork()`, under `engineLock` (see `engine`).
    nonisolated(unsafe) private var current: Engine
    private let engineLock: Locked<Engine?>
    /// This client's locks in the fork registry (see `ForkLocks`).
    private let forkLocks: ForkLocks

    public init(_ parts: Parts) throws(NetworkError) {
        self.parts = parts
        current = try Engine(parts)
        // The lock also holds the engine whose transport's locks a fork takes (after
        // this lock, so never while a thread holding it waits for them).
        let (engineLock, inFlight) = (Locked<Engine?>(current), Locked<[UInt64: DeferredCancellable]>([:]))
        (self.engineLock, self.inFlight) = (engineLock, inFlight)
        forkLocks = ForkLocks(lock: {
            engineLock.lockForFork()
            inFlight.lockForFork()
            engineLock.unsafeValue?.transport.lockForFork()
        }, unlock: {
            engineLock.unsafeValue?.transport.unlockAfterFork()
            inFlight.unlockAfterFork()
            engineLock.unlockAfterFork()
        })
    }

    /// The engine of this process. In a child of `fork()` the parent's engine is kept
    /// as it is, never touched again, and a new one starts.
    private var engine: Engine {
        let engine = current
        if engine.generation == Platform.ProcessFork.generation { return engine }
        return engineLock.withLock { tracked in
            if current.generation == Platform.ProcessFork.generation { return current }
            if let fresh = try? Engine(parts, inheriting: current) {
                Platform.ProcessFork.abandon(current)
                // The parent's requests, never to complete here (`inFlightHere`).
                inFlight.withLock { tokens in
                    for token in tokens.values { Platform.ProcessFork.abandon(token) }
                    tokens = [:]
                }
                current = fresh
                tracked = fresh
            }
            return current
        }
    }

    // MARK: Requests

    /// The client's transport.
    public var transport: any NetworkSessionManager { engine.transport }

    /// The adapter of every attempt (a WebSocket's handshake too).
    package var interceptor: (any RequestInterceptor)? { engine.environment.interceptor }

    /// What the layer that described the client keeps with it (`Parts.attachment`).
    package var attachment: (any Sendable)? { parts.attachment }

    /// Whether the client has a base URL (else paths must be full URLs).
    package var hasBaseURL: Bool { !parts.config.baseURL.isEmpty }

    /// How `send` decodes JSON into `Decodable` types, when an endpoint does not say.
    package var makeJSONDecoder: (@Sendable () -> JSONDecoder)? { parts.makeJSONDecoder }

    /// Replaces the interceptor (`Parts.interceptor`) for the attempts that start from
    /// now on; nil for none. The C ABI installs one only while an ADAPT or RETRY hook
    /// is set, so that a client without hooks runs none.
    public func setInterceptor(_ interceptor: (any RequestInterceptor)?) {
        engine.environment.interceptor = interceptor
    }

    /// Whether requests start and complete on the transport's own thread from now on:
    /// the C ABI sets it while a hook that runs while a request is on its way (and so
    /// must run on a library thread) is set. Otherwise, the default, a blocking request
    /// runs on its caller's thread when it can, and completions on a delivery thread
    /// beside the transport's.
    public func setStartsOnLoopThread(_ onLoop: Bool) {
        engine.loopThreadOnly.store(onLoop, ordering: .releasing)
    }

    /// Replaces the error resolver (`Parts.errorResolver`) for the requests decoded from
    /// now on; nil gives back the one the client was made with.
    public func setErrorResolver(_ resolver: (any DataTransferErrorResolver)?) {
        resolverOverride.withLock { $0 = resolver }
        hasResolverOverride.store(resolver != nil, ordering: .releasing)
    }

    /// The error resolver of failures decoded now.
    package var errorResolver: any DataTransferErrorResolver {
        guard hasResolverOverride.load(ordering: .acquiring), let resolver = resolverOverride.withLock({ $0 }) else {
            return parts.errorResolver
        }
        return resolver
    }

    /// A new request id: unique in the process (across clients too), never 0.
    public func newID() -> UInt64 { RequestAttempts.AttemptEnvironment.newRequestID() }

    /// The request `endpoint` describes under the client's config, built and checked.
    public func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest {
        let engine = self.engine
        let request = try HTTPRequest.build(endpoint, defaults: engine.defaults)
        if request.transfer.useCache, engine.environment.cache == nil {
            throw .invalidRequest("useCache needs a response cache (config cache.enabled)")
        }
        return request
    }

    /// Whether the caller runs on one of this client's own threads (inside a callback
    /// or hook), where waiting for a request of the same client would deadlock.
    public var isLoopThread: Bool { engine.transport.isLibraryThread }

    /// Runs `task` on the transport's thread, in order with its work.
    public func execute(_ task: @escaping @Sendable () -> Void) { engine.transport.execute(task) }

    /// Runs `task` where completions of `start` run (the delivery thread; the
    /// transport's thread while `startsOnLoopThread`), one at a time with them.
    package func deliver(_ task: @escaping @Sendable () -> Void) {
        let engine = self.engine
        if engine.startsOnLoopThread { engine.transport.execute(task) } else { engine.transport.deliver(task) }
    }

    /// Runs `task`, an event a blocking caller may wait for (a LOG hook's), in order
    /// with the events before it: on the transport's event thread, apart from
    /// completions (on its own thread while `startsOnLoopThread`).
    package func deliverEvent(_ task: @escaping @Sendable () -> Void) {
        let engine = self.engine
        if engine.startsOnLoopThread { engine.transport.execute(task) } else { engine.transport.deliverEvent(task) }
    }

    /// Runs `task`, a hook call its caller waits for, on the transport's event thread,
    /// which runs only such calls and events: never behind a completion (whose callback
    /// the waiting caller's own locks may hold up), and never on the loop, which the
    /// waiting caller may be the one driving.
    package func callOnEventThread(_ task: @escaping @Sendable () -> Void) {
        engine.transport.deliverEvent(task)
    }

    /// Returns once the events given to `deliverEvent` so far have run: a blocking call
    /// returns, and a completion runs, after its request's events. On the loop thread
    /// while `startsOnLoopThread` they ran before it already, in order.
    package func awaitEvents() {
        let engine = self.engine
        // Read once: a hook set meanwhile may change where events go, and the signal
        // must not be queued to the loop while the loop itself is the one waiting.
        let onLoop = engine.startsOnLoopThread
        if onLoop, engine.transport.isLibraryThread { return }
        let delivered = CompletionSignal()
        if onLoop {
            engine.transport.execute { delivered.signal() }
        } else {
            engine.transport.deliverEvent { delivered.signal() }
        }
        _ = delivered.wait()
    }

    /// Sends `request` and returns at once; `completion` runs exactly once, on a
    /// library thread (the delivery thread; the transport's while `startsOnLoopThread`).
    /// Until then `cancel(id)` cancels it.
    public func start(_ request: HTTPRequest, id: UInt64, completion: @escaping @Sendable (NetworkOutcome) -> Void) {
        // The engine first: in a child of fork() its first request starts a new one,
        // which drops the parent's entries from the table (`engine`), not this one.
        let engine = self.engine
        let token = DeferredCancellable()
        inFlight.withLock { $0[id] = token }
        // The table, not the client, is captured: a weak reference to the client would
        // give it a side table, after which every retain of it takes the slow path.
        let inFlight = self.inFlight
        let attempts = RequestAttempts(environment: engine.environment, request: request, id: id) { outcome in
            engine.followUp {
                inFlight.withLock { _ = $0.removeValue(forKey: id) }
                completion(outcome)
            }
        }
        token.attach(attempts)
        if engine.startsOnLoopThread { engine.transport.execute { attempts.start() } } else { attempts.start() }
    }

    /// Cancels a request started with `start`; whether it was still in flight.
    public func cancel(id: UInt64) -> Bool {
        guard let token = inFlightHere(id) else { return false }
        return token.cancel()
    }

    /// Stops (`paused` true) or resumes reading the response of a request started with
    /// `start`, so that a consumer that cannot keep up makes the server wait (see
    /// `NetworkCancellable.pauseReading`); whether it was still in flight.
    public func pause(id: UInt64, _ paused: Bool) -> Bool {
        guard let token = inFlightHere(id) else { return false }
        return token.pauseReading(paused)
    }

    /// The request `id` if this process started it and it is in flight. In a child of
    /// `fork()`, the parent's requests are not: their thread does not exist here, no
    /// completion of theirs comes, and their state is never touched. Until the child
    /// starts its own engine every entry is the parent's; starting it drops them.
    private func inFlightHere(_ id: UInt64) -> DeferredCancellable? {
        guard engineLock.withLock({ _ in current.generation == Platform.ProcessFork.generation }) else { return nil }
        return inFlight.withLock { $0[id] }
    }

    /// Sends `request` and waits for it: a start and a wait, the calling thread running
    /// the transport's work meanwhile when nothing else is in flight (no hop to another
    /// thread and back). While callbacks that must run on the transport's thread are
    /// set, that thread runs it and the caller waits. A signal on the thread's
    /// interrupt descriptor (`nl_thread_set_interrupt_fd`) cancels it.
    public func perform(_ request: HTTPRequest, id: UInt64) -> NetworkOutcome {
        let engine = self.engine
        // Without a completion, the attempts are what the caller waits for.
        let attempts = RequestAttempts(environment: engine.environment, request: request, id: id, completion: nil)
        let interrupt = Platform.ThreadInterrupt.armed()
        let finished = if engine.startsOnLoopThread {
            { engine.transport.execute { attempts.start() }; return attempts.wait(interruptedBy: interrupt) }()
        } else {
            engine.transport.run({ attempts.start() }, until: attempts, interrupt: interrupt)
        }
        guard finished else {
            attempts.cancel()
            // A moment for the cancelled attempt to end, so that its LOG event is out
            // before the call returns, as for any other ending.
            _ = attempts.wait(nanoseconds: 200_000_000)
            return NetworkOutcome(result: .failure(Platform.ThreadInterrupt.error), attempts: attempts.outcome?.attempts ?? 1, id: id)
        }
        return attempts.outcome ?? NetworkOutcome(result: .failure(.cancelled), attempts: 1, id: id)
    }

    /// Prepares, sends and waits for `count` requests, each outcome turned into what
    /// the caller keeps by the `finish` that `prepare` gave with it, as its request
    /// completes (on a library thread, while the others are still in flight); results
    /// keep input order, nil where `prepare` gave no request.
    ///
    /// Each request is sent as soon as it is prepared, so transfers are on the wire
    /// while this thread prepares the rest; the thread wakes once, when the last one
    /// is in, or when a signal interrupts it (`nl_thread_set_interrupt_fd`): then
    /// every request of the batch is cancelled.
    public func perform<Element: Sendable>(
        count: Int, prepare: (Int) -> (HTTPRequest, UInt64, finish: @Sendable (NetworkOutcome) -> Element)?
    ) -> [Element?] {
        let results = BatchResults<Element>(count: count)
        let engine = self.engine
        let onLoop = engine.startsOnLoopThread
        let interrupt = Platform.ThreadInterrupt.armed()
        for index in 0..<count {
            guard let (request, id, finish) = prepare(index) else { continue }
            results.expectOneMore()
            let attempts = RequestAttempts(environment: engine.environment, request: request, id: id) { outcome in
                engine.followUp { results.set(index, finish(results.explained(outcome))) }
            }
            results.track(attempts)
            if onLoop { engine.transport.execute { attempts.start() } } else { attempts.start() }
        }
        return results.waitForAll(interruptedBy: interrupt)
    }

    // MARK: Decoding

    /// Decodes `outcome` with `decoder`: status errors go through the client's error
    /// resolver, empty bodies follow the 204/205/HEAD rule, then the decoder runs.
    public func decode<T: Decodable>(_ outcome: NetworkOutcome, request: HTTPRequest,
                                     decoder: any ResponseDecoder) -> Result<DataResponse<T>, DataTransferError> {
        guard case .failure(let error) = outcome.result else {
            return ResponseDecoding.decode(outcome, method: request.method, decoder: decoder, resolver: parts.errorResolver,
                                           logger: parts.logger).mapError { $0.redactingQuery(parts.secretQueryNames) }
        }
        return .failure(failure(error, of: request))
    }

    /// The config's secret query names (`Parts.secretQueryNames`).
    package var secretQueryNames: Set<String> { parts.secretQueryNames }

    /// A failure of `request` as callers get it: through the error resolver, logged,
    /// and without the values of the config's secret query parameters. A resolved
    /// message may come from the server's body (`messageKeyPath`), which can echo what
    /// the request sent: none of the request's secrets goes on into logs and errors.
    package func failure(_ error: NetworkError, of request: HTTPRequest? = nil) -> DataTransferError {
        // The resolver is looked up only for a failure: a success never needs one.
        var resolved = ResponseDecoding.resolve(error, with: errorResolver)
        if let request, case .resolvedNetworkFailure = resolved {
            resolved = resolved.scrubbing(Redaction.secrets(of: request, redacting: [], queryNames: parts.secretQueryNames,
                                                            cookies: transport.cookieSource))
        }
        return ResponseDecoding.logged(resolved, parts.logger).redactingQuery(parts.secretQueryNames)
    }

    /// A decoding failure as callers get it: logged, and without the values of the
    /// config's secret query parameters.
    package func failure(decoding error: DataTransferError) -> DataTransferError {
        ResponseDecoding.logged(error, parts.logger).redactingQuery(parts.secretQueryNames)
    }

    /// The client's decoding logger, for the seeds' services.
    package var logger: any NetworkErrorLogger & DataTransferErrorLogger { parts.logger }

    // MARK: Lifetime

    /// Cancels what is in flight, delivers every completion and stops the transport's
    /// threads. In a child of `fork()` that never used the client, the parent's
    /// transport is left as it is instead.
    /// - Returns: false on one of this client's own threads, where waiting would
    ///   deadlock; then nothing happens.
    public func shutdown() -> Bool {
        let engine = engineLock.withLock { _ in current }
        guard engine.generation == Platform.ProcessFork.generation else {
            Platform.ProcessFork.abandon(engine)
            return true
        }
        if engine.transport.isLibraryThread { return false }
        engine.transport.shutdown()
        return true
    }
}
