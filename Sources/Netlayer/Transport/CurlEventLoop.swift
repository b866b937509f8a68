import CCurl
import Glibc
import Synchronization

/// One libcurl multi handle driven by one thread: every transfer of a client runs
/// here, so they share one connection pool, DNS cache and TLS session cache.
///
/// Other threads never touch the multi handle. They queue work under a mutex and
/// wake the loop with `curl_multi_wakeup`; the loop adds, cancels and completes
/// transfers, and runs completions on its own thread.
final class CurlEventLoop: @unchecked Sendable {
    private struct Inbox {
        var starts: [CurlTransfer] = []
        var cancels: [CurlTransfer] = []
        var tasks: [@Sendable () -> Void] = []
        var stopping = false
        var stopped = false
    }

    let maxConcurrent: Int
    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private var thread = pthread_t()
    private let threadStarted = Atomic<Bool>(false)

    // Loop thread only.
    private var active = 0
    private var waiting: [CurlTransfer] = []
    private var waitingHead = 0
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// Keeps each running transfer alive while libcurl holds its pointer.
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    init(maxConcurrent: Int) throws(NetworkError) {
        try CurlGlobal.ensureInitialized()
        guard let multi = curl_multi_init() else { throw .generic("curl_multi_init failed", curlCode: 27) }
        self.multi = multi
        self.maxConcurrent = max(1, maxConcurrent)
        _ = nl_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, self.maxConcurrent))
        _ = nl_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))

        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<CurlEventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<CurlEventLoop>.fromOpaque(context).release()
            curl_multi_cleanup(multi)
            throw .generic("could not start the event-loop thread (error \(rc))", curlCode: -1)
        }
        threadStarted.store(true, ordering: .releasing)
    }

    deinit {
        for easy in idleHandles { curl_easy_cleanup(easy) }
        curl_multi_cleanup(multi)
    }

    /// Whether the caller is this loop's thread (inside a completion or hook).
    var isCurrentThread: Bool {
        threadStarted.load(ordering: .acquiring) && pthread_equal(pthread_self(), thread) != 0
    }

    // MARK: Any thread

    /// Queues a transfer. After `shutdown()` it is cancelled at once.
    func start(_ transfer: CurlTransfer) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.starts.append(transfer)
            return true
        }
        if accepted { curl_multi_wakeup(multi) } else { transfer.deliverCancelled() }
    }

    func enqueueCancel(_ transfer: CurlTransfer) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopped else { return false }
            inbox.cancels.append(transfer)
            return true
        }
        if accepted { curl_multi_wakeup(multi) }
    }

    /// Runs `task` on the loop thread; after shutdown, on the caller's thread.
    func execute(_ task: @escaping @Sendable () -> Void) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.tasks.append(task)
            return true
        }
        if accepted { curl_multi_wakeup(multi) } else { task() }
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
            curl_multi_wakeup(multi)
            pthread_join(thread, nil)
        }
    }

    // MARK: Loop thread

    private func run() {
        var stillRunning: Int32 = 0
        while true {
            let work = inbox.withLock { inbox -> Inbox in
                let taken = inbox
                inbox.starts = []
                inbox.cancels = []
                inbox.tasks = []
                if inbox.stopping { inbox.stopped = true }
                return taken
            }
            for task in work.tasks { task() }
            for transfer in work.starts { enqueue(transfer) }
            for transfer in work.cancels { cancel(transfer) }
            if work.stopping {
                drainAll()
                return
            }
            startWaiting()
            curl_multi_perform(multi, &stillRunning)
            readCompletions()
            startWaiting()
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }

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
        guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
            transfer.deliver(.failure(.generic("curl_easy_init failed", curlCode: 27)))
            return
        }
        if let error = transfer.configure(easy) {
            recycle(easy)
            transfer.deliver(.failure(error))
            return
        }
        let rc = curl_multi_add_handle(multi, easy)
        guard rc == CURLM_OK else {
            recycle(easy)
            transfer.deliver(.failure(.generic("curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(rc)))",
                                               curlCode: -1)))
            return
        }
        running[easy] = transfer
        active += 1
    }

    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = nl_curl_msg_result(message)
            guard let transfer = running.removeValue(forKey: easy) else { continue }
            let result = transfer.result(code: code)
            finish(easy)
            transfer.deliver(result)
        }
    }

    private func cancel(_ transfer: CurlTransfer) {
        if let easy = transfer.easy, running.removeValue(forKey: easy) != nil {
            finish(easy)
        }
        // Waiting transfers are skipped when their turn comes (deliver runs once).
        transfer.deliverCancelled()
    }

    private func finish(_ easy: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, easy)
        active -= 1
        recycle(easy)
    }

    private func recycle(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)  // no option of one request leaks into the next
        if idleHandles.count < maxConcurrent { idleHandles.append(easy) } else { curl_easy_cleanup(easy) }
    }

    private func drainAll() {
        for (easy, transfer) in running {
            finish(easy)
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
    }
}
