import Netlayer
import Synchronization

/// The object behind an `nl_client *`: the core services of one client, its named
/// endpoints, and the table of asynchronous requests `nl_cancel` looks ids up in.
final class ClientHandle: @unchecked Sendable {
    let session: CurlSessionManager
    let network: DefaultNetworkService
    let dataTransfer: DefaultDataTransferService
    let namedEndpoints: JSONObject
    let hooks = HookTable()
    private let preparedRequests = PreparedRequestCache()
    private let nextID = Atomic<UInt64>(1)
    private let inFlight = Locked<[UInt64: DeferredCancellable]>([:])

    init(config: ConfigDocument) throws(NetworkError) {
        session = try CurlSessionManager(maxConcurrent: config.maxConcurrent)
        let hooks = self.hooks
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
        namedEndpoints = config.endpoints
    }

    /// A request prepared from a document: either ready to send, or already failed.
    enum Prepared {
        case ready(HTTPRequest, any ResponseDecoder, id: UInt64)
        case failed([UInt8])
    }

    /// The request a document describes, with its progress and stream events wired
    /// to this client's hooks under `id` (a new one when nil). `text`, the document's
    /// JSON when the caller has it, finds a request built from the same text before.
    func prepare(_ document: JSON, id: UInt64? = nil, text: UnsafeBufferPointer<UInt8>? = nil) -> Prepared {
        if let text, let ready = remembered(text, id: id) { return ready }
        return build(document, id: id, text: text)
    }

    /// The request remembered for exactly this document text, ready under `id`.
    private func remembered(_ text: UnsafeBufferPointer<UInt8>, id: UInt64?) -> Prepared? {
        guard let (request, decoder) = preparedRequests.request(for: text) else { return nil }
        return .ready(request, decoder, id: id ?? newID())
    }

    /// A request without per-request wiring is remembered under `text`, when given.
    private func build(_ document: JSON, id: UInt64?, text: UnsafeBufferPointer<UInt8>?) -> Prepared {
        do {
            var parsed = try EndpointDocument(document)  // changed in place: one copy of the endpoint
            let id = id ?? newID()
            let hooks = self.hooks
            if parsed.wantsProgress {
                parsed.endpoint.transfer.progress = { progress in
                    hooks.control(.progress, [
                        "id": .int(Int64(truncatingIfNeeded: id)), "direction": .string(progress.direction.rawValue),
                        "done": .int(progress.done), "total": .int(progress.total),
                    ])
                }
            }
            if parsed.endpoint.transfer.stream != nil {
                parsed.endpoint.transfer.onStreamEvent = { event in
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
                    return hooks.control(.stream, fields)
                }
            }
            let request = try network.makeRequest(for: parsed.endpoint)
            if let text, !parsed.wantsProgress, parsed.endpoint.transfer.stream == nil {
                preparedRequests.remember(text, request: request, decoder: parsed.endpoint.responseDecoder)
            }
            return .ready(request, parsed.endpoint.responseDecoder, id: id)
        } catch {
            return .failed(ResultDocument.failure(.networkFailure(error)))
        }
    }

    func prepare(json bytes: UnsafeBufferPointer<UInt8>, what: String, id: UInt64? = nil) -> Prepared {
        if let ready = remembered(bytes, id: id) { return ready }
        let document: JSON
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            return .failed(ResultDocument.invalid("\(what) is not valid JSON: \(error)"))
        }
        return build(document, id: id, text: bytes)
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
        network.send(request, id: id) { [dataTransfer] outcome in
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
            return Self.document(for: network.sendBlocking(request, id: id), request: request, decoder: decoder,
                                 dataTransfer: dataTransfer)
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
        for index in 0..<count {
            switch prepare(index) {
            case .failed(let document):
                results.set(index, document, counts: false)
            case .ready(let request, let decoder, let id):
                results.expectOneMore()
                let network = network, dataTransfer = dataTransfer
                @Sendable func start() {
                    _ = network.send(request, id: id) { outcome in
                        results.set(index, Self.document(for: outcome, request: request, decoder: decoder,
                                                         dataTransfer: dataTransfer), counts: true)
                    }
                }
                if startsOnCallingThread { start() } else { session.execute(start) }
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
/// wakes once, when the last expected one is in.
private struct BatchResults: Sendable {
    private let documents: Locked<[[UInt8]]>
    private let latch = Latch(count: 0)

    init(count: Int) { documents = Locked(Array(repeating: [], count: count)) }

    /// Before sending a request whose document `set` will bring later.
    func expectOneMore() { latch.countUp() }

    func set(_ index: Int, _ document: [UInt8], counts: Bool) {
        documents.withLock { $0[index] = document }
        if counts { latch.countDown() }
    }

    func waitForAll() -> [[UInt8]] {
        latch.wait()
        return documents.withLock { $0 }
    }
}

private extension NetworkOutcome {
    /// A success whose body is in memory: not written to a file, not streamed.
    var holdsBodyInMemory: Bool {
        guard case .success(let response) = result else { return false }
        return response.downloadedFile == nil && response.streamEvents == nil
    }
}
