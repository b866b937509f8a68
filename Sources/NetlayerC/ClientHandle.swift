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
    /// to this client's hooks under `id` (a new one when nil).
    func prepare(_ document: JSON, id: UInt64? = nil) -> Prepared {
        do {
            let parsed = try EndpointDocument(document)
            var endpoint = parsed.endpoint
            let id = id ?? newID()
            let hooks = self.hooks
            if parsed.wantsProgress {
                endpoint.transfer.progress = { progress in
                    hooks.control(.progress, [
                        "id": .int(Int64(truncatingIfNeeded: id)), "direction": .string(progress.direction.rawValue),
                        "done": .int(progress.done), "total": .int(progress.total),
                    ])
                }
            }
            if endpoint.transfer.stream != nil {
                endpoint.transfer.onStreamEvent = { event in
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
            return .ready(try network.makeRequest(for: endpoint), endpoint.responseDecoder, id: id)
        } catch {
            return .failed(ResultDocument.failure(.networkFailure(error)))
        }
    }

    func prepare(json bytes: UnsafeBufferPointer<UInt8>, what: String, id: UInt64? = nil) -> Prepared {
        do {
            return prepare(try JSONParser.parse(bytes), id: id)
        } catch {
            return .failed(ResultDocument.invalid("\(what) is not valid JSON: \(error)"))
        }
    }

    /// Sends `request` and returns the result document; `completion` runs on the loop thread.
    @discardableResult
    func send(_ request: HTTPRequest, id: UInt64, decoder: any ResponseDecoder,
              completion: @escaping @Sendable ([UInt8]) -> Void) -> any NetworkCancellable {
        network.send(request, id: id) { [dataTransfer] outcome in
            completion(Self.document(for: outcome, request: request, decoder: decoder, dataTransfer: dataTransfer))
        }
    }

    /// Sends every prepared request and waits for all of them. Results keep input order.
    /// Decoding runs on the caller's thread, so the loop thread only moves bytes.
    func perform(_ prepared: [Prepared]) -> [[UInt8]] {
        if prepared.count == 1, case .ready(let request, let decoder, let id) = prepared[0], hooks.isEmpty {
            // One request: run it on this thread, no hop to the loop and back. (With
            // hooks set it goes through the loop, where the contract runs hooks.)
            return [Self.document(for: network.sendBlocking(request, id: id), request: request, decoder: decoder,
                                  dataTransfer: dataTransfer)]
        }
        let slots = ResultSlots(count: prepared.count)
        let latch = Latch(count: prepared.count { if case .ready = $0 { true } else { false } })
        for (index, item) in prepared.enumerated() {
            guard case .ready(let request, _, let id) = item else { continue }
            _ = network.send(request, id: id) { outcome in
                slots.set(index, outcome)
                latch.countDown()
            }
        }
        latch.wait()
        return prepared.enumerated().map { index, item in
            switch item {
            case .failed(let document):
                return document
            case .ready(let request, let decoder, _):
                return Self.document(for: slots.get(index)!, request: request, decoder: decoder,
                                     dataTransfer: dataTransfer)
            }
        }
    }

    static func document(for outcome: NetworkOutcome, request: HTTPRequest,
                         decoder: any ResponseDecoder, dataTransfer: DefaultDataTransferService) -> [UInt8] {
        if decoder is JSONResponseDecoder, case .success(let response) = outcome.result,
           response.downloadedFile == nil, response.streamEvents == nil {
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

/// Per-index results filled from loop-thread completions and read after the latch opens.
private final class ResultSlots: @unchecked Sendable {
    private let slots: Locked<[NetworkOutcome?]>

    init(count: Int) { slots = Locked(Array(repeating: nil, count: count)) }

    func set(_ i: Int, _ outcome: NetworkOutcome) { slots.withLock { $0[i] = outcome } }
    func get(_ i: Int) -> NetworkOutcome? { slots.withLock { $0[i] } }
}
