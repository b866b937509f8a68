import CCurl
import Glibc
import Synchronization

/// One libcurl multi handle driven by one thread: every transfer of a client runs
/// here, so they share one connection pool, DNS cache and TLS session cache.
///
/// The loop waits with epoll and drives libcurl with `curl_multi_socket_action`, so
/// each wake-up costs in proportion to the sockets that are ready, not to the number
/// of transfers in flight (a `curl_multi_perform` + poll loop walks every transfer).
///
/// Other threads never touch the multi handle. They queue work under a mutex and
/// wake the loop through an eventfd; the loop adds, cancels and completes
/// transfers, and runs completions on its own thread.
final class CurlEventLoop: LibraryThread, @unchecked Sendable {
    private struct Inbox {
        var starts: [CurlTransfer] = []
        var cancels: [CurlTransfer] = []
        var tasks: [@Sendable () -> Void] = []
        var timers: [(deadline: UInt64, task: @Sendable () -> Void)] = []
        var stopping = false
        var stopped = false
        /// Set by the loop as it goes to sleep in epoll with nothing queued: only then
        /// does queuing work need the eventfd (while the loop runs, it takes the
        /// inbox before it sleeps again).
        var asleep = false

        var isEmpty: Bool { starts.isEmpty && cancels.isEmpty && tasks.isEmpty && timers.isEmpty }

        /// Whether whoever queued work must wake the loop; the first one after it
        /// went to sleep does.
        mutating func takeWake() -> Bool {
            defer { asleep = false }
            return asleep
        }
    }

    let maxConcurrent: Int
    let share: CurlShare
    private let multi: UnsafeMutableRawPointer
    let epoll: Int32
    private let wakeFD: Int32
    private let inbox = Locked(Inbox())
    private var thread = pthread_t()
    private let threadStarted = Atomic<Bool>(false)

    // Loop thread only.
    private var active = 0
    private var waiting: [CurlTransfer] = []
    private var waitingHead = 0
    private var idleHandles: [EasyHandle] = []
    /// Keeps each running transfer alive while libcurl holds its pointer.
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// When libcurl wants `CURL_SOCKET_TIMEOUT` handled (monotonic ns), if ever.
    var timerDeadline: UInt64?
    /// Delayed tasks (retry back-off, silence checks of streams), earliest first.
    private var timers: [(deadline: UInt64, task: @Sendable () -> Void)] = []
    private var readyFDs = [Int32](repeating: 0, count: 256)
    /// Transfers paused until a local file is ready.
    private let paused: PausedTransfers
    private var readyFlags = [Int32](repeating: 0, count: 256)

    init(maxConcurrent: Int, share: CurlShare) throws(NetworkError) {
        try CurlGlobal.ensureInitialized()
        self.share = share
        let epoll = nl_epoll_create()
        let wakeFD = nl_eventfd_create()
        guard epoll >= 0, wakeFD >= 0, nl_epoll_set(epoll, wakeFD, CURL_POLL_IN, 0) == 0,
              let multi = curl_multi_init()
        else {
            // Asked before the descriptors made so far are closed, which would free one.
            let exhausted = DescriptorExhaustion.message()
            if epoll >= 0 { close(epoll) }
            if wakeFD >= 0 { close(wakeFD) }
            throw .generic(exhausted.map { "could not create the event loop: \($0)" }
                               ?? "could not create the event loop (epoll, eventfd or curl_multi_init failed)", curlCode: -1)
        }
        self.multi = multi
        self.epoll = epoll
        self.wakeFD = wakeFD
        paused = PausedTransfers(epoll: epoll)
        self.maxConcurrent = max(1, maxConcurrent)
        _ = nl_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, self.maxConcurrent))
        _ = nl_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        // libcurl calls these only from inside curl_multi_* calls on the loop thread,
        // so an unretained pointer is enough: the loop outlives its multi handle.
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = nl_curl_multi_setopt_socketfn(multi, curlSocketCallback)
        _ = nl_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = nl_curl_multi_setopt_timerfn(multi, curlTimerCallback)
        _ = nl_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)

        thread = try startThread("event-loop thread")
        threadStarted.store(true, ordering: .releasing)
    }

    deinit {
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
        close(epoll)
        close(wakeFD)
    }

    /// Whether the caller is this loop's thread (inside a completion or hook).
    var isCurrentThread: Bool {
        threadStarted.load(ordering: .acquiring) && pthread_equal(pthread_self(), thread) != 0
    }

    // MARK: Any thread

    /// Adds work to the inbox and wakes the loop if it sleeps (while it runs, it takes
    /// the inbox before it sleeps again); false once the loop is stopping. Inlined:
    /// as a plain call it measured a third more CPU per request with requests in
    /// flight (benchmarks/conc_netlayer.c).
    @inline(__always)
    private func queue(_ add: (inout Inbox) -> Void) -> Bool {
        let accepted = inbox.withLock { inbox -> Bool? in
            guard !inbox.stopping else { return nil }
            add(&inbox)
            return inbox.takeWake()
        }
        if accepted == true { wake() }
        return accepted != nil
    }

    /// Queues a transfer. After `shutdown()` it is cancelled at once.
    func start(_ transfer: CurlTransfer) {
        if !queue({ $0.starts.append(transfer) }) { transfer.deliverCancelled() }
    }

    func enqueueCancel(_ transfer: CurlTransfer) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopped else { return false }
            inbox.cancels.append(transfer)
            return inbox.takeWake()
        }
        if accepted { wake() }
    }

    /// Runs `task` on the loop thread; after shutdown, on the caller's thread.
    func execute(_ task: @escaping @Sendable () -> Void) {
        if !queue({ $0.tasks.append(task) }) { task() }
    }

    /// Runs `task` on the loop thread after `delay` seconds; after shutdown, at once
    /// on the calling thread.
    func execute(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        let deadline = Self.now() + UInt64(max(0, delay) * 1e9)
        if !queue({ $0.timers.append((deadline, task)) }) { task() }
    }

    /// Cancels everything, delivers every pending completion and joins the thread.
    /// From the loop's own thread it does nothing.
    func shutdown() {
        if isCurrentThread { return }  // waiting for ourselves would deadlock
        let first = inbox.withLock { inbox -> Bool in
            defer { inbox.stopping = true }
            return !inbox.stopping
        }
        if first {
            wake()
            pthread_join(thread, nil)
        }
    }

    private func wake() {
        nl_eventfd_signal(wakeFD)
    }

    // MARK: Loop thread

    func run() {
        while true {
            let work = inbox.withLock { inbox -> Inbox in
                let taken = inbox
                inbox.asleep = false
                inbox.starts = []
                inbox.cancels = []
                inbox.tasks = []
                inbox.timers = []
                if inbox.stopping { inbox.stopped = true }
                return taken
            }
            for task in work.tasks { task() }
            for timer in work.timers { addTimer(at: timer.deadline, timer.task) }
            for transfer in work.starts { enqueue(transfer) }
            for transfer in work.cancels { cancel(transfer) }
            if work.stopping {
                drainAll()
                return
            }
            runDueTasks()
            startWaiting()
            runTimerIfDue()
            var timeout = waitMilliseconds()
            if timeout != 0 {
                // Asleep only with nothing queued; work queued after this wakes it.
                let sleeps = inbox.withLock { inbox -> Bool in
                    if !inbox.isEmpty || inbox.stopping { return false }
                    inbox.asleep = true
                    return true
                }
                if !sleeps { timeout = 0 }
            }
            let count = Int(nl_epoll_wait(epoll, &readyFDs, &readyFlags, Int32(readyFDs.count), timeout))
            var stillRunning: Int32 = 0
            for i in 0..<max(0, count) {
                if readyFDs[i] == wakeFD {
                    nl_eventfd_drain(wakeFD)
                } else if !paused.isEmpty, paused.resume(descriptor: readyFDs[i]) {
                    continue
                } else if dropIfUnwanted(readyFDs[i]) {
                    continue
                } else {
                    curl_multi_socket_action(multi, readyFDs[i], readyFlags[i], &stillRunning)
                }
            }
            if !paused.isEmpty { paused.resumeDue(now: Self.now()) }
            runTimerIfDue()
            readCompletions()
        }
    }

    /// Called by the callback of `transfer` that paused it (loop thread): it goes on
    /// when `wait` is over.
    func resume(_ transfer: CurlTransfer, after wait: TransferWait) {
        paused.add(transfer, until: wait, now: Self.now())
    }

    /// How long epoll may sleep: until libcurl's timer, at most a second.
    private func waitMilliseconds() -> Int32 {
        let deadline = [timerDeadline, timers.first?.deadline, paused.nextDeadline].compactMap { $0 }.min()
        guard let deadline else { return 1000 }
        let now = Self.now()
        if deadline <= now { return 0 }
        return Int32(min(1000, (deadline - now + 999_999) / 1_000_000))
    }

    private func addTimer(at deadline: UInt64, _ task: @escaping @Sendable () -> Void) {
        let at = timers.firstIndex { $0.deadline > deadline } ?? timers.endIndex
        timers.insert((deadline, task), at: at)
    }

    /// Ends a running stream that has been silent longer than its timeout with kind
    /// `timeout`, or looks again when it next could be.
    private func checkSilence(of transfer: CurlTransfer) {
        guard let easy = transfer.easy, running[easy] === transfer, let silence = transfer.silence else { return }
        if let error = silence.failure(at: Self.now()) {
            running.removeValue(forKey: easy)
            finish(transfer)
            transfer.deliver(.failure(error))
        } else {
            addTimer(at: silence.expiresAt) { [self] in checkSilence(of: transfer) }
        }
    }

    private func runDueTasks() {
        let now = Self.now()
        while let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            first.task()
        }
    }

    private func runTimerIfDue() {
        guard let deadline = timerDeadline, deadline <= Self.now() else { return }
        timerDeadline = nil
        var stillRunning: Int32 = 0
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &stillRunning)
        readCompletions()
    }

    /// Per descriptor, what the loop knows of its socket (`watch(socket:what:)`): one
    /// epoll_ctl per change.
    var sockets: [SocketState] = []


    private func enqueue(_ transfer: CurlTransfer) {
        if transfer.isCancelRequested {
            transfer.deliverCancelled()
        } else {
            waiting.append(transfer)
        }
    }

    private func startWaiting() {
        while active < maxConcurrent, waitingHead < waiting.count {
            let transfer = waiting[waitingHead]
            waitingHead += 1
            if transfer.isDelivered { continue }  // cancelled while it waited
            begin(transfer)
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        } else if waitingHead > 1024 {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }

    private func begin(_ transfer: CurlTransfer) {
        guard let handle = idleHandles.popLast() ?? EasyHandle() else {
            transfer.deliver(.failure(.generic("curl_easy_init failed", curlCode: 27)))
            return
        }
        if let error = transfer.configure(handle) {
            recycle(handle)
            transfer.deliver(.failure(error))
            return
        }
        handle.useSocketCallbacks(open: curlOpenSocketCallback, close: curlCloseSocketCallback,
                                  context: Unmanaged.passUnretained(self).toOpaque())
        let easy = handle.pointer
        let rc = curl_multi_add_handle(multi, easy)
        guard rc == CURLM_OK else {
            recycle(handle)
            transfer.deliver(.failure(.generic("curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(rc)))",
                                               curlCode: -1)))
            return
        }
        running[easy] = transfer
        active += 1
        if let silence = transfer.silence {
            addTimer(at: silence.expiresAt) { [self] in checkSilence(of: transfer) }
        }
    }

    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = nl_curl_msg_result(message)
            guard let transfer = running.removeValue(forKey: easy) else { continue }
            let result = transfer.result(code: code)
            finish(transfer)
            transfer.deliver(result)
        }
    }

    private func cancel(_ transfer: CurlTransfer) {
        if let easy = transfer.easy, running.removeValue(forKey: easy) != nil {
            finish(transfer)
        }
        // Waiting transfers are skipped when their turn comes (deliver runs once).
        transfer.deliverCancelled()
    }

    private func finish(_ transfer: CurlTransfer) {
        guard let handle = transfer.handle else { return }
        paused.remove(transfer)
        curl_multi_remove_handle(multi, handle.pointer)
        active -= 1
        recycle(handle)
    }

    private func recycle(_ handle: EasyHandle) {
        handle.finishedTransfer()
        if idleHandles.count < maxConcurrent { idleHandles.append(handle) }  // else released: curl_easy_cleanup
    }

    private func drainAll() {
        for (_, transfer) in running {
            finish(transfer)
            transfer.deliverCancelled()
        }
        running.removeAll()
        for transfer in waiting[waitingHead...] { transfer.deliverCancelled() }
        waiting.removeAll()
        waitingHead = 0
        // Work queued while we were draining (from inside completions).
        let late = inbox.withLock { inbox -> Inbox in
            defer { inbox = Inbox(stopping: true, stopped: true) }
            return inbox
        }
        for task in late.tasks { task() }
        for transfer in late.starts { transfer.deliverCancelled() }
        // Pending back-off timers run now; what they start is cancelled at once.
        let pending = timers + late.timers
        timers.removeAll()
        for timer in pending { timer.task() }
    }
}
