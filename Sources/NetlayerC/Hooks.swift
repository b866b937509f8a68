import FoundationEssentials
import Glibc
import Netlayer
import Synchronization

/// `nl_hook_fn`: event document in, optional reply through `nl_reply_set`.
public typealias HookFunction = @convention(c) (UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void

extension ClientHandle {
    /// The contract's hook kinds (`NL_HOOK_*`).
    enum HookKind: Int32, CaseIterable {
        case adapt = 1, retry = 2, resolveError = 3, log = 4, progress = 5, stream = 6

        var name: String {
            switch self {
            case .adapt: return "NL_HOOK_ADAPT"
            case .retry: return "NL_HOOK_RETRY"
            case .resolveError: return "NL_HOOK_RESOLVE_ERROR"
            case .log: return "NL_HOOK_LOG"
            case .progress: return "NL_HOOK_PROGRESS"
            case .stream: return "NL_HOOK_STREAM"
            }
        }
    }
}

/// The object behind an `nl_reply *`: what the hook answered, parsed.
final class HookReply {
    /// The hook or callback answering, as messages name it.
    let who: String
    var value: JSON?
    var invalid: String?
    /// Set by `nl_reply_fail`: the request fails with it, whatever `value` says.
    var failure: NetworkError?

    init(who: String) { self.who = who }

    /// The reply `reply` points at; valid only during the hook call that received it.
    static func from(_ reply: OpaquePointer) -> HookReply {
        Unmanaged<HookReply>.fromOpaque(UnsafeRawPointer(reply)).takeUnretainedValue()
    }

    /// Calls `function` with a NUL-terminated copy of `event` and a reply to answer in.
    static func collect(_ event: JSON, who: String,
                        _ function: (UnsafePointer<CChar>?, OpaquePointer) -> Void) -> HookReply {
        let reply = HookReply(who: who)
        var document = JSONWriter.serialize(event)
        document.append(0)
        let replyPointer = OpaquePointer(Unmanaged.passUnretained(reply).toOpaque())
        document.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { text in
                ForkSafePoint.atRest { function(text.baseAddress, replyPointer) }
            }
        }
        return reply
    }

    /// What the answer comes to.
    var outcome: HookOutcome {
        if let failure { return .fail(failure) }
        if let invalid { return .invalid("\(who) reply \(invalid)") }
        guard let value else { return .noReply }
        guard case .object(let object) = value else {
            return .invalid("\(who) reply must be a JSON object, not \(value.typeName)")
        }
        return .reply(object)
    }
}

/// What calling a hook came to.
enum HookOutcome {
    case notSet
    case noReply
    case reply(JSONObject)
    /// The reply was not a JSON object (or not JSON): the request fails with this message.
    case invalid(String)
    /// The hook failed the request with `nl_reply_fail`.
    case fail(NetworkError)
}

extension ClientHandle {
    /// The hooks of one client. They may be set or removed at any time, also while
    /// requests are in flight: each call takes the hook set at that moment. A removal or
    /// replacement returns once no call of the hook it replaced is running on another
    /// thread, so that the caller may then free what the hook's user data points to.
    final class HookTable: @unchecked Sendable {
        private struct Entry: @unchecked Sendable {
            let function: HookFunction
            let userData: UnsafeMutableRawPointer?
            /// Which setting of the table this is: a removal waits for calls of this one.
            let serial: UInt64
        }

        /// A call of a hook under way: of which setting, on which thread, in which process
        /// (a child of `fork()` has none of its parent's threads, so their calls never end).
        private struct RunningCall {
            let serial: UInt64
            let thread: pthread_t
            let process: UInt64
        }

        /// The client whose threads hooks run on.
        private let owner: ClientReference

        init(owner: ClientReference) {
            self.owner = owner
        }

        /// Guards `entries`, `running` and `settings`; signalled when a call ends.
        private let gate = Platform.MutexCondition()
        private var entries: [Int32: Entry] = [:]
        private var running: [RunningCall] = []
        private var settings: UInt64 = 0
        /// Bit `kind` set while a hook of that kind is: read without the lock by the
        /// questions every request asks (`isSet`, `needsLoopThread`).
        private let setKinds = Atomic<UInt32>(0)

        /// Sets, replaces or (`function` nil) removes the hook of `kind`, and returns which
        /// setting it replaced, for `waitForCalls(of:)`.
        func replace(_ kind: HookKind, _ function: HookFunction?, _ userData: UnsafeMutableRawPointer?) -> UInt64? {
            gate.lock()
            defer { gate.unlock() }
            let replaced = entries[kind.rawValue]
            settings += 1
            entries[kind.rawValue] = function.map { Entry(function: $0, userData: userData, serial: settings) }
            let bit = UInt32(1) << UInt32(kind.rawValue)
            let kinds = setKinds.load(ordering: .relaxed)
            setKinds.store(function == nil ? kinds & ~bit : kinds | bit, ordering: .releasing)
            return replaced?.serial
        }

        /// Waits until no call of the setting `serial` runs on another thread. From inside a
        /// hook call it does not wait: two hooks removing each other would wait for each
        /// other. The caller holds no lock a hook call may need.
        func waitForCalls(of serial: UInt64?) {
            guard let serial else { return }
            gate.lock()
            defer { gate.unlock() }
            let me = pthread_self(), process = Platform.ProcessFork.generation
            if running.contains(where: { $0.process == process && pthread_equal($0.thread, me) != 0 }) { return }
            while running.contains(where: { $0.process == process && $0.serial == serial }) { gate.wait() }
        }

        func lockForFork() { gate.lock() }
        func unlockAfterFork() { gate.unlock() }

        func isSet(_ kind: HookKind) -> Bool { setKinds.load(ordering: .acquiring) & (UInt32(1) << UInt32(kind.rawValue)) != 0 }

        /// Whether a hook is set that runs while a request is on its way (ADAPT, RETRY,
        /// PROGRESS, STREAM): the contract has hooks run on a library thread, so requests
        /// then run on the client's event loop. LOG and RESOLVE_ERROR hooks are called on
        /// a library thread without that (`ClientHandle`).
        var needsLoopThread: Bool { setKinds.load(ordering: .acquiring) & Self.onTheWay != 0 }

        private static let onTheWay: UInt32 = [HookKind.adapt, .retry, .progress, .stream]
            .reduce(0) { $0 | UInt32(1) << UInt32($1.rawValue) }

        /// Calls the hook of `kind` with `event` and returns its reply, on a library thread
        /// (contract, section 6), where a blocking call of the same client is refused
        /// rather than deadlocking. Off the client's threads (a blocking request its caller
        /// drives: one that started before a hook was set, or whose failure is resolved
        /// there) the call goes to the event thread and the caller waits for the reply.
        func call(_ kind: HookKind, _ event: JSON) -> HookOutcome {
            guard isSet(kind) else { return .notSet }
            let run = { @Sendable [self] () -> HookOutcome in
                guard let entry = begin(kind) else { return .notSet }
                defer { end(entry) }
                return HookReply.collect(event, who: kind.name) { entry.function($0, $1, entry.userData) }.outcome
            }
            guard let client = owner.client, !client.isLoopThread else { return run() }
            let replied = RequestCompletion<HookOutcome>()
            client.callOnEventThread { replied.open(run()) }
            _ = replied.wait()
            return replied.outcome ?? .notSet
        }

        /// The hook of `kind` now, its call noted as running on this thread.
        private func begin(_ kind: HookKind) -> Entry? {
            gate.lock()
            defer { gate.unlock() }
            guard let entry = entries[kind.rawValue] else { return nil }
            running.append(RunningCall(serial: entry.serial, thread: pthread_self(), process: Platform.ProcessFork.generation))
            return entry
        }

        /// The call of `entry` on this thread ended: a removal waiting for it may return.
        private func end(_ entry: Entry) {
            gate.lock()
            let me = pthread_self()
            if let index = running.lastIndex(where: { $0.serial == entry.serial && pthread_equal($0.thread, me) != 0 }) {
                running.remove(at: index)
            }
            gate.broadcast()
            gate.unlock()
        }
    }
}

extension ClientHandle.HookTable {
    /// Calls a PROGRESS or STREAM hook: a reply `{"cancel": true}` stops the transfer,
    /// a malformed reply fails it with `invalid_request`.
    func control(_ kind: ClientHandle.HookKind, _ fields: JSONObject) -> TransferControl {
        TransferControl(call(kind, .object(fields)), who: kind.name)
    }
}

extension TransferControl {
    /// What a progress or stream event's answer asks of the transfer.
    init(_ outcome: HookOutcome, who: String) {
        switch outcome {
        case .notSet, .noReply:
            self = .proceed
        case .invalid(let message):
            self = .fail(.invalidRequest(message))
        case .fail(let error):
            self = .fail(error)
        case .reply(let reply):
            do {
                let doc = try DocumentReader(.object(reply), context: "\(who) reply")
                try doc.checkKeys(known: ["cancel"])
                self = try doc.bool("cancel") == true ? .cancel : .proceed
            } catch {
                self = .fail(error)
            }
        }
    }
}

// MARK: - Hooks as core protocols

/// ADAPT and RETRY hooks as the core's `RequestInterceptor`.
struct HookInterceptor: RequestInterceptor {
    let hooks: ClientHandle.HookTable
    /// The config's adaptMayChangeOrigin: a reply's `url` may leave the request's origin.
    var allowsOtherOrigin = false

    func adapt(_ request: HTTPRequest, context: RequestContext) throws(NetworkError) -> HTTPRequest {
        guard hooks.isSet(.adapt) else { return request }  // the event costs more than the request's own setup
        let event: JSON = .object([
            "id": .int(Int64(truncatingIfNeeded: context.id)), "attempt": .int(Int64(context.attempt)),
            "method": .string(request.method.rawValue), "url": .string(request.url),
            "headers": .object(JSONObject(request.headers.map { ($0.name, JSON.string($0.value)) })),
            // The bytes a signature covers (base64), and their count; null without a body.
            "body": request.body.map { .string(Data($0).base64EncodedString()) } ?? .null,
            "bodyBytes": .int(Int64(request.body?.count ?? 0)),
        ])
        switch hooks.call(.adapt, event) {
        case .notSet, .noReply:
            return request
        case .invalid(let message):
            throw .invalidRequest(message)
        case .fail(let error):
            throw error
        case .reply(let reply):
            let doc = try DocumentReader(.object(reply), context: "NL_HOOK_ADAPT reply")
            try doc.checkKeys(known: ["headers", "cancel", "url", "query", "body"])
            if try doc.bool("cancel") == true { throw .cancelled }
            var body: [UInt8]?
            if let text = try doc.string("body") {
                guard let bytes = Data(base64Encoded: text) else {
                    throw .invalidRequest("NL_HOOK_ADAPT reply key 'body' must be base64 text")
                }
                body = [UInt8](bytes)
            }
            let adaptation = RequestAdaptation(headers: try doc.requestHeaders("headers"), url: try doc.string("url"),
                                               query: try doc.object("query"), body: body)
            return try adaptation.apply(to: request, allowsOtherOrigin: allowsOtherOrigin, who: "NL_HOOK_ADAPT reply",
                                        parser: CurlURLParser())
        }
    }

    func retry(_ request: HTTPRequest, context: RequestContext, dueTo error: NetworkError) throws(NetworkError) -> RetryDecision {
        guard hooks.isSet(.retry) else { return .useDefault }
        let errorDocument = RequestResult.ResultDocument.errorObject(.networkFailure(error))
        let event: JSON = .object([
            "id": .int(Int64(truncatingIfNeeded: context.id)), "attempt": .int(Int64(context.attempt)),
            "method": .string(request.method.rawValue), "url": .string(request.url), "error": errorDocument,
        ])
        switch hooks.call(.retry, event) {
        case .notSet, .noReply:
            return .useDefault
        case .invalid(let message):
            throw .invalidRequest(message)
        case .fail(let error):
            throw error
        case .reply(let reply):
            let doc = try DocumentReader(.object(reply), context: "NL_HOOK_RETRY reply")
            try doc.checkKeys(known: ["retry", "delay"])
            guard let retry = try doc.bool("retry") else { return .useDefault }
            guard retry else { return .doNotRetry }
            let delay = doc.value("delay")
            if let delay, !(delay.doubleValue.map { $0 >= 0 && $0 <= 3600 } ?? false) {
                throw .invalidRequest("NL_HOOK_RETRY reply key 'delay' must be a number of seconds from 0 to 3600")
            }
            return .retry(delay: delay?.doubleValue ?? 0)
        }
    }
}

/// The RESOLVE_ERROR hook in front of the config's rules, as the core's resolver.
struct HookErrorResolver: DataTransferErrorResolver {
    let hooks: ClientHandle.HookTable
    let rules: any DataTransferErrorResolver

    func resolve(error: NetworkError) -> any Error & Sendable {
        guard case .error = error else { return error }
        switch hooks.call(.resolveError, RequestResult.ResultDocument.errorObject(.networkFailure(error))) {
        case .notSet, .noReply:
            return rules.resolve(error: error)
        case .invalid(let message):
            return NetworkError.invalidRequest(message)
        case .fail(let error):
            return error
        case .reply(let reply):
            do {
                let doc = try DocumentReader(.object(reply), context: "NL_HOOK_RESOLVE_ERROR reply")
                try doc.checkKeys(known: ["code", "message"])
                let code = try doc.string("code")
                let message = try doc.string("message") ?? DataTransferError.networkFailure(error).message
                return ResolvedError(code: code, message: message, underlying: error)
            } catch {
                return error
            }
        }
    }
}
