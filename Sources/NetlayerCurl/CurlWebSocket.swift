import CCurl
import CWslay
import Glibc
import NetlayerCore
import NetlayerJSON

/// One WebSocket connection of the curl transport. libcurl makes the connection (an
/// easy handle with `CURLOPT_CONNECT_ONLY`, on an opener thread: TCP or a Unix socket,
/// a proxy's CONNECT tunnel, TLS, with the client's settings); then its socket joins
/// the client's event loop (`WatchedDescriptor`), which writes the opening handshake,
/// reads the answer and moves frames with `curl_easy_send`/`curl_easy_recv`. wslay
/// frames and checks the messages. An idle connection costs its socket, the easy
/// handle and wslay's buffers: no thread.
///
/// Everything but `send`, `close`, `pauseReading` and `abandon` runs on the loop's
/// thread. Those queue work under `lock` and wake the loop.
package final class CurlWebSocket: WebSocketConnection, WatchedDescriptor, @unchecked Sendable {
    enum Phase { case connecting, handshaking, open, ended }

    /// What other threads hand the loop (guarded by `lock`).
    struct Outbox {
        var messages: [(kind: WebSocketMessageKind, bytes: [UInt8])] = []
        var head = 0
        /// Bytes of `messages` plus the message wslay is writing.
        var bytes = 0
        var closeRequest: (code: Int, reason: [UInt8])?
        var flushScheduled = false
        var ended = false
        var abandoned = false
        /// `pauseReading(true)`: the socket is not read until it is resumed or a close
        /// is requested.
        var readingPaused = false
        /// A resume's task is queued on the loop (one at a time: it reads the latest wish).
        var resumeQueued = false
    }

    /// The handshake's request, as adapted by `prepare` on the loop's thread.
    var request: HTTPRequest
    let options: WebSocketOptions
    private let prepare: @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest
    weak var loop: CurlEventLoop?
    private let share: CurlShare
    /// Hands the connection to an opener thread, and forgets it when it ends (the
    /// transport's registry).
    let registry: WebSocketRegistry
    private var lock = pthread_mutex_t()
    var outbox = Outbox()
    /// Held while a handler runs: `abandon()` waits for it. Recursive: a handler may
    /// abandon its own connection.
    private var handlerLock = pthread_mutex_t()
    private var handlers: WebSocketHandlers?
    /// The opener's cancel cell: 2 stops `curl_easy_perform` (libcurl's progress callback).
    let cancelCell: UnsafeMutablePointer<Int32> = {
        let cell = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        cell.initialize(to: 0)
        return cell
    }()

    // Loop thread (`easy` and `resolveList`: the opener thread's until it reports back).
    var phase = Phase.connecting
    var easy: UnsafeMutableRawPointer?
    var resolveList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    var socket: Int32 = -1
    var handshake: WebSocketHandshake?
    /// permessage-deflate, when the handshake agreed it.
    var compression: WebSocketCompression?
    /// The http or https URL libcurl connects to.
    var connectURL = ""
    /// An opener thread has (or will have) `easy` until it reports back (`openerDone`):
    /// until then an ending connection leaves the handle to `deinit`, which runs after
    /// the opener let go of the connection.
    var queuedForOpener = false
    var openerDone = false
    var handshakeSent = 0
    var received: [UInt8] = []
    /// Bytes read past the handshake's response: the first frames, read before wslay's.
    var early: [UInt8] = []
    var earlyOffset = 0
    var context: OpaquePointer?
    var watchedEvents: Int32 = 0
    var failure: WebSocketFailure?
    var closeReason = ""
    /// The code of the server's close frame (1005 when it had none), once one came.
    var closeCode: Int?
    /// Follows the frames read, for the close codes wslay refuses (`CloseCodeWatch`).
    var closeCodes = CloseCodeWatch()
    /// Why the socket failed under wslay's callbacks.
    var socketFailure: WebSocketFailure?
    /// A close frame was handed to wslay (the user's).
    var closeQueued = false
    /// The size of the message wslay is writing (taken from the outbox), 0 when none.
    var inFlightBytes = 0
    /// What wslay counts of that message in its queued length: its size on the wire
    /// (deflated or not), 0 when it goes in fragments (wslay counts none of those).
    var inFlightWireBytes = 0
    var peerClosedSocket = false
    var startedAt = Platform.MonotonicClock.now()
    var lastHeard = Platform.MonotonicClock.now()
    /// The process generation it was opened in: a child of `fork()` shares the socket
    /// but not the loop that runs it, so it can send nothing on it.
    let forkGeneration = Platform.ProcessFork.generation
    /// A frame header wslay handed over with the rest of its frame to follow
    /// (`WSLAY_MSG_MORE`): it goes out with the payload's first bytes, in one send (one
    /// TCP segment, one TLS record) rather than a send of its own.
    var heldHeader: [UInt8] = []
    /// The message wslay is writing as fragments, read by `fragmentSource`.
    var fragmenting: (bytes: [UInt8], offset: Int)?

    init(request: HTTPRequest, options: WebSocketOptions,
         prepare: @escaping @Sendable (HTTPRequest) throws(NetworkError) -> HTTPRequest,
         handlers: WebSocketHandlers, loop: CurlEventLoop?,
         share: CurlShare, registry: WebSocketRegistry) {
        self.request = request
        self.options = options
        self.prepare = prepare
        self.handlers = handlers
        self.loop = loop
        self.share = share
        self.registry = registry
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(&handlerLock, &attributes)
        pthread_mutexattr_destroy(&attributes)
        pthread_mutex_init(&lock, nil)
    }

    deinit {
        if let context { wslay_event_context_free(context) }
        if let easy { curl_easy_cleanup(easy) }
        if let resolveList { curl_slist_free_all(resolveList) }
        errorBuffer.deallocate()
        cancelCell.deallocate()
        pthread_mutex_destroy(&lock)
        pthread_mutex_destroy(&handlerLock)
    }

    func withOutbox<T>(_ body: (inout Outbox) throws(NetworkError) -> T) throws(NetworkError) -> T {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return try body(&outbox)
    }

    // MARK: Any thread

    package func send(_ kind: WebSocketMessageKind, _ bytes: UnsafeRawBufferPointer) throws(NetworkError) {
        try checkSameProcess()
        if kind == .text, String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) == nil {
            throw .invalidRequest("a text message must be UTF-8; send bytes as a binary message")
        }
        let copy = [UInt8](bytes)
        let schedule = try withOutbox { box throws(NetworkError) -> Bool in
            if box.ended || box.abandoned { throw .notConnected("the WebSocket is closed") }
            if box.closeRequest != nil { throw .notConnected("the WebSocket is closing") }
            guard box.bytes + copy.count <= options.maxQueuedBytes else {
                throw .tooLarge("the WebSocket's send queue would hold \(box.bytes + copy.count) bytes, over maxQueuedBytes"
                                + " (\(options.maxQueuedBytes)): the server is not reading fast enough")
            }
            box.messages.append((kind, copy))
            box.bytes += copy.count
            defer { box.flushScheduled = true }
            return !box.flushScheduled
        }
        if schedule { scheduleFlush() }
    }

    /// A connection inherited through `fork()` belongs to the parent: the child's
    /// messages would be queued for a loop that does not run in it.
    private func checkSameProcess() throws(NetworkError) {
        if Platform.ProcessFork.generation != forkGeneration {
            throw .notConnected("the WebSocket was opened by the parent of this process (before fork()); open one in this process")
        }
    }

    package func close(code: Int, reason: String) throws(NetworkError) {
        try checkSameProcess()
        guard WebSocketOptions.isSendableCloseCode(code) else {
            throw .invalidRequest("close code \(code) cannot be sent: use 1000 or 3000-4999 (RFC 6455 section 7.4)")
        }
        let reasonBytes = Array(reason.utf8)
        guard reasonBytes.count <= 123 else {
            throw .invalidRequest("a close reason is at most 123 bytes of UTF-8 (this one has \(reasonBytes.count))")
        }
        let (schedule, wasPaused) = try withOutbox { box throws(NetworkError) -> (Bool, Bool) in
            if box.ended || box.abandoned || box.closeRequest != nil { return (false, false) }
            box.closeRequest = (code, reasonBytes)
            defer { box.flushScheduled = true }
            return (!box.flushScheduled, box.readingPaused)
        }
        if schedule { scheduleFlush() }
        if wasPaused { runOnLoop { [self] in readingResumed() } }  // the close's answer must be read
        // The wait starts now, not once the close frame is written: behind messages a
        // server never reads, it would never be, and the close would wait for ever.
        let limit = options.closeTimeout
        runOnLoop { [self] in
            after(limit) { socket in
                socket.fail(WebSocketFailure(.timedOut("the server did not answer the close within \(limit) s (closeTimeout)")))
            }
        }
    }

    package func pauseReading(_ paused: Bool) {
        let resumed = try! withOutbox { box -> Bool in
            guard box.readingPaused != paused else { return false }
            box.readingPaused = paused
            guard !paused, !box.ended, !box.abandoned, box.closeRequest == nil, !box.resumeQueued else { return false }
            box.resumeQueued = true
            return true
        }
        // Pausing takes effect at the next read (`readSocket`), also from inside a
        // handler; resuming must look at the socket again. The task reads the wish
        // after taking its flag down, so a resume made after that queues another.
        if resumed {
            runOnLoop { [self] in
                try! withOutbox { $0.resumeQueued = false }
                readingResumed()
            }
        }
    }

    /// Whether the socket is not to be read now: paused with no close requested, or
    /// `backlogged` (loop thread).
    var readingPaused: Bool {
        backlogged || (try! withOutbox { $0.readingPaused && $0.closeRequest == nil })
    }

    package func abandon() {
        pthread_mutex_lock(&handlerLock)
        handlers = nil
        pthread_mutex_unlock(&handlerLock)
        cancelOpening()
        let first = try! withOutbox { box -> Bool in
            defer { box.abandoned = true }
            return !box.abandoned && !box.ended
        }
        if first { runOnLoop { [self] in end(sendingClose: 1001) } }
    }

    /// Stops the opener's `curl_easy_perform`, if it still runs.
    func cancelOpening() {
        _ = nl_state_exchange_if(cancelCell, 0, 2)
    }

    private func scheduleFlush() {
        runOnLoop { [self] in
            _ = try? withOutbox { box in box.flushScheduled = false }
            if phase == .open { pump() }
        }
    }

    /// Runs `task` on the loop's thread; when the loop has stopped, at once here.
    func runOnLoop(_ task: @escaping @Sendable () -> Void) {
        if let loop { loop.execute(task) } else { task() }
    }

    func deliver(_ body: (WebSocketHandlers) -> Void) {
        pthread_mutex_lock(&handlerLock)
        if let handlers { body(handlers) }
        pthread_mutex_unlock(&handlerLock)
    }

    // MARK: Opener thread

    /// Makes the connection with libcurl (blocking, bounded by the handshake's time
    /// limit and `cancelOpening()`); the loop takes it from there.
    func connect() {
        let result = openConnection(url: connectURL)
        runOnLoop { [self] in
            openerDone = true
            switch result {
            case .success(let fd): attach(fd)
            case .failure(let failure): fail(failure)
            }
        }
    }

    var handshakeLimit: Double { request.options.timeout ?? 30 }

    /// Loop thread: runs `prepare` (the client's ADAPT and LOG hooks, which run on the
    /// loop), writes the handshake and queues the connection for an opener thread.
    func prepareAndQueue() {
        if registry.isShutDown { return fail(WebSocketFailure(.cancelledBecause("the client was closed"))) }
        switch prepareHandshake() {
        case .failure(let failure):
            fail(failure)
        case .success(let url):
            connectURL = url
            queuedForOpener = registry.open(self)
            if !queuedForOpener { fail(WebSocketFailure(.cancelledBecause("the client was closed"))) }
        }
    }

    /// The handshake request, with the jar's cookies for the URL read now; the URL
    /// libcurl connects to.
    private func prepareHandshake() -> Result<String, WebSocketFailure> {
        do {
            request = try prepare(request)
        } catch {
            return .failure(WebSocketFailure(error))
        }
        // The handshake goes out as written, not through libcurl: held to the same
        // bound as a request's head, which libcurl keeps (its URL parser stops at 8 MB).
        if let oversized = CurlTransfer.oversizedHead(of: request) { return .failure(WebSocketFailure(oversized)) }
        guard let url = CurlURLParser().parse(request.url), url.scheme == "http" || url.scheme == "https" else {
            return .failure(WebSocketFailure(.urlGeneration("'\(request.url.escapedForMessage)' is not a ws, wss, http or https URL")))
        }
        let secure = url.scheme == "https"
        let cookies = share.cookies(for: request.url).filter { cookie in
            (!cookie.secure || secure) && Self.pathMatches(url.path, cookie.path)
        }
        do {
            handshake = try WebSocketHandshake(request: request, url: url, cookies: cookies, protocols: options.protocols,
                                               compression: options.compression)
        } catch {
            return .failure(WebSocketFailure(error))
        }
        return .success(url.url)
    }

    /// RFC 6265 section 5.1.4: whether a request to `path` carries a cookie set for `cookiePath`.
    static func pathMatches(_ path: String, _ cookiePath: String) -> Bool {
        let path = path.isEmpty ? "/" : path
        if path == cookiePath { return true }
        guard path.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || path.dropFirst(cookiePath.count).hasPrefix("/")
    }

    /// The opener could not run: the connection ends with `error`, on the loop.
    func connectFailed(_ error: NetworkError) {
        runOnLoop { [self] in fail(WebSocketFailure(error)) }
    }

    private func openConnection(url: String) -> Result<Int32, WebSocketFailure> {
        if nl_state_load(cancelCell) == 2 { return .failure(WebSocketFailure(.cancelled)) }
        guard let easy = curl_easy_init() else { return .failure(WebSocketFailure(.generic("curl_easy_init failed", curlCode: 27))) }
        self.easy = easy
        let options = request.options
        var rc = CURLE_OK
        func check(_ code: CURLcode) { if rc == CURLE_OK { rc = code } }
        check(nl_curl_setopt_str(easy, CURLOPT_URL, url))
        check(nl_curl_setopt_long(easy, CURLOPT_CONNECT_ONLY, 1))
        check(nl_curl_setopt_sockets(easy, curlOpenSocketCallback, curlCloseSocketCallback, nil))  // close-on-exec
        check(nl_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(nl_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        check(nl_curl_setopt_ptr(easy, CURLOPT_SHARE, share.handle))
        check(nl_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(nl_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int((handshakeLimit * 1000).rounded()))))
        check(nl_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS,
                                  options.connectTimeout.map { max(1, Int(($0 * 1000).rounded())) } ?? 0))
        // libcurl's own receive buffer is not used by curl_easy_recv: the smallest one
        // keeps an idle connection small.
        check(nl_curl_setopt_long(easy, CURLOPT_BUFFERSIZE, 1024))
        check(nl_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
        check(nl_curl_setopt_progress_stop_on_cancel(easy))
        check(nl_curl_setopt_ptr(easy, CURLOPT_XFERINFODATA, cancelCell))
        CurlTransfer.applyProxy(easy, options: options, check: check)
        if CurlTransfer.proxyMayApply(options) {
            // A tunnel for ws:// too: the handshake is ours, never a proxy's request.
            check(nl_curl_setopt_long(easy, CURLOPT_HTTPPROXYTUNNEL, 1))
            if let agent = options.userAgent { check(nl_curl_setopt_str(easy, CURLOPT_USERAGENT, agent)) }
        }
        CurlTransfer.applyCredentials(easy, options: options, check: check)
        let (refused, list) = CurlTransfer.applyConnection(easy, options.transport)
        resolveList = list
        if let refused { return .failure(WebSocketFailure(refused)) }
        // The handshake is HTTP/1.1: TLS must not agree on HTTP/2 (ALPN).
        check(nl_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)))
        guard rc == CURLE_OK else {
            return .failure(WebSocketFailure(CurlTransfer.rejected(rc, request: request)))
        }
        let code = curl_easy_perform(easy)
        if code == CURLE_ABORTED_BY_CALLBACK, nl_state_load(cancelCell) == 2 {
            return .failure(WebSocketFailure(.cancelled))
        }
        guard code == CURLE_OK else {
            var osErrno = 0
            nl_curl_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
            let error = CurlErrorMapping.error(for: code, detail: String(cString: errorBuffer), osErrno: Int32(truncatingIfNeeded: osErrno),
                                               unixSocket: options.transport.unixSocket, exceededLimit: false, limit: "")
            return .failure(WebSocketFailure(error))
        }
        var fd: curl_socket_t = -1
        guard nl_curl_getinfo_socket(easy, &fd) == CURLE_OK, fd >= 0 else {
            return .failure(WebSocketFailure(.generic("libcurl made no socket for the WebSocket", curlCode: -1)))
        }
        return .success(fd)
    }
}
