import NetlayerCore
import NetlayerJSON

/// A transport that sends over another (libcurl's) and keeps a redacted copy of
/// every exchange it completes, for a cassette: the config's `cassette` key in
/// record mode. Each hop of a redirect and each attempt of a retry is an exchange of
/// its own, as the transport saw it; a request the caller cancelled is not kept.
///
/// Exchanges complete on the loop thread and on the threads of blocking callers, so
/// they are kept under a lock, in the order they completed. `finish()` hands them to
/// `save` once; a recorder released without it (a Swift client dropped without
/// `shutdown()`) saves then.
public final class RecordingSessionManager: NetworkSessionManager, @unchecked Sendable {
    package let transport: any NetworkSessionManager
    private let redaction: CassetteRedaction
    private let save: @Sendable (Cassette) -> Void
    /// The exchanges kept so far, or nil once they were saved.
    private let kept = Locked<[Cassette.Exchange]?>([])
    /// The credentials of every request kept: a token a later request carries may be
    /// in an earlier exchange, the sign-in's answer that handed it out.
    private let credentials = Locked<Set<String>>([])

    public init(over transport: any NetworkSessionManager, redaction: CassetteRedaction,
                save: @escaping @Sendable (Cassette) -> Void) {
        self.transport = transport
        self.redaction = redaction
        self.save = save
    }

    deinit { finish() }

    public func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let jar = jarCookies(for: request)
        return transport.request(request) { [self] result in
            keep(request, result, jar: jar)  // before the completion: a shutdown it leads to must find it
            completion(result)
        }
    }

    public func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool {
        transport.run(start, until: done, interrupt: interrupt)
    }

    public var cookieSource: (any CookieSource)? { transport.cookieSource }

    public var urlParser: any URLParsing { transport.urlParser }

    public func check(_ options: RequestOptions) throws(NetworkError) { try transport.check(options) }
    public func execute(_ task: @escaping @Sendable () -> Void) { transport.execute(task) }
    public func deliver(_ task: @escaping @Sendable () -> Void) { transport.deliver(task) }
    public var isLibraryThread: Bool { transport.isLibraryThread }
    public func lockForFork() { transport.lockForFork() }
    public func unlockAfterFork() { transport.unlockAfterFork() }

    /// Shuts the transport down, then saves the cassette: every exchange has completed.
    public func shutdown() {
        guard !transport.isLibraryThread else { return }
        transport.shutdown()
        finish()
    }

    /// The jar's cookies for `request` before it is sent: the ones it may carry, which a
    /// response that deletes them (a logout) may still echo.
    private func jarCookies(for request: HTTPRequest) -> [StoredCookie] {
        transport.cookieSource?.cookies(for: request.url) ?? []
    }

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        transport.schedule(after: delay, task)
    }

    /// Saves what was kept, the first time only; exchanges that complete later are
    /// dropped.
    public func finish() {
        guard let exchanges = kept.withLock({ kept in defer { kept = nil }; return kept }) else { return }
        let secrets = RequestCredentials.usable(Array(credentials.withLock { $0 })).sorted { $0.utf8.count > $1.utf8.count }
        save(Cassette(exchanges: secrets.isEmpty ? exchanges : exchanges.map { redaction.scrubbing($0, of: secrets) }))
    }

    private func keep(_ request: HTTPRequest, _ result: Result<HTTPResponse, NetworkError>, jar: [StoredCookie]) {
        guard let exchange = redaction.exchange(request, result, jarCookies: jar) else { return }
        let found = redaction.credentialSecrets(of: request)
        if !found.isEmpty { credentials.withLock { $0.formUnion(found) } }
        kept.withLock { $0?.append(exchange) }
    }
}

extension RecordingSessionManager {
    /// The recorded transport's (`NetworkSessionManager.forkSource`).
    public var forkSource: AnyObject? { transport.forkSource }
}
