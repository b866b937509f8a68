import Netlayer
import Synchronization

/// The object behind an `nl_client *`: the core services of one client, its named
/// endpoints, and the table of asynchronous requests `nl_cancel` looks ids up in.
final class ClientHandle: @unchecked Sendable, ForkParticipant {
    /// The transport and the services over it; a child of `fork()` gets new ones.
    final class Engine: Sendable {
        let session: CurlSessionManager
        let network: DefaultNetworkService
        let dataTransfer: DefaultDataTransferService
        /// `ProcessFork.generation` when it started.
        let generation: UInt64

        init(config: ConfigDocument, hooks: HookTable) throws(NetworkError) {
            generation = ProcessFork.generation
            session = try CurlSessionManager(maxConcurrent: config.maxConcurrent)
            let logger = NetworkLogger(level: config.logLevel, redactedHeaders: config.redactedHeaders) { event in
                if case .notSet = hooks.call(.log, event.json) { NetworkLogger.writeToStderr(event) }
            }
            network = DefaultNetworkService(config: config.network, sessionManager: session,
                                            interceptor: HookInterceptor(hooks: hooks), logger: logger,
                                            cache: config.cacheEntries.map { ResponseCache(maxEntries: $0) })
            dataTransfer = DefaultDataTransferService(
                with: network,
                errorResolver: HookErrorResolver(hooks: hooks, rules: RuleBasedErrorResolver(rules: config.errorRules)),
                errorLogger: logger)
        }
    }

    private let config: ConfigDocument
    let namedEndpoints: JSONObject
    let hooks = HookTable()
    private let nextID = Atomic<UInt64>(1)
    private let inFlight = Locked<[UInt64: DeferredCancellable]>([:])
    /// Written only in a child of `fork()`, under `engineLock` (see `engine`).
    nonisolated(unsafe) private var current: Engine
    private let engineLock = Locked(())

    init(config: ConfigDocument) throws(NetworkError) {
        self.config = config
        namedEndpoints = config.endpoints
        current = try Engine(config: config, hooks: hooks)
        ProcessFork.register(self)
    }

    deinit { ProcessFork.unregister(self) }

    /// The engine of this process. In a child of `fork()` the parent's engine is
    /// left as it is, never touched again (its loop thread does not exist here and
    /// its sockets are the parent's connections), and a new one starts.
    var engine: Engine {
        let engine = current
        if engine.generation == ProcessFork.generation { return engine }
        return engineLock.withLock { _ in
            if current.generation == ProcessFork.generation { return current }
            if let fresh = try? Engine(config: config, hooks: hooks) {
                ProcessFork.abandon(current)
                current = fresh
            }
            return current
        }
    }

    /// Stops the engine and waits for its callbacks (`nl_client_free`). In a child of
    /// `fork()` that never used the client, the parent's engine is abandoned instead:
    /// its loop thread is not here to be joined.
    /// - Returns: false on this client's own loop thread, where waiting would deadlock.
    func shutdown() -> Bool {
        let engine = engineLock.withLock { _ in current }
        guard engine.generation == ProcessFork.generation else {
            ProcessFork.abandon(engine)
            return true
        }
        if engine.session.isLoopThread { return false }
        engine.session.shutdown()
        return true
    }

    func lockForFork() {
        engineLock.lockForFork()
        hooks.lockForFork()
        inFlight.lockForFork()
    }

    func unlockAfterFork() {
        inFlight.unlockAfterFork()
        hooks.unlockAfterFork()
        engineLock.unlockAfterFork()
    }

    /// A request prepared from a document: either ready to send, or already failed.
    enum Prepared {
        case ready(HTTPRequest, any ResponseDecoder, id: UInt64)
        case failed([UInt8])
    }

    /// The request a document describes, with its progress and stream events wired
    /// to `callbacks` or, where those have none, to this client's hooks, under `id`
    /// (a new one when nil).
    func prepare(_ document: JSON, id: UInt64? = nil, callbacks: RequestCallbacks? = nil) -> Prepared {
        do {
            var parsed = try EndpointDocument(document)  // changed in place: one copy of the endpoint
            let id = id ?? newID()
            let hooks = self.hooks
            if parsed.wantsProgress {
                let report: @Sendable (JSONObject) -> TransferControl
                if let callbacks, let function = callbacks.progress {
                    report = { callbacks.deliver(function, id: id, $0, who: "on_progress") }
                } else {
                    report = { hooks.control(.progress, $0) }
                }
                parsed.endpoint.transfer.progress = { progress in
                    report(["id": .int(Int64(truncatingIfNeeded: id)), "direction": .string(progress.direction.rawValue),
                            "done": .int(progress.done), "total": .int(progress.total)])
                }
            }
            if parsed.endpoint.transfer.stream != nil {
                let report: @Sendable (JSONObject) -> TransferControl
                if let callbacks, let function = callbacks.stream {
                    report = { callbacks.deliver(function, id: id, $0, who: "on_stream") }
                } else {
                    report = { hooks.control(.stream, $0) }
                }
                parsed.endpoint.transfer.onStreamEvent = { event in report(Self.fields(of: event, id: id)) }
            }
            let request = try engine.network.makeRequest(for: parsed.endpoint)
            return .ready(request, parsed.endpoint.responseDecoder, id: id)
        } catch {
            return .failed(ResultDocument.failure(.networkFailure(error)))
        }
    }

    /// A stream event as the STREAM hook and `on_stream` receive it.
    private static func fields(of event: StreamEvent, id: UInt64) -> JSONObject {
        var fields: JSONObject = ["id": .int(Int64(truncatingIfNeeded: id))]
        switch event {
        case .serverSent(let name, let data, let lastEventId, let retry):
            fields["event"] = .string(name)
            fields["data"] = .string(data)
            fields["lastEventId"] = .string(lastEventId)
            fields["retry"] = retry.map { .int(Int64($0)) } ?? .null
        case .line(let line):
            fields["line"] = .string(line)
        case .chunk(let bytes):
            fields["chunk"] = .string(Base64.encode(bytes))
        }
        return fields
    }

    func prepare(json bytes: UnsafeBufferPointer<UInt8>, what: String, id: UInt64? = nil,
                 callbacks: RequestCallbacks? = nil) -> Prepared {
        let document: JSON
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            return .failed(ResultDocument.invalid("\(what) is not valid JSON: \(error)"))
        }
        return prepare(document, id: id, callbacks: callbacks)
    }

    /// Whether a request may start on the thread of the C call: only when no hook is
    /// set. The first attempt's ADAPT and LOG hooks run as a request starts, and hooks
    /// run on a library thread (contract, section 6); with a hook set, requests start
    /// on the loop thread (`session.execute`). Callers branch on this rather than hand
    /// over a closure, which would cost an allocation per request in the common case.
    var startsOnCallingThread: Bool { hooks.isEmpty }

    /// Sends `request` and returns the result document; `completion` runs on the loop thread.
    @discardableResult
    func send(_ request: HTTPRequest, id: UInt64, decoder: any ResponseDecoder,
              completion: @escaping @Sendable ([UInt8]) -> Void) -> any NetworkCancellable {
        let engine = self.engine
        return engine.network.send(request, id: id) { [dataTransfer = engine.dataTransfer] outcome in
            completion(Self.document(for: outcome, request: request, decoder: decoder, dataTransfer: dataTransfer))
        }
    }

    /// One request's result document (`nl_request`, `nl_call`): on this thread when no
    /// hooks are set, with no arrays around the one request and its one result.
    func perform(_ prepared: consuming Prepared) -> [UInt8] {
        guard startsOnCallingThread else {
            let one = prepared
            return perform(count: 1) { _ in one }[0]
        }
        switch consume prepared {  // the request moves out: no copy of it
        case .failed(let document):
            return document
        case .ready(let request, let decoder, let id):
            let engine = self.engine
            return Self.document(for: engine.network.sendBlocking(request, id: id), request: request, decoder: decoder,
                                 dataTransfer: engine.dataTransfer)
        }
    }

    /// Prepares, sends and waits for `count` requests; results keep input order.
    ///
    /// Each request is sent as soon as it is prepared, so transfers are on the wire
    /// while this thread prepares the rest, and each result document is written on
    /// the loop thread as its transfer completes (as for `nl_request_async`): this
    /// thread wakes once, when the last one is in.
    func perform(count: Int, prepare: (Int) -> Prepared) -> [[UInt8]] {
        if count == 1, startsOnCallingThread {
            // One request: run it on this thread, no hop to the loop and back. (With
            // hooks set it goes through the loop, where the contract runs hooks.)
            return [perform(prepare(0))]
        }
        let results = BatchResults(count: count)
        let engine = self.engine
        if let interrupt = ThreadInterrupt.current { ThreadInterrupt.drain(interrupt) }  // signals already handled
        for index in 0..<count {
            switch prepare(index) {
            case .failed(let document):
                results.set(index, document, counts: false)
            case .ready(let request, let decoder, let id):
                results.expectOneMore()
                @Sendable func start() {
                    results.track(engine.network.send(request, id: id) { outcome in
                        results.set(index, Self.document(for: outcome, request: request, decoder: decoder,
                                                         dataTransfer: engine.dataTransfer), counts: true)
                    })
                }
                if startsOnCallingThread { start() } else { engine.session.execute(start) }
            }
        }
        return results.waitForAll()
    }

    static func document(for outcome: NetworkOutcome, request: HTTPRequest,
                         decoder: any ResponseDecoder, dataTransfer: DefaultDataTransferService) -> [UInt8] {
        // A metatype comparison: `decoder is JSONResponseDecoder` is a runtime cast.
        if type(of: decoder) == JSONResponseDecoder.self, outcome.holdsBodyInMemory {
            // A JSON body is checked and copied into the document, not parsed and rewritten.
            let decoded: Result<DataResponse<RawJSON>, DataTransferError> = dataTransfer.decode(outcome, request: request,
                                                                                                 decoder: decoder)
            return document(for: decoded, outcome: outcome)
        }
        let decoded: Result<DataResponse<JSON>, DataTransferError> = dataTransfer.decode(outcome, request: request,
                                                                                          decoder: decoder)
        return document(for: decoded, outcome: outcome)
    }

    private static func document<Value: ResultValue>(for decoded: Result<DataResponse<Value>, DataTransferError>,
                                                     outcome: NetworkOutcome) -> [UInt8] {
        switch decoded {
        case .success(let response): return ResultDocument.success(response)
        case .failure(let error):
            return ResultDocument.failure(error, response: try? outcome.result.get(), attempts: outcome.attempts)
        }
    }

    // MARK: Asynchronous requests

    func newID() -> UInt64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    func register(_ id: UInt64) -> DeferredCancellable {
        let token = DeferredCancellable()
        inFlight.withLock { $0[id] = token }
        return token
    }

    func unregister(_ id: UInt64) {
        _ = inFlight.withLock { $0.removeValue(forKey: id) }
    }

    func cancel(_ id: UInt64) -> Bool {
        guard let token = inFlight.withLock({ $0[id] }) else { return false }
        return token.cancel()
    }
}

/// The documents of a batch, filled from loop-thread completions; the waiting thread
/// wakes once, when the last expected one is in, or when a signal interrupts it
/// (`ThreadInterrupt`): then every request of the batch is cancelled.
private struct BatchResults: Sendable {
    private struct State {
        var documents: [[UInt8]]
        var started: [any NetworkCancellable] = []
        var interrupted = false
    }

    private let state: Locked<State>
    private let latch = Latch(count: 0)

    init(count: Int) { state = Locked(State(documents: Array(repeating: [], count: count))) }

    /// Before sending a request whose document `set` will bring later.
    func expectOneMore() { latch.countUp() }

    /// A request that was sent; cancelled at once if the wait was interrupted before.
    func track(_ request: any NetworkCancellable) {
        let cancelNow = state.withLock { state in
            if !state.interrupted { state.started.append(request) }
            return state.interrupted
        }
        if cancelNow { request.cancel() }
    }

    func set(_ index: Int, _ document: [UInt8], counts: Bool) {
        state.withLock { $0.documents[index] = document }
        if counts { latch.countDown() }
    }

    func waitForAll() -> [[UInt8]] {
        if !latch.waitUnlessInterrupted() {
            let started = state.withLock { state in
                state.interrupted = true
                return state.started
            }
            for request in started { request.cancel() }
            latch.wait()  // the cancelled requests complete at once
        }
        return state.withLock { state in
            state.started = []  // each holds its completion, which holds these results
            return state.documents
        }
    }
}

private extension NetworkOutcome {
    /// A success whose body is in memory: not written to a file, not streamed.
    var holdsBodyInMemory: Bool {
        guard case .success(let response) = result else { return false }
        return response.downloadedFile == nil && response.streamEvents == nil
    }
}
