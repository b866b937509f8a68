import Netlayer

/// The object behind an `nl_client *`: the core client, its named endpoints and its
/// hooks. It reads documents into requests and writes results as documents; the
/// core client runs the requests.
final class ClientHandle: Sendable {
    let client: NetlayerClient
    let hooks: HookTable
    /// The config's own secret query names, kept out of the error messages this layer
    /// writes itself (a WebSocket's); the client redacts those of requests.
    let redactedQuery: Set<String>
    /// The hook table's locks in the fork registry (see `ForkLocks`).
    private let forkLocks: ForkLocks

    /// The hooks as the core's interceptor and resolver, installed in the client only
    /// while a hook of theirs is set: a client without hooks runs none of them.
    private let interceptor: HookInterceptor
    private let resolver: HookErrorResolver
    /// Serialises `setHook`, which installs or removes the adapters above. A bare
    /// pthread mutex: it guards no Swift value, and a `Locked(())` first taken from a
    /// hook's thread is an exclusivity access ThreadSanitizer reports.
    private let hookChanges = Platform.MutexCondition()

    init(config: ConfigDocument) throws(NetworkError) {
        let owner = ClientReference()
        let hooks = HookTable(owner: owner)
        self.hooks = hooks
        redactedQuery = config.redactedQuery
        let parts = config.clientParts { event in
            guard hooks.isSet(.log), let client = owner.client else { return LogEvent.writeToStderr(event) }
            // Hooks run on a library thread (contract, section 6), also for a request that
            // runs on its caller's thread: the event goes to the event thread, in order.
            client.deliverEvent { if case .notSet = hooks.call(.log, event.json) { LogEvent.writeToStderr(event) } }
        }
        interceptor = HookInterceptor(hooks: hooks, allowsOtherOrigin: config.adaptMayChangeOrigin)
        resolver = HookErrorResolver(hooks: hooks, rules: parts.errorResolver)
        client = try NetlayerClient(parts)
        owner.client = client
        // The order `setHook` takes them in.
        let hookChanges = self.hookChanges
        forkLocks = ForkLocks(lock: { hookChanges.lock(); hooks.lockForFork() },
                              unlock: { hooks.unlockAfterFork(); hookChanges.unlock() })
    }

    /// `nl_client_set_hook`: sets or removes (nil) the hook of `kind`.
    /// Returns once no call of the hook it replaced runs on another thread; that wait
    /// holds no lock, so a hook may set hooks meanwhile.
    func setHook(_ kind: HookKind, _ function: HookFunction?, _ userData: UnsafeMutableRawPointer?) {
        hookChanges.lock()
        let replaced = hooks.replace(kind, function, userData)
        // ADAPT, RETRY, PROGRESS and STREAM hooks run while a request is on its way,
        // and hooks run on a library thread: with one of them set, requests start
        // and complete on the client's event loop.
        client.setStartsOnLoopThread(hooks.needsLoopThread)
        switch kind {
        case .adapt, .retry:
            client.setInterceptor(hooks.isSet(.adapt) || hooks.isSet(.retry) ? interceptor : nil)
        case .resolveError:
            client.setErrorResolver(hooks.isSet(.resolveError) ? resolver : nil)
        case .log, .progress, .stream:
            break
        }
        hookChanges.unlock()
        hooks.waitForCalls(of: replaced)
    }

    /// Returns once the LOG hook has had the events logged so far: a blocking call
    /// returns, and a completion callback runs, after its request's events, as when the
    /// hook ran inline. The events have a thread of their own: a blocking call waits
    /// behind LOG hook calls only, never behind a completion callback.
    private func awaitLogEvents() {
        guard hooks.isSet(.log) else { return }
        client.awaitEvents()
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
            return prepare(parsed: try EndpointDocument(document), id: id, callbacks: callbacks)
        } catch {
            return .failed(RequestResult.ResultDocument.failure(.networkFailure(error)))
        }
    }

    /// The request of an endpoint document already read (`nl_call`'s named endpoint).
    func prepare(parsed document: consuming EndpointDocument, id: UInt64? = nil, callbacks: RequestCallbacks? = nil) -> Prepared {
        do {
            var parsed = document  // changed in place: one copy of the endpoint
            let id = id ?? client.newID()
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
            let request = try client.makeRequest(for: parsed.endpoint)
            return .ready(request, parsed.endpoint.responseDecoder, id: id)
        } catch {
            return .failed(RequestResult.ResultDocument.failure(.networkFailure(error)))
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
            return .failed(RequestResult.ResultDocument.invalid("\(what) is not valid JSON: \(error)"))
        }
        return prepare(document, id: id, callbacks: callbacks)
    }

    /// One request's result document (`nl_request`, `nl_call`).
    func perform(_ prepared: consuming Prepared) -> CString.OutgoingDocument {
        switch consume prepared {  // the request moves out: no copy of it
        case .failed(let document):
            return .bytes(document)
        case .ready(let request, let decoder, let id):
            let result = RequestResult(client.perform(request, id: id), request: request, decoder: decoder, client: client)
            awaitLogEvents()
            return .written(RequestResult.ResultDocument.write(result))
        }
    }

    /// The result documents of `count` requests, in order (`nl_request_batch`).
    func perform(count: Int, prepare: (Int) -> Prepared) -> [[UInt8]] {
        var failed: [Int: [UInt8]] = [:]
        // Each document is written on a library thread as its request completes, while
        // the others are still in flight: no serial tail of writing after the last one.
        let results: [[UInt8]?] = client.perform(count: count, prepare: { index in
            switch prepare(index) {
            case .failed(let document):
                failed[index] = document
                return nil
            case .ready(let request, let decoder, let id):
                return (request, id, { [client] (outcome: NetworkOutcome) -> [UInt8] in
                    RequestResult(outcome, request: request, decoder: decoder, client: client).document
                })
            }
        })
        awaitLogEvents()
        return results.enumerated().map { index, document in document ?? failed[index] ?? [] }
    }

    /// Starts a prepared request whose result document goes to `notify`, always on a
    /// library thread (`nl_request_async`, `nl_request_start` and their named forms).
    func start(_ prepared: Prepared, id: UInt64, notify: AsyncCallback) {
        switch prepared {
        case .failed(let document):
            // The contract promises the callback on a library thread, never inline, and
            // completion callbacks run one at a time.
            client.deliver { notify(id, document) }
        case .ready(let request, let decoder, _):
            client.start(request, id: id) { [client, hooks] outcome in
                let document = RequestResult(outcome, request: request, decoder: decoder, client: client).document
                if hooks.isSet(.log) { client.awaitEvents() }  // its LOG events first, as before its callback
                notify(id, document)
            }
        }
    }

}

/// The client a `ClientHandle`'s log sink and resolver reach, set once the client is
/// made (the parts that capture it are made first). Unowned: the handle owns the
/// client, and nothing of the client runs after the handle frees it.
final class ClientReference: @unchecked Sendable {
    unowned(unsafe) var client: NetlayerClient?
}
