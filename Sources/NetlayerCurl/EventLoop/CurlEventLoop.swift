import CCurl
import Glibc
import Synchronization
import NetlayerCore
import NetlayerJSON

/// One libcurl multi handle, and so one connection pool, DNS cache and TLS session
/// cache, for every transfer of a client: blocking, asynchronous and batched alike.
///
/// The multi handle is driven by whoever owns it, one thread at a time: the loop's own
/// thread, or a thread that makes a blocking request while nothing else is in flight.
/// That caller drives the multi handle itself until its transfer is done (as
/// `curl_easy_perform` drives a private one), so a blocking request costs no hop to
/// another thread and back, and still reuses the connections of asynchronous ones.
/// Work that arrives meanwhile (another thread's request, a cancel) is queued and
/// picked up by the driver; what is left when the caller's transfer ends is handed to
/// the loop's thread, which starts with the first work that needs it. Under
/// contention a blocking caller queues its transfer like any other and waits.
///
/// The driver waits with epoll and drives libcurl with `curl_multi_socket_action`, so
/// each wake-up costs in proportion to the sockets that are ready, not to the number
/// of transfers in flight. Other threads never touch the multi handle: they queue work
/// under a mutex and wake the driver through an eventfd (when it sleeps in epoll) or a
/// condition (the loop's thread, while it does not own the multi handle).
package final class CurlEventLoop: LibraryThread, @unchecked Sendable {
    enum Owner { case none, thread, caller }

    struct Inbox {
        var starts: [CurlTransfer] = []
        var cancels: [CurlTransfer] = []
        var tasks: [@Sendable () -> Void] = []
        var timers: [(deadline: UInt64, task: @Sendable () -> Void)] = []
        var stopping = false
        /// The driver drained everything after `stopping`; queuing is refused.
        var stopped = false
        /// The driver sleeps in epoll with nothing queued: queuing work must write the
        /// eventfd (while it runs, it takes the inbox before it sleeps again).
        var asleep = false
        var owner = Owner.none
        /// The loop's thread was started (it starts with the first work that needs it).
        var threadStarted = false
        /// The loop's thread waits on the condition for the multi handle to be its own.
        var threadParked = false
        /// A driver gave the multi handle up with transfers, timers or paused transfers
        /// in it: the loop's thread must take over.
        var workLeft = false
        /// The blocking caller that drives the multi handle (owner `.caller`).
        var driver = pthread_t()
        /// Another thread queued work while a blocking caller drives: the caller hands
        /// the multi handle to the loop's thread, so that no other request's callbacks
        /// (progress, stream events, completions) ever run on the caller's thread.
        var handOver = false

        var isEmpty: Bool { starts.isEmpty && cancels.isEmpty && tasks.isEmpty && timers.isEmpty }
    }

    let maxConcurrent: Int
    let share: CurlShare
    let multi: UnsafeMutableRawPointer
    let epoll: Int32
    let wakeFD: Int32
    private let gate = Platform.MutexCondition()
    /// Guarded by `gate`.
    var inbox = Inbox()
    /// Set (under `gate`) whenever the inbox gets work, a hand-over or a stop, and
    /// cleared by the driver as it takes them: a driver with nothing queued for it
    /// looks here instead of taking the lock.
    let inboxPending = Atomic<Bool>(false)
    /// The blocking caller's thread while it drives the multi handle (0 otherwise):
    /// work that thread queues itself (its request, its redirects) goes straight to
    /// the multi handle it owns, without the inbox.
    let callerDriver = Atomic<UInt>(0)
    private var thread = pthread_t()
    private let threadRunning = Atomic<Bool>(false)

    // The driver's (whoever owns the multi handle).
    var active = 0
    var waiting: [CurlTransfer] = []
    var waitingHead = 0
    /// The deadlines of the waiting transfers that have one (`CurlTransfer.deadlineAt`):
    /// the driver wakes for the earliest.
    var waitingDeadlines = WaitingDeadlines()
    var idleHandles: [CurlTransfer.EasyHandle] = []
    /// Keeps each running transfer alive while libcurl holds its pointer.
    var running = RunningTransfers()
    /// When libcurl wants `CURL_SOCKET_TIMEOUT` handled (monotonic ns), if ever.
    var timerDeadline: UInt64?
    /// Delayed tasks (retry back-off, silence checks of streams), earliest first.
    var timers: [(deadline: UInt64, task: @Sendable () -> Void)] = []
    var readyFDs = [Int32](repeating: 0, count: 256)
    var readyFlags = [Int32](repeating: 0, count: 256)
    /// Transfers paused until a local file is ready.
    let paused: PausedTransfers
    /// Connections the loop watches beside libcurl's transfers (WebSockets).
    let watched: WatchedDescriptors
    /// Per descriptor, what the loop knows of its socket (`watch(socket:what:)`): one
    /// epoll_ctl per change.
    var sockets: [SocketState] = []

    init(maxConcurrent: Int, share: CurlShare) throws(NetworkError) {
        try CurlSessionManager.CurlGlobal.ensureInitialized()
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
        watched = WatchedDescriptors(epoll: epoll)
        self.maxConcurrent = max(1, maxConcurrent)
        _ = nl_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, self.maxConcurrent))
        _ = nl_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        super.init()
        // libcurl calls these only from inside curl_multi_* calls, made by the driver,
        // so an unretained pointer is enough: the loop outlives its multi handle.
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = nl_curl_multi_setopt_socketfn(multi, curlSocketCallback)
        _ = nl_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = nl_curl_multi_setopt_timerfn(multi, curlTimerCallback)
        _ = nl_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
    }

    /// Lets the pooled easy handles go (`curl_easy_cleanup`), once the loop is stopped:
    /// the share they use may go before the loop does.
    func releaseHandles() {
        idleHandles.removeAll()
    }

    deinit {
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
        close(epoll)
        close(wakeFD)
    }

    /// Whether the caller is this loop's thread (inside a completion or hook).
    var isCurrentThread: Bool {
        threadRunning.load(ordering: .acquiring) && pthread_equal(pthread_self(), thread) != 0
    }

    /// Whether the caller drives the multi handle now: the loop's thread, or the
    /// blocking caller that drives it.
    var isDriverThread: Bool {
        isCurrentThread || callerDriver.load(ordering: .relaxed) == UInt(pthread_self())
    }

    // MARK: Any thread

    func lock() { gate.lock() }
    func unlock() { gate.unlock() }

    /// Adds work to the inbox and makes sure a driver will see it: the one driving now
    /// (woken through the eventfd if it sleeps in epoll), else the loop's thread
    /// (started, or woken from its condition); false once the loop is stopping, or
    /// when its thread cannot start. Inlined: as a plain call it measured a third more
    /// CPU per request with requests in flight (benchmarks/conc_netlayer.c).
    ///
    /// `untilStopped`: accepted while the loop stops too, until its last pass
    /// (`drainAll`), which runs it on the driver's thread: run by the caller, beside
    /// that pass, it would touch what the pass ends (a WebSocket's frames). A stopping
    /// loop has its driver already (its thread, or the caller of `shutdown()`).
    /// `undo` takes back what `add` added when no thread can start: the caller, told
    /// false, runs or fails the work itself, and a thread started later must not run it
    /// again (a hooked request's start would send it after it failed).
    @inline(__always)
    private func queue(untilStopped: Bool = false, _ add: (inout Inbox) -> Void,
                       undo: (inout Inbox) -> Void) -> Bool {
        lock()
        guard !inbox.stopped, untilStopped || !inbox.stopping else {
            unlock()
            return false
        }
        add(&inbox)
        inboxPending.store(true, ordering: .releasing)
        let writeEventFD = inbox.asleep
        inbox.asleep = false
        var accepted = true
        if inbox.owner == .none {
            accepted = inbox.stopping || summonThread()
            if !accepted { undo(&inbox) }
        } else if inbox.owner == .caller, pthread_equal(pthread_self(), inbox.driver) == 0 {
            inbox.handOver = true
        }
        unlock()
        if writeEventFD { wake() }
        return accepted
    }

    /// With the lock held and no driver: starts the loop's thread, or wakes it from its
    /// condition. False when the thread cannot start (then no one would drive).
    private func summonThread() -> Bool {
        if inbox.threadStarted {
            if inbox.threadParked { gate.signal() }
            return true
        }
        guard let started = try? startThread("event-loop thread") else { return false }
        thread = started
        inbox.threadStarted = true
        threadRunning.store(true, ordering: .releasing)
        return true
    }

    /// Queues a transfer. After `shutdown()` it is cancelled at once; when no thread
    /// can drive it, it fails saying why.
    func start(_ transfer: CurlTransfer) {
        if callerDriver.load(ordering: .relaxed) == UInt(pthread_self()) {
            enqueue(transfer)  // this thread owns the multi handle now
            return
        }
        if queue({ $0.starts.append(transfer) }, undo: { $0.starts.removeLast() }) { return }
        if isStopping {
            transfer.deliverCancelled()
        } else {
            transfer.deliver(.failure(.generic("could not start the event-loop thread", curlCode: -1)))
        }
    }

    func enqueueCancel(_ transfer: CurlTransfer) {
        lock()
        let accepted = !inbox.stopped
        if accepted {
            inbox.cancels.append(transfer)
            inboxPending.store(true, ordering: .releasing)
        }
        let writeEventFD = accepted && inbox.asleep
        if writeEventFD { inbox.asleep = false }
        if accepted, inbox.owner == .none { _ = summonThread() }
        if accepted, inbox.owner == .caller, pthread_equal(pthread_self(), inbox.driver) == 0 { inbox.handOver = true }
        unlock()
        if writeEventFD { wake() }
    }

    /// Runs `task` on the driver's thread; once the loop has stopped (shutdown's last
    /// pass is over), on the caller's thread.
    func execute(_ task: @escaping @Sendable () -> Void) {
        if !submit(task) { task() }
    }

    /// Queues `task` for the driver's thread, as `execute` does; false, `task` not run,
    /// once the loop has stopped or when no thread can start to run it.
    @inline(__always)
    func submit(_ task: @escaping @Sendable () -> Void) -> Bool {
        queue(untilStopped: true, { $0.tasks.append(task) }, undo: { $0.tasks.removeLast() })
    }

    /// Whether `shutdown()` has begun.
    var isStopping: Bool { withLock { $0.stopping } }

    /// Runs `task` on the driver's thread after `delay` seconds; after shutdown, at once
    /// on the calling thread.
    /// A delay past a year (or not a number) waits a year: nanoseconds beyond that do
    /// not fit the clock's integer.
    func execute(after delay: Double, _ task: @escaping @Sendable () -> Void) {
        let deadline = Self.now() + UInt64(min(max(0, delay), HTTPRequest.maxSeconds) * 1e9)
        if !queue(untilStopped: true, { $0.timers.append((deadline, task)) }, undo: { $0.timers.removeLast() }) { task() }
    }

    func withLock<T>(_ body: (inout Inbox) -> T) -> T {
        lock()
        defer { unlock() }
        return body(&inbox)
    }

    func wake() { nl_eventfd_signal(wakeFD) }

    /// Cancels everything, delivers every pending completion and stops the loop's
    /// thread. From the loop's own thread it does nothing. Waits for a blocking caller
    /// that drives the multi handle to give it up (its transfer was cancelled first).
    func shutdown() {
        if isCurrentThread { return }
        lock()
        let first = !inbox.stopping
        inbox.stopping = true
        inboxPending.store(true, ordering: .releasing)
        let threadStarted = inbox.threadStarted
        if inbox.asleep {
            inbox.asleep = false
            wake()
        }
        if threadStarted {
            if inbox.threadParked { gate.signal() }
            unlock()
            if first { pthread_join(thread, nil) }  // it drains, once a caller driving is done
            return
        }
        // No thread: drain here, once the caller driving (if any) is done.
        while inbox.owner == .caller { gate.wait() }
        let drains = first && !inbox.stopped
        if drains { inbox.owner = .thread }
        unlock()
        if drains { drain() }
    }

    // MARK: Driving

    /// The loop's thread: takes the multi handle when no one drives it and there is
    /// work, drives until nothing is left, then gives it up.
    override package func run() {
        while true {
            safePoint.rest()
            lock()
            while !(inbox.owner == .none && (inbox.stopping || inbox.workLeft || !inbox.isEmpty)) {
                inbox.threadParked = true
                gate.wait()
            }
            inbox.threadParked = false
            inbox.owner = .thread
            inbox.workLeft = false
            inboxPending.store(true, ordering: .relaxed)  // whatever woke it is in the inbox
            unlock()
            safePoint.work()
            // Back from driving, the multi handle was given up under the lock.
            if drive(until: { false }, interrupt: nil) == .done { return }  // stopped
        }
    }

    /// How a blocking caller's drive (`drive(_:until:interrupt:)`) ended.
    enum CallerDrive {
        /// Another thread drives the multi handle: `start` did not run.
        case notOwner
        /// `done` opened.
        case done
        /// A byte arrived on the interrupt descriptor.
        case interrupted
        /// Other threads queued work: the loop's thread drives now, and `done` opens there.
        case handedOver
    }

    /// Runs `start` and drives the multi handle on the calling thread until `done`
    /// opens, when no one else drives it: the work `start` queues (a blocking call's
    /// transfer, its redirects and retries) runs here, with no hop to another thread.
    /// When another thread queues work meanwhile, or when `done` opens with work left,
    /// the multi handle goes to the loop's thread.
    func drive(_ start: () -> Void, until done: CompletionSignal, interrupt: Int32?) -> CallerDrive {
        lock()
        guard inbox.owner == .none, !inbox.stopping, !inbox.workLeft else {
            unlock()
            return .notOwner
        }
        inbox.owner = .caller
        inbox.driver = pthread_self()
        unlock()
        callerDriver.store(UInt(pthread_self()), ordering: .relaxed)
        var end = CallerDrive.done
        if let interrupt, nl_epoll_set(epoll, interrupt, CURL_POLL_IN, 0) != 0,
           Platform.ThreadInterrupt.arrived(interrupt, within: 0) {  // cannot watch it: look once
            end = .interrupted
        }
        if end == .done {
            start()
            end = drive(until: { done.isOpen }, interrupt: interrupt)
        }
        if let interrupt { _ = nl_epoll_set(epoll, interrupt, CURL_POLL_REMOVE, 1) }
        callerDriver.store(0, ordering: .relaxed)
        while true {
            lock()
            inbox.handOver = false
            let left = hasWork || !inbox.isEmpty
            if inbox.stopping || !left || summonThread() {
                inbox.owner = .none
                inbox.workLeft = hasWork
                gate.broadcast()  // the loop's thread, or a shutdown without one
                unlock()
                return end
            }
            unlock()
            // No thread can take what is left over (none could start): drive it here.
            _ = drive(until: { [self] in !hasWork && withLock { $0.isEmpty } }, interrupt: nil)
        }
    }

    /// Whether the multi handle holds anything a driver must go on with.
    var hasWork: Bool {
        active > 0 || waitingHead < waiting.count || !timers.isEmpty || !paused.isEmpty || !watched.isEmpty
    }
}
