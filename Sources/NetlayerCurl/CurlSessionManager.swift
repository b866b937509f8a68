import CCurl
import Glibc
import Synchronization
import NetlayerCore
import NetlayerJSON

/// The libcurl `NetworkSessionManager`: one multi handle, so one connection pool, for
/// every request of a client (`CurlEventLoop`). Asynchronous requests run on the
/// loop's thread, started by the first of them; a blocking request runs on its
/// caller's thread when nothing else is in flight, the caller driving the multi handle
/// itself, and waits for the loop's thread otherwise.
///
/// Completions run on the thread that drives; keep them short. `shutdown()` (or
/// releasing the last reference) cancels what is in flight and waits for every
/// completion.
public final class CurlSessionManager: NetworkSessionManager, @unchecked Sendable {

    let share: CurlShare
    /// The WebSocket connections (`openWebSocket`), ended at `shutdown()`.
    let webSockets = WebSocketRegistry()
    /// The jar's file, when it has one: read now, written at `shutdown()`.
    private let cookieFile: CookieFile?
    /// The event loop, made by the first request: an idle client holds none of its
    /// descriptors (epoll, eventfd, the multi handle's socket pair), and its thread
    /// starts with the first work that needs it. nil before that and after shutdown.
    private let loopState = Locked<(loop: CurlEventLoop?, shutDown: Bool)>((nil, false))
    /// `loopState.loop` once made (which keeps it), read without the lock by every request.
    private let startedLoopPointer = Atomic<UnsafeRawPointer?>(nil)
    private let maxConcurrent: Int
    private let delivery: DeliveryThread
    /// Where LOG events go: apart from completions, which a blocking caller waiting for
    /// its events must not wait behind (a completion may wait for a lock it holds).
    private let events: DeliveryThread

    /// - Parameter maxConcurrent: callback and async transfers in flight at once; the
    ///   rest queue in order. (Blocking requests are bounded by their callers' threads.)
    /// - Parameter cookies: the cookie jar of its requests; its file is read now and
    ///   written at `shutdown()` (see `CookieFile`).
    public init(maxConcurrent: Int = 64, cookies: CookieJar = CookieJar()) throws(NetworkError) {
        share = try CurlShare(cookiesEnabled: cookies.enabled)
        if cookies.enabled, let path = cookies.file {
            let file = try CookieFile(cookies, path: path)
            try share.seedCookies(file.read())
            cookieFile = file
        } else {
            cookieFile = nil
        }
        self.maxConcurrent = maxConcurrent
        delivery = DeliveryThread()
        events = DeliveryThread(name: "event thread")
    }

    /// A manager for a child of `fork()` whose jar starts as a copy of `parent`'s (the
    /// parent's manager, inherited, whose share's locks were held across the fork) and
    /// has no file: the parent's file stays the parent's to write.
    package init(maxConcurrent: Int, copyingCookiesOf parent: CurlSessionManager) throws(NetworkError) {
        share = try CurlShare(cookiesEnabled: parent.share.cookiesEnabled)
        if share.cookiesEnabled { try share.seedCookies(parent.share.cookieLines()) }
        cookieFile = nil
        self.maxConcurrent = maxConcurrent
        delivery = DeliveryThread()
        events = DeliveryThread(name: "event thread")
    }

    deinit {
        shutdown()
        // The loop's pooled handles use the share: they go first (curl_share_cleanup
        // refuses a share that easy handles still hold).
        loadedLoop?.releaseHandles()
    }

    public func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let loop: CurlEventLoop?
        do {
            loop = try startedLoop()
        } catch {
            let failed = CurlTransfer(request: request, loop: nil, share: share, completion: completion)
            failed.deliver(.failure(error))
            return failed
        }
        let transfer = CurlTransfer(request: request, loop: loop, share: share, completion: completion)
        if let loop { loop.start(transfer) } else { transfer.deliverCancelled() }  // after shutdown
        return transfer
    }

    /// The event loop, started now if it was not; nil after shutdown. Fails when the
    /// loop cannot start (no descriptor or thread left).
    func startedLoop() throws(NetworkError) -> CurlEventLoop? {
        // Once made, the loop stays until the manager goes (after shutdown it refuses
        // work itself): no lock on the way of every request.
        if let loop = loadedLoop { return loop }
        return try loopState.withLock { state throws(NetworkError) -> CurlEventLoop? in
            if let loop = state.loop { return loop }
            if state.shutDown { return nil }
            let loop = try CurlEventLoop(maxConcurrent: maxConcurrent, share: share)
            state.loop = loop
            startedLoopPointer.store(UnsafeRawPointer(Unmanaged.passUnretained(loop).toOpaque()), ordering: .releasing)
            return loop
        }
    }

    /// The loop once made, without the lock (`loopState` keeps it).
    private var loadedLoop: CurlEventLoop? {
        guard let pointer = startedLoopPointer.load(ordering: .acquiring) else { return nil }
        return Unmanaged<CurlEventLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `start` and waits for `done`: on the calling thread, which drives the
    /// client's multi handle itself when nothing else is in flight (no hop to the loop
    /// thread and back, which is most of the cost of a small request on loopback);
    /// else the loop's thread runs the work and the caller waits.
    public func run(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> Bool {
        if let loop = try? startedLoop() {
            switch loop.drive(start, until: done, interrupt: interrupt) {
            case .done: return true
            case .interrupted: return false
            case .handedOver: return done.wait(interruptedBy: interrupt)
            case .notOwner: break
            }
        }
        start()
        return done.wait(interruptedBy: interrupt)
    }

    public var cookieSource: (any CookieSource)? { share.cookiesEnabled ? share : nil }

    /// libcurl's parser, made once: every response asks for it (a redirect is resolved with it).
    public let urlParser: any URLParsing = CurlURLParser()

    public func check(_ options: RequestOptions) throws(NetworkError) {
        if options.transport.httpVersion == .http3, !CurlGlobal.hasHTTP3 {
            let version = nl_version_info().map { String(cString: $0.pointee.version) } ?? "?"
            throw .invalidRequest("config key 'httpVersion' '3' needs a libcurl built with HTTP/3, and this one (\(version)) is not")
        }
        if let proxy = options.proxy, !proxy.isEmpty { try Self.checkProxy(proxy) }
    }

    /// The schemes libcurl 7.88 takes for a proxy (url.c, parse_proxy).
    static let proxySchemes: Set<String> = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// A proxy libcurl would refuse only when a transfer starts (a `not_connected`
    /// failure, retried as one): read as libcurl reads it, with its own URL parser, when
    /// the client is made. The message leaves the value out: it may hold a password.
    static func checkProxy(_ proxy: String) throws(NetworkError) {
        if let bad = proxy.utf8.first(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw .invalidRequest("config key 'proxy' has \(HTTPHeaders.describeControl(bad)), which no proxy URL holds")
        }
        guard let handle = curl_url() else { return }
        defer { curl_url_cleanup(handle) }
        let rc = curl_url_set(handle, CURLUPART_URL, proxy, UInt32(CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME))
        guard rc == CURLUE_OK else {
            throw .invalidRequest("config key 'proxy' is not a proxy URL: \(String(cString: curl_url_strerror(rc)))")
        }
        var scheme: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK, let scheme else { return }
        defer { curl_free(scheme) }
        let name = String(cString: scheme).lowercased()
        guard proxySchemes.contains(name) else {
            throw .invalidRequest("config key 'proxy': '\(name.escapedForMessage)' is not a proxy scheme (http, https, socks4, socks4a, socks5 or socks5h)")
        }
    }

    /// Runs `task` on the loop thread, in order with completions; after shutdown,
    /// on the calling thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        if let loop = try? startedLoop() { loop.execute(task) } else { task() }
    }

    public func schedule(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        if let loop = try? startedLoop() { loop.execute(after: delay, task) } else { task() }
    }

    /// Runs `task` on the delivery thread, after the tasks delivered before it: work
    /// that follows a completion and need not hold up the loop (decoding, the caller's
    /// callback). After shutdown, on the calling thread.
    public func deliver(_ task: @escaping @Sendable () -> Void) {
        delivery.submit(task)
    }

    public func deliverEvent(_ task: @escaping @Sendable () -> Void) {
        events.submit(task)
    }

    /// Whether the caller is running on one of this manager's threads (the loop or
    /// the delivery thread), where waiting for a request of the same manager would
    /// deadlock.
    public var isLibraryThread: Bool {
        if delivery.isCurrentThread || events.isCurrentThread { return true }
        return loadedLoop?.isCurrentThread ?? false
    }

    /// Cancels every request, delivers their completions (a blocking caller's too) and
    /// stops the loop and delivery threads. Does nothing on either thread.
    public func shutdown() {
        if isLibraryThread { return }
        let (loop, first) = loopState.withLock { state -> (CurlEventLoop?, Bool) in
            defer { state.shutDown = true }
            return (state.loop, !state.shutDown)
        }
        webSockets.shutdown()  // stops what is opening; the loop ends what is open
        loop?.shutdown()  // cancels what is in flight, a blocking caller's transfer too
        delivery.shutdown()  // after the loop: its last completions deliver here
        events.shutdown()  // after both: their last events
        if first, let cookieFile {
            cookieFile.write(share.limitedCookieLines())
            cookieFile.unlock()
        }
    }

    /// Takes the share's locks before a `fork()`: a child copies the jar from it.
    public func lockForFork() { share.lockForFork() }

    /// Gives back what `lockCookiesForFork()` took, in the parent and in the child.
    public func unlockAfterFork() { share.unlockAfterFork() }
}

extension CurlSessionManager {
    /// Itself: a child of `fork()` copies its cookie jar (`NetworkSessionManager.forkSource`).
    public var forkSource: AnyObject? { self }
}
