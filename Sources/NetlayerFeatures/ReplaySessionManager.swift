import NetlayerCore
import NetlayerJSON

/// A transport that answers from a cassette a recording client wrote and never
/// touches the network: the config's `cassette` key in replay mode.
///
/// A request matches a recorded one with the same method and URL, where a recorded
/// `REDACTED` query value or user-info matches any (the recording never kept the
/// secret). Identical requests get the recorded answers in the order they were
/// recorded (a retry that failed, then succeeded, replays so), the last one again
/// once they are used up. A recorded error replays as an error of the same kind.
///
/// Answers arrive on `loop`'s thread, as a real transport's would, so hooks, retries
/// and batches behave as they did while recording.
public final class ReplaySessionManager: NetworkSessionManager, @unchecked Sendable {
    private let exchanges: [Cassette.Exchange]
    /// Each exchange's URL, split for matching.
    private let urls: [ReplayURL]
    /// Exchange indices by method and URL without query and user-info, in order.
    private let index: [String: [Int]]
    /// Whether each exchange has answered already.
    private let used: Locked<[Bool]>
    private let redactedQuery: Set<String>
    package let answers: LoopAnswers

    /// - Parameter redactedQuery: query parameters kept out of the message of an
    ///   unmatched request, besides `Redaction.defaultQueryNames`.
    /// - Parameter loop: the client's transport, used only for its thread.
    public init(cassette: Cassette, redactedQuery: Set<String> = [], loop: any NetworkSessionManager) {
        exchanges = cassette.exchanges
        urls = cassette.exchanges.map { ReplayURL($0.request.url) }
        var index: [String: [Int]] = [:]
        for (i, exchange) in cassette.exchanges.enumerated() {
            index[Self.key(exchange.request.method, urls[i]), default: []].append(i)
        }
        self.index = index
        used = Locked([Bool](repeating: false, count: cassette.exchanges.count))
        self.redactedQuery = redactedQuery
        answers = LoopAnswers(loop: loop)
    }

    public func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        answers.deliver(answer(to: request), after: 0, to: completion)
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

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        answers.loop.schedule(after: delay, task)
    }

    private func answer(to request: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        let url = ReplayURL(request.url)
        let matching = (index[Self.key(request.method, url)] ?? []).filter { urls[$0].answers(url) }
        // An exchange recorded for exactly this URL before one whose REDACTED value only
        // stands for any: `?status=rejected` is answered by its own recording, not by
        // `?status=REDACTED` (a cookie value "accepted" scrubbed out of `?status=accepted`).
        let exact = matching.filter { urls[$0].answersExactly(url) }
        let candidates = exact.isEmpty ? matching : exact
        guard let last = candidates.last else {
            let shown = Redaction.url(in: request.url, queryNames: redactedQuery)
            return .failure(.notConnected("cassette: no recorded exchange answers \(request.method.rawValue) \(shown)"))
        }
        let chosen = used.withLock { used -> Int in
            let next = candidates.first { !used[$0] } ?? last
            used[next] = true
            return next
        }
        switch exchanges[chosen].result {
        case .failure(let error):
            return .failure(error)
        case .success(var response):
            response.effectiveURL = request.url
            response.bodyBytes = Int64(response.body.count)
            if response.httpVersion == nil { response.httpVersion = "1.1" }
            return .success(response)
        }
    }

    private static func key(_ method: HTTPMethod, _ url: ReplayURL) -> String {
        "\(method.rawValue) \(url.location)"
    }
}

/// A URL split the way replay compares it: the location (scheme, host, port and
/// path, without user-info), the user-info, and the query's name-value pairs in order.
/// The fragment never reaches a server and is ignored.
private struct ReplayURL {
    var location: String
    var userInfo: Substring?
    var query: [(name: Substring, value: Substring?)]

    init(_ url: String) {
        let sent = url.prefix { $0 != "#" }
        let question = sent.firstIndex(of: "?")
        var location = String(sent[..<(question ?? sent.endIndex)])
        query = question.map { q in
            sent[sent.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
                guard let eq = pair.firstIndex(of: "=") else { return (pair, nil) }
                return (pair[..<eq], pair[pair.index(after: eq)...])
            }
        } ?? []
        userInfo = nil
        if let scheme = location.firstRange(of: "://") {
            let authority = location[scheme.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@") {
                userInfo = Substring(String(authority[..<at]))
                location.removeSubrange(scheme.upperBound...at)
            }
        }
        self.location = location
    }

    /// Whether this recorded URL is `live`'s own, no REDACTED standing in for a value.
    func answersExactly(_ live: ReplayURL) -> Bool {
        userInfo == live.userInfo && query.count == live.query.count
            && zip(query, live.query).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Whether a request to `live` matches this recorded URL (same location).
    func answers(_ live: ReplayURL) -> Bool {
        guard userInfo == live.userInfo || userInfo == Substring(Cassette.redacted) else { return false }
        guard query.count == live.query.count else { return false }
        for (recorded, sent) in zip(query, live.query) {
            guard recorded.name == sent.name else { return false }
            if recorded.value == sent.value || recorded.value == Substring(Cassette.redacted) { continue }
            return false
        }
        return true
    }
}

extension ReplaySessionManager {
    /// The loop's transport's (`NetworkSessionManager.forkSource`).
    public var forkSource: AnyObject? { answers.loop.forkSource }
}
