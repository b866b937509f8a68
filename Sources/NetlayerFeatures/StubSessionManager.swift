import Glibc
import NetlayerCore
import NetlayerJSON

/// A transport that answers from rules and never touches the network: what a user's
/// own tests plug in instead of a server (the seeds' injectable `Session`), from
/// every language through the config's `stub` key.
///
/// Completions and back-off run on `loop`'s thread, as a real transport's would, so
/// hooks, retries and batches behave as they do against a server.
public final class StubSessionManager: NetworkSessionManager, @unchecked Sendable {
    /// One canned answer.
    public struct Rule: Sendable {
        /// Upper-case method, or nil for any.
        public var method: HTTPMethod?
        /// A URL path pattern: `*` matches within one segment, `**` across segments. A
        /// pattern without a leading `/` matches the end of the path at a segment
        /// boundary (`movies/*` matches `/api/v1/movies/7`).
        public var path: String
        public var status = 200
        public var headers = HTTPHeaders()
        public var body: [UInt8] = []
        /// Seconds before the answer.
        public var delay: Double = 0
        /// Fail with this error instead of answering.
        public var error: NetworkError?

        public init(method: HTTPMethod? = nil, path: String) {
            self.method = method
            self.path = path
        }
    }

    private let rules: [Rule]
    /// `rules`' path patterns, compiled once.
    private let patterns: [StubPathPattern]
    package let answers: LoopAnswers

    /// - Parameter loop: the client's transport, used only for its thread.
    public init(rules: [Rule], loop: any NetworkSessionManager) {
        self.rules = rules
        patterns = rules.map { StubPathPattern($0.path) }
        answers = LoopAnswers(loop: loop)
    }

    public func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let (delay, answer) = timed(request)
        return answers.deliver(answer, after: delay, to: completion)
    }

    public var urlParser: any URLParsing { answers.loop.urlParser }

    public func check(_ options: RequestOptions) throws(NetworkError) { try answers.loop.check(options) }
    public func execute(_ task: @escaping @Sendable () -> Void) { answers.loop.execute(task) }
    public func deliver(_ task: @escaping @Sendable () -> Void) { answers.loop.deliver(task) }
    public var isLibraryThread: Bool { answers.loop.isLibraryThread }
    public func shutdown() { answers.loop.shutdown() }
    public func lockForFork() { answers.loop.lockForFork() }
    public func unlockAfterFork() { answers.loop.unlockAfterFork() }

    /// Blocking calls are driven like the client's own (`CurlSessionManager.run`).
    public func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool {
        answers.loop.run(start, until: done, interrupt: interrupt)
    }

    /// The answer and when it comes: after the rule's delay, unless the request's
    /// timeout (or what is left of its deadline) ends it first, as `timedOut`.
    private func timed(_ request: HTTPRequest) -> (Double, Result<HTTPResponse, NetworkError>) {
        let rule = self.rule(for: request)
        let delay = rule?.delay ?? 0
        let limit = min(request.options.timeout ?? .infinity, request.options.deadline ?? .infinity)
        if delay > limit {
            return (limit, .failure(.timedOut("stub: the answer takes \(delay) s, longer than the \(limit) s allowed")))
        }
        return (delay, answer(rule, to: request))
    }

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        answers.loop.schedule(after: delay, task)
    }

    /// The first rule that matches, or nil.
    private func rule(for request: HTTPRequest) -> Rule? {
        let requestPath = Array(path(of: request.url).utf8)
        let index = rules.indices.first { i in
            (rules[i].method == nil || rules[i].method == request.method) && patterns[i].matches(requestPath)
        }
        return index.map { rules[$0] }
    }

    private func answer(_ rule: Rule?, to request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        guard let rule else {
            return .failure(.notConnected("stub: no rule answers \(request.method.rawValue) \(Redaction.url(in: request.url, queryNames: []))"))
        }
        if let error = rule.error { return .failure(error) }
        var response = HTTPResponse(statusCode: rule.status, headers: rule.headers, body: rule.body, totalMs: 0,
                                    effectiveURL: request.url)
        response.bodyBytes = Int64(rule.body.count)
        response.httpVersion = "1.1"
        return .success(response)
    }

    /// The path of an absolute URL, without query or fragment ("/" when empty), as
    /// the client's URL parser reads it.
    func path(of url: String) -> String {
        answers.loop.urlParser.parse(url)?.path ?? "/"
    }
}

extension StubSessionManager {
    /// The loop's transport's (`NetworkSessionManager.forkSource`).
    public var forkSource: AnyObject? { answers.loop.forkSource }
}
