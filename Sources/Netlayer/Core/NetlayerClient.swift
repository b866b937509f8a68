import FoundationEssentials
import Synchronization

/// A client: one transport (a libcurl multi handle, its event-loop thread and its
/// connection pool), the services over it, request ids and cancellation, and the
/// three ways to run requests: blocking, asynchronous and in batches. The C ABI's
/// `nl_client` is one of these with documents in front.
///
/// A client keeps working in a child of `fork()`: there its first use starts a new
/// transport (the parent's loop thread does not exist in the child, and its
/// connections are the parent's), and the parent's is left untouched. The new
/// transport's cookie jar starts as a copy of the parent's, and has no file: the
/// cookie file is written only by the process that made the client.
public final class NetlayerClient: @unchecked Sendable {
    /// What a client is made of; everything but the transport, which it makes.
    public struct Parts: Sendable {
        public var config: any NetworkConfigurable
        /// Asynchronous transfers in flight at once; the rest queue in order.
        public var maxConcurrent = 64
        /// The client's cookie jar.
        public var cookies = CookieJar()
        /// Makes the `JSONDecoder` of `send`'s `JSONResponseDecoder`s that name none
        /// (dates, key strategy); nil is a plain `JSONDecoder()`.
        public var makeJSONDecoder: (@Sendable () -> JSONDecoder)?
        /// Named endpoints: endpoint documents `call(_:params:)` sends by name.
        public var namedEndpoints = JSONObject()
        /// An OpenAPI document whose operations are named endpoints too (the named
        /// endpoints above win over an operation of the same name).
        public var openAPI: OpenAPIConfig?
        /// Rules a stub transport answers from, instead of the network (nil: the network).
        public var stubRules: [StubSessionManager.Rule]?
        /// Record every exchange into a cassette, or answer from one (nil: neither).
        public var cassette: CassetteMode?
        /// Adapts every attempt and decides retries before the policy.
        public var interceptor: (any RequestInterceptor)?
        public var errorResolver: any DataTransferErrorResolver = DefaultDataTransferErrorResolver()
        public var logger: any NetworkErrorLogger & DataTransferErrorLogger = DefaultNetworkErrorLogger()
        /// A new response cache (one per transport), or nil for none.
        public var makeCache: (@Sendable () -> any ResponseCaching)?
        /// Whether requests must start and complete on the loop thread, now: true while
        /// callbacks that promise to run on the loop thread (the C ABI's hooks) are set.
        /// Otherwise completions run on a delivery thread beside the loop.
        public var startsOnLoopThread: @Sendable () -> Bool = { false }

        public init(config: any NetworkConfigurable) { self.config = config }
    }

    /// The transport and the services over it; a child of `fork()` gets new ones.
    private final class Engine: Sendable {
        let session: CurlSessionManager
        /// What a recording client keeps, saved at shutdown.
        let recorder: RecordingSessionManager?
        let network: DefaultNetworkService
        let dataTransfer: DefaultDataTransferService
        /// `ProcessFork.generation` when it started.
        let generation: UInt64

        /// - Parameter parent: in a child of `fork()`, the engine inherited from the
        ///   parent, whose cookies the new one starts with.
        init(_ parts: Parts, inheriting parent: Engine? = nil) throws(NetworkError) {
            generation = ProcessFork.generation
            let session = if let parent {
                try CurlSessionManager(maxConcurrent: parts.maxConcurrent, copyingCookiesOf: parent.session)
            } else {
                try CurlSessionManager(maxConcurrent: parts.maxConcurrent, cookies: parts.cookies)
            }
            self.session = session
            let transport: any NetworkSessionManager
            (transport, recorder) = parts.transport(over: session)
            network = DefaultNetworkService(config: parts.config, sessionManager: transport, interceptor: parts.interceptor,
                                            logger: parts.logger, cache: parts.makeCache?())
            dataTransfer = DefaultDataTransferService(with: network, errorResolver: parts.errorResolver,
                                                      errorLogger: parts.logger)
        }

        /// Runs what follows a transfer (decoding, the caller's completion), called on
        /// the loop thread: on the delivery thread, beside the loop, since with requests
        /// in flight the loop thread is the bottleneck; with `onLoop` (callbacks that
        /// promise the loop thread are set), at once.
        func followUp(onLoop: Bool, _ task: @escaping @Sendable () -> Void) {
            if onLoop { task() } else { session.deliver(task) }
        }

        /// Runs `task`, from any thread, where `followUp` runs completions, after them
        /// and never inline: queued on the loop thread with `onLoop`.
        func deliver(onLoop: Bool, _ task: @escaping @Sendable () -> Void) {
            if onLoop { session.execute(task) } else { session.deliver(task) }
        }
    }

    /// The session whose cookie jar a child of `fork()` copies: the current engine's,
    /// changed with it under `engineLock`. Its share's locks are held across a fork,
    /// taken after `engineLock`, so never while a thread holding that lock (to start a
    /// child's engine, copying the jar) waits for them.
    private final class JarSource: @unchecked Sendable {
        var session: CurlSessionManager
        init(_ session: CurlSessionManager) { self.session = session }
    }

    private let parts: Parts
    private let nextID = Atomic<UInt64>(1)
    private let inFlight: Locked<[UInt64: DeferredCancellable]>
    /// Replaced only in a child of `fork()`, under `engineLock` (see `engine`).
    nonisolated(unsafe) private var current: Engine
    private let engineLock: Locked<Void>
    private let jarSource: JarSource
    /// This client's locks in the fork registry (see `ForkLocks`).
    private let forkLocks: ForkLocks

    public init(_ parts: Parts) throws(NetworkError) {
        self.parts = parts
        current = try Engine(parts)
        let (engineLock, inFlight) = (Locked(()), Locked<[UInt64: DeferredCancellable]>([:]))
        let jarSource = JarSource(current.session)
        (self.engineLock, self.inFlight, self.jarSource) = (engineLock, inFlight, jarSource)
        forkLocks = ForkLocks(lock: {
            engineLock.lockForFork()
            inFlight.lockForFork()
            jarSource.session.lockCookiesForFork()
        }, unlock: {
            jarSource.session.unlockCookiesAfterFork()
            inFlight.unlockAfterFork()
            engineLock.unlockAfterFork()
        })
    }

    /// The engine of this process. In a child of `fork()` the parent's engine is kept
    /// as it is, never touched again, and a new one starts.
    private var engine: Engine {
        let engine = current
        if engine.generation == ProcessFork.generation { return engine }
        return engineLock.withLock { _ in
            if current.generation == ProcessFork.generation { return current }
            if let fresh = try? Engine(parts, inheriting: current) {
                ProcessFork.abandon(current)
                current = fresh
                jarSource.session = fresh.session
            }
            return current
        }
    }

    // MARK: Requests

    /// The seeds' `DataTransferService` over this client's transport: sends
    /// `Requestable`s and decodes their responses.
    public var service: DefaultDataTransferService { engine.dataTransfer }

    /// The config's named endpoints, as documents.
    package var namedEndpoints: JSONObject { parts.namedEndpoints }

    /// The config's OpenAPI document and its settings.
    package var openAPI: OpenAPIConfig? { parts.openAPI }

    /// Whether the client has a base URL (else paths must be full URLs).
    package var hasBaseURL: Bool { !parts.config.baseURL.isEmpty }

    /// How `send` decodes JSON into `Decodable` types, when an endpoint does not say.
    package var makeJSONDecoder: (@Sendable () -> JSONDecoder)? { parts.makeJSONDecoder }

    /// A new request id: unique within the client, never 0.
    public func newID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// The request `endpoint` describes under the client's config, built and checked.
    public func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest {
        try engine.network.makeRequest(for: endpoint)
    }

    /// Whether the caller runs on this client's loop thread (inside a callback or
    /// hook), where waiting for a request of the same client would deadlock.
    public var isLoopThread: Bool { engine.session.isLoopThread }

    /// Runs `task` on the loop thread, in order with completions.
    public func execute(_ task: @escaping @Sendable () -> Void) { engine.session.execute(task) }

    /// Runs `task` where completions of `start` run (the delivery thread; the loop
    /// thread while `startsOnLoopThread`), one at a time with them.
    package func deliver(_ task: @escaping @Sendable () -> Void) {
        engine.deliver(onLoop: parts.startsOnLoopThread(), task)
    }

    /// Sends `request` and returns at once; `completion` runs exactly once, on a
    /// library thread (the delivery thread; the loop thread while `startsOnLoopThread`).
    /// Until then `cancel(id)` cancels it.
    public func start(_ request: HTTPRequest, decoder: any ResponseDecoder, id: UInt64,
                      completion: @escaping @Sendable (RequestResult) -> Void) {
        let token = DeferredCancellable()
        inFlight.withLock { $0[id] = token }
        let engine = self.engine
        // The table, not the client, is captured: a weak reference to the client would
        // give it a side table, after which every retain of it takes the slow path.
        let inFlight = self.inFlight
        let startsOnLoopThread = parts.startsOnLoopThread
        @Sendable func send() {
            token.attach(engine.network.send(request, id: id) { outcome in
                engine.followUp(onLoop: startsOnLoopThread()) {
                    inFlight.withLock { _ = $0.removeValue(forKey: id) }
                    completion(RequestResult(outcome, request: request, decoder: decoder, dataTransfer: engine.dataTransfer))
                }
            })
        }
        if parts.startsOnLoopThread() { engine.session.execute(send) } else { send() }
    }

    /// Cancels a request started with `start`; whether it was still in flight.
    public func cancel(id: UInt64) -> Bool {
        guard let token = inFlight.withLock({ $0[id] }) else { return false }
        return token.cancel()
    }

    /// Sends `request` and waits for it. With nothing that must run on the loop
    /// thread, the transfer runs on the calling thread (no hop to the loop and back);
    /// otherwise the caller waits for the loop.
    public func perform(_ request: HTTPRequest, decoder: any ResponseDecoder, id: UInt64) -> RequestResult {
        guard !parts.startsOnLoopThread() else {
            return perform(count: 1, prepare: { _ in (request, decoder, id) })[0]!
        }
        let engine = self.engine
        return RequestResult(engine.network.sendBlocking(request, id: id), request: request, decoder: decoder,
                             dataTransfer: engine.dataTransfer)
    }

    /// Prepares, sends and waits for `count` requests; results keep input order, nil
    /// where `prepare` gave no request.
    public func perform(count: Int, prepare: (Int) -> (HTTPRequest, any ResponseDecoder, UInt64)?) -> [RequestResult?] {
        perform(count: count, prepare: prepare) { $0 }
    }

    /// Prepares, sends and waits for `count` requests, each result turned into what
    /// the caller keeps by `finish` as its request completes (on a library thread, while
    /// the others are still in flight); results keep input order, nil where `prepare`
    /// gave no request.
    ///
    /// Each request is sent as soon as it is prepared, so transfers are on the wire
    /// while this thread prepares the rest; the thread wakes once, when the last one
    /// is in, or when a signal interrupts it (`nl_thread_set_interrupt_fd`): then
    /// every request of the batch is cancelled.
    public func perform<Element: Sendable>(count: Int, prepare: (Int) -> (HTTPRequest, any ResponseDecoder, UInt64)?,
                                           finish: @escaping @Sendable (RequestResult) -> Element) -> [Element?] {
        let results = BatchResults<Element>(count: count)
        let engine = self.engine
        let startsOnLoopThread = parts.startsOnLoopThread
        let onLoop = startsOnLoopThread()
        let interrupt = ThreadInterrupt.armed()
        for index in 0..<count {
            guard let (request, decoder, id) = prepare(index) else { continue }
            results.expectOneMore()
            @Sendable func send() {
                results.track(engine.network.send(request, id: id) { outcome in
                    engine.followUp(onLoop: startsOnLoopThread()) {
                        results.set(index, finish(RequestResult(outcome, request: request, decoder: decoder,
                                                                dataTransfer: engine.dataTransfer)))
                    }
                })
            }
            if onLoop { engine.session.execute(send) } else { send() }
        }
        return results.waitForAll(interruptedBy: interrupt)
    }

    // MARK: Lifetime

    /// Cancels what is in flight, delivers every completion, stops the loop thread
    /// and waits for blocking requests to return. In a child of `fork()` that never
    /// used the client, the parent's transport is left as it is instead.
    /// - Returns: false on this client's own loop thread, where waiting would
    ///   deadlock; then nothing happens.
    public func shutdown() -> Bool {
        let engine = engineLock.withLock { _ in current }
        guard engine.generation == ProcessFork.generation else {
            ProcessFork.abandon(engine)
            return true
        }
        if engine.session.isLoopThread { return false }
        engine.session.shutdown()
        engine.recorder?.finish()  // every exchange has completed now
        return true
    }
}
