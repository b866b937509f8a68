import CCurl
import Glibc
import NetlayerCore
import Synchronization
import NetlayerJSON

/// One request on its way through the event loop: its easy-handle options, the
/// response as it arrives, and the guarantee that its completion runs exactly once.
package final class CurlTransfer: NetworkCancellable, @unchecked Sendable {
    private enum State: Int {
        case pending = 0, finished = 1, cancelRequested = 2
    }

    let request: HTTPRequest
    private let completion: NetworkSessionManager.CompletionHandler
    /// The loop whose multi handle runs this transfer, driven by its thread or by a
    /// blocking caller (`CurlEventLoop.drive`).
    /// Strong: a transfer lives until its completion, and a weak reference would give
    /// the loop a side table (every retain of it slower, and one valgrind cannot trace
    /// in a child of `fork()` that leaves its parent's loop behind).
    let loop: CurlEventLoop?
    let share: CurlShare
    /// pending → finished (the transfer ended) or pending → cancelRequested (cancel()
    /// won the race); whoever moves it first decides what the completion reports.
    private let state = Atomic<Int>(State.pending.rawValue)

    // Touched only on the loop thread.
    var easy: UnsafeMutableRawPointer?
    /// Where the loop's `CurlEventLoop.RunningTransfers` keeps it; -1 when not running.
    var loopSlot = -1
    /// The pooled handle `easy` belongs to, from `configure` on.
    private(set) var handle: EasyHandle?
    /// `CURLOPT_RESOLVE`'s entries, read by libcurl when the transfer starts.
    var resolveList: UnsafeMutablePointer<curl_slist>?
    /// The parsed URL libcurl reads during the transfer, when the client keeps one.
    private(set) var sink: ResponseSink?
    private(set) var headers = HTTPResponse.ReceivedHeaders()
    private var delivered = false
    var upload: UploadSource?
    /// The files of multipart parts, read as libcurl sends them.
    var partSources: [UploadSource] = []
    /// Whether the loop's `CurlEventLoop.PausedTransfers` may hold this transfer (loop thread only).
    var isPausedOnLoop = false
    /// The consumer's latest `pauseReading` wish, applied by the driver.
    private let readingPauseWish = Atomic<Bool>(false)
    var readingPauseWanted: Bool { readingPauseWish.load(ordering: .sequentiallyConsistent) }
    /// Whether a task that applies the wish is queued on the loop: one at a time, so
    /// that a thread pausing and resuming in a tight loop queues no backlog.
    private let readingPauseQueued = Atomic<Bool>(false)
    /// Whether reading is paused for the consumer (driver thread only).
    var readingPaused = false
    var mime: OpaquePointer?
    var lastProgress: (at: UInt64, upload: Int64, download: Int64) = (0, -1, -1)
    var cancelledByHandler = false
    var uploadFailure: NetworkError?
    /// For a streamed request with a timeout: how long it has been silent.
    var silence: SilenceWatch?
    /// A stream that stayed silent past its timeout (its progress callback noticed).
    private(set) var silenceFailure: NetworkError?
    /// When the transfer's timeout (a stream's deadline) ends, in monotonic
    /// nanoseconds. libcurl checks it only between reads, and one read of a compressed
    /// body can inflate into a gigabyte of writes: the write callback checks it too,
    /// once per MiB written (`unclockedBytes`), so small bodies never read the clock.
    private var endsAt: UInt64?
    private var unclockedBytes = 0
    /// The timeout the write callback noticed.
    private(set) var writeTimeout: NetworkError?
    /// The request's own cookies replace the jar's of the same name (`CookieOverride`).
    private(set) var cookieOverride: CookieOverride?

    /// When the request's deadline ends (monotonic ns), counted from now: a transfer
    /// that waits for one of the client's `maxConcurrent` slots spends its deadline
    /// waiting (its timeout starts when it starts).
    let deadlineAt: UInt64?

    init(request: HTTPRequest, loop: CurlEventLoop?, share: CurlShare,
         completion: @escaping NetworkSessionManager.CompletionHandler) {
        self.request = request
        self.loop = loop
        self.share = share
        self.completion = completion
        deadlineAt = request.options.deadline.map { Platform.MonotonicClock.now() &+ UInt64(min($0, 1e9) * 1e9) }
    }

    /// The failure of a transfer whose deadline passed before it could start.
    static let deadlinePassedWhileWaiting = NetworkError.timedOut(
        "the request's deadline passed while it waited for one of the client's transfer slots (maxConcurrent)")

    /// Moves the state from pending to `next`; false if it had moved already.
    private func leavePending(for next: State) -> Bool {
        state.compareExchange(expected: State.pending.rawValue, desired: next.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    // MARK: NetworkCancellable

    @discardableResult
    package func cancel() -> Bool {
        guard leavePending(for: .cancelRequested) else { return false }
        loop?.enqueueCancel(self)
        return true
    }

    /// Stops or resumes reading the response (any thread). A pause made on the driver's
    /// thread (a stream handler's) takes effect before libcurl reads again; otherwise
    /// the driver applies the latest wish when it next runs its queued work.
    @discardableResult
    package func pauseReading(_ paused: Bool) -> Bool {
        guard state.load(ordering: .acquiring) == State.pending.rawValue, let loop else { return false }
        readingPauseWish.store(paused, ordering: .sequentiallyConsistent)
        if paused, loop.isDriverThread {
            applyReadingPause()
        } else if !readingPauseQueued.exchange(true, ordering: .sequentiallyConsistent) {
            // The task takes the flag down before it reads the wish: a wish made after
            // that queues a task of its own, one made before is the one it reads.
            loop.execute { [self] in
                readingPauseQueued.store(false, ordering: .sequentiallyConsistent)
                applyReadingPause()
            }
        }
        return true
    }

    /// Whether the completion has run (loop thread only).
    var isDelivered: Bool { delivered }

    var isCancelRequested: Bool { state.load(ordering: .acquiring) == State.cancelRequested.rawValue }

    // MARK: Loop-thread side

    /// Reports `result` unless a cancel won the race, in which case it reports `cancelled`.
    /// Runs the completion at most once.
    func deliver(_ result: Result<HTTPResponse, NetworkError>) {
        guard !delivered else { return }
        delivered = true
        let finished = leavePending(for: .finished)
        releaseResources()
        completion(finished ? result : .failure(.cancelled))
    }

    /// Reports `cancelled` whatever the state (cancel request or shutdown).
    func deliverCancelled() {
        guard !delivered else { return }
        delivered = true
        _ = leavePending(for: .finished)
        releaseResources()
        completion(.failure(.cancelled))
    }

    /// Ends a blocking transfer (its result was returned to the caller directly).
    func finishBlocking() {
        delivered = true
        _ = leavePending(for: .finished)
        releaseResources()
    }

    private func releaseResources() {
        if let resolveList { curl_slist_free_all(resolveList) }
        resolveList = nil
        sink?.discard()
        sink = nil
        upload?.close()
        upload = nil
        if let mime { curl_mime_free(mime) }
        mime = nil
        for source in partSources { source.close() }
        partSources = []
    }

    /// Sets every option this request needs on `handle`: only the per-request ones
    /// when the handle already holds this request's profile, else all of them after
    /// a reset.
    func configure(_ handle: EasyHandle) -> NetworkError? {
        let easy = handle.pointer
        self.easy = easy
        self.handle = handle
        cookieOverride = CookieOverride.needed(for: request, share: share)
        let reuse = cookieOverride == nil && handle.canReuse(for: request)
        if !reuse { handle.resetIfUsed() }
        let me = Unmanaged.passUnretained(self).toOpaque()
        var rc = CURLE_OK
        func check(_ code: CURLcode) { if rc == CURLE_OK { rc = code } }

        do {
            sink = try ResponseSink(for: request)
        } catch {
            return error
        }
        if request.transfer.stream != nil { sink?.cancelSource = self }
        let now = Platform.MonotonicClock.now()
        silence = SilenceWatch(for: request, now: now)
        if readingPaused { silence?.setPaused(true, at: now) }  // paused before it started
        // A stream's timeout bounds its silences (`silence`); only what is left of the
        // deadline bounds the whole of it. What the transfer waited for a slot is gone.
        var timeout = request.options.timeout, deadline = request.options.deadline
        if let deadlineAt {
            guard deadlineAt > now &+ 1_000_000 else { return Self.deadlinePassedWhileWaiting }
            let left = Double(deadlineAt &- now) / 1e9
            deadline = left
            timeout = min(timeout ?? left, left)
        }
        let limit = request.transfer.stream == nil ? timeout : deadline
        endsAt = limit.map { now &+ UInt64(min($0, 1e9) * 1e9) }
        // Per request: what points at this transfer, the URL and the header list.
        check(nl_curl_setopt_ptr(easy, CURLOPT_PRIVATE, me))
        check(handle.url.set(request.url, on: easy))
        check(nl_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, me))
        check(nl_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, me))
        handle.errorBuffer[0] = 0
        if callsProgress { check(nl_curl_setopt_ptr(easy, CURLOPT_XFERINFODATA, me)) }
        let headers = HeaderList(request, userAgentAsOption: Self.proxyMayApply(request.options))
        check(nl_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, handle.headerList(for: headers)))
        let cookies = request.headers["Cookie"].map { String(HTTPHeaders.wireValue($0)) ?? "" }
        if cookies?.isEmpty == false || handle.hasCookieOption {
            check(nl_curl_setopt_str(easy, CURLOPT_COOKIE, cookies?.isEmpty == false ? cookies : nil))
            handle.hasCookieOption = cookies?.isEmpty == false
        }
        if watchesSentHeaders {
            // libcurl answers a digest challenge, and adds lines of its own: what it
            // sends is seen here (`sentCredentials`, `sentHeaderLines`).
            check(nl_curl_setopt_ptr(easy, CURLOPT_DEBUGDATA, me))
        }
        if reuse {
            return rc == CURLE_OK ? nil : rejected(rc)
        }
        let options = request.options

        check(nl_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(nl_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, handle.errorBuffer))
        check(nl_curl_setopt_ptr(easy, CURLOPT_SHARE, share.handle))
        if share.cookiesEnabled, !handle.cookieEngineOn {  // the engine, over the share's jar
            check(nl_curl_setopt_str(easy, CURLOPT_COOKIEFILE, ""))
            handle.cookieEngineOn = true
        }
        if callsProgress {
            check(nl_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
            check(nl_curl_setopt_xferinfo(easy, CURLOPT_XFERINFOFUNCTION, curlProgress))
        }
        if request.url.hasASCIIPrefix("https:") {
            // Wait for a connection being set up to the same host rather than open one
            // more: over HTTP/2 (ALPN) the requests then share it as streams.
            check(nl_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        }
        check(nl_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(nl_curl_setopt_str(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(nl_curl_setopt_write(easy, CURLOPT_WRITEFUNCTION, curlWriteBody))
        check(nl_curl_setopt_write(easy, CURLOPT_HEADERFUNCTION, curlWriteHeader))

        check(nl_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, limit.map { max(1, Int(($0 * 1000).rounded())) } ?? 0))
        check(nl_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS,
                                  options.connectTimeout.map { max(1, Int(($0 * 1000).rounded())) } ?? 0))
        // Redirects are followed by RequestAttempts.RedirectPolicy, one transfer per hop.
        check(nl_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
        check(nl_curl_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(ResponseSink.announcedSizeLimit(for: request))))
        if options.compression { check(nl_curl_setopt_str(easy, CURLOPT_ACCEPT_ENCODING, "")) }
        if let userAgent = options.userAgent, Self.proxyMayApply(options) {
            check(nl_curl_setopt_str(easy, CURLOPT_USERAGENT, userAgent))  // else a header (above)
        }
        Self.applyProxy(easy, options: options, check: check)
        configureCredentials(easy, options: options, check: check)
        if watchesSentHeaders {
            check(nl_curl_setopt_long(easy, CURLOPT_VERBOSE, 1))
            check(nl_curl_setopt_debug(easy, curlDebug))
        }
        if let error = configureConnection(easy, options.transport) { return error }

        switch request.method {
        case .get: check(nl_curl_setopt_long(easy, CURLOPT_HTTPGET, 1))
        case .head: check(nl_curl_setopt_long(easy, CURLOPT_NOBODY, 1))
        case .post: check(nl_curl_setopt_long(easy, CURLOPT_POST, 1))
        default:
            check(nl_curl_setopt_str(easy, CURLOPT_CUSTOMREQUEST, request.method.rawValue))
        }
        if let error = configureBody(easy, check: check) { return error }
        cookieOverride?.install(on: handle, check: check)
        guard rc == CURLE_OK else { return rejected(rc) }
        handle.profile = cookieOverride == nil ? EasyProfile(request) : nil
        return nil
    }

    /// Whether libcurl calls `curlProgress`: for a progress handler (a stream's silence
    /// is watched by the loop, to the millisecond).
    private var callsProgress: Bool { request.transfer.progress != nil }

    /// Whether the stream has been silent too long (asked by libcurl's progress
    /// callback); then the transfer ends with that error.
    func silenceEnded() -> Bool {
        guard let failure = silence?.failure(at: Platform.MonotonicClock.now()) else { return false }
        silenceFailure = failure
        return true
    }

    private func rejected(_ rc: CURLcode) -> NetworkError { Self.rejected(rc, request: request) }

    // MARK: libcurl callbacks (loop thread)

    /// What libcurl's write callback returns for `bytes`.
    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        // A cancel stops the body at once, not after libcurl's current read.
        guard let sink, let easy, !isCancelRequested else { return 0 }
        // Paused before libcurl began receiving (its pause is reset when a transfer
        // begins): libcurl keeps these bytes and hands them over again on resume. A
        // pause wished on another thread is taken here too, not only when the driver
        // runs its queued work: one call of libcurl's may read a hundred times before
        // that, and a stream's reader would fall thousands of events behind.
        if readingPaused || readingPauseWish.load(ordering: .relaxed) {
            if !readingPaused { applyReadingPause() }
            if readingPaused { return nl_writefunc_pause }
        }
        silence?.heard(at: Platform.MonotonicClock.now())
        if let endsAt {
            unclockedBytes &+= bytes.count
            if unclockedBytes >= 1 << 20 {
                unclockedBytes = 0
                if Platform.MonotonicClock.now() >= endsAt {
                    let what = request.transfer.stream == nil ? "timeout" : "deadline"
                    writeTimeout = .timedOut("the response passed its \(what) while its body was arriving (or being decompressed)")
                    return 0
                }
            }
        }
        let outcome = sink.write(bytes) {
            var status = 0
            nl_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            // A redirect that will be followed is not the answer, even where its status
            // is acceptable: its body is no stream's or download's.
            return request.options.acceptableStatus.contains(status)
                && !(RequestAttempts.RedirectPolicy.isRedirect(status) && request.options.followRedirects
                     && !(headers.value(named: "location")?.isEmpty ?? true))
        }
        switch outcome {
        case .proceed: return bytes.count
        case .stop: return 0
        case .wait(let wait):
            pause(until: wait)
            return nl_writefunc_pause
        }
    }

    /// Values of credential header lines libcurl sent that the request did not hold
    /// (its answer to a digest challenge); seen only while `watchesSentHeaders`.
    private(set) var sentCredentials: [String] = []
    /// The header blocks libcurl sent, with `RequestOptions.recordsSentHeaders`, up to
    /// `HTTPResponse.maxSentHeaderBytes`.
    private(set) var sentHeaderBytes: [UInt8] = []

    /// Whether libcurl's debug callback shows this transfer what it sends: for a digest
    /// answer's credentials, and for the lines a debug log shows.
    private var watchesSentHeaders: Bool {
        let options = request.options  // one copy: this runs for every request
        if options.recordsSentHeaders { return true }
        if case .digest? = options.auth { return true }
        return false
    }

    /// Notes the credential lines of a header block libcurl sent (`CURLINFO_HEADER_OUT`),
    /// and keeps the block when asked to.
    func noteSent(headerBlock: UnsafeRawBufferPointer) {
        if request.options.recordsSentHeaders {
            let room = HTTPResponse.maxSentHeaderBytes - sentHeaderBytes.count
            if room > 0 { sentHeaderBytes.append(contentsOf: headerBlock.prefix(room)) }
        }
        for line in headerBlock.split(separator: 0x0A) {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            guard RequestCredentials.alwaysSecretHeaders.contains(name.lowercased()) else { continue }
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: " \t\r")
            if request.headers[name] != value, !sentCredentials.contains(value) { sentCredentials.append(value) }
        }
    }

    /// Why the response headers broke HTTP, when libcurl let them through.
    var headerViolation: String?
    /// Bytes of trailer lines (after a chunked body) so far.
    private var trailerBytes = 0
    /// `Set-Cookie` lines among the response's header lines (every response's of the
    /// transfer: a 1xx's, an authentication round's).
    private(set) var setCookieLines = 0

    /// Takes one header line libcurl hands over; false stops the transfer on a framing
    /// error libcurl tolerates (`HTTPResponse.ReceivedHeaders.append(line:)`).
    func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        silence?.heard(at: Platform.MonotonicClock.now())
        // libcurl has stored what it takes of a Set-Cookie line before it hands the line
        // over: the share learns of it now (a request starting meanwhile reads the jar
        // again) and counts it when the transfer ends.
        if bytes.count > 11, bytes[3] == UInt8(ascii: "-"), bytes[0] | 0x20 == UInt8(ascii: "s"), share.cookiesEnabled,
           strncasecmp(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), "set-cookie:", 11) == 0 {
            if setCookieLines == 0 { share.cookiesChanged(added: 0) }
            setCookieLines += 1
        }
        let wasEnded = headers.sectionEnded
        if let violation = headers.append(line: bytes) {
            headerViolation = violation
            return false
        }
        // A line after the header section that starts none is a trailer, which the
        // headers leave out; libcurl keeps every one it hands over, so an endless
        // trailer section would hold ever more memory.
        guard wasEnded, headers.sectionEnded else { return true }
        trailerBytes += bytes.count
        guard trailerBytes > Self.maxTrailerBytes else { return true }
        headerViolation = "the response's trailer section is larger than \(Self.maxTrailerBytes / 1024) KiB"
        return false
    }

    /// The charset the response's `Content-Type` names, as `auto` reads it (nil for
    /// none, or one the Encoding Standard does not know): what a `lines` stream's lines
    /// are decoded from.
    var responseCharset: TextEncoding? {
        AutoResponseDecoder.charset(ofContentType: headers.value(named: "content-type"))
    }

    /// The most bytes of trailer lines a response may send.
    static let maxTrailerBytes = 64 * 1024
}
