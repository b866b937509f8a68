import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// What the driver of the multi handle does: take queued work, start transfers, wait
/// for sockets and timers, and complete transfers. Only the owner of the multi handle
/// (`CurlEventLoop.Owner`) runs these.
extension CurlEventLoop {
    /// Drives the multi handle until `done()` (a blocking caller's work ended: `.done`),
    /// or, for the loop's thread (`done` always false), until nothing is left to drive,
    /// when it gives the multi handle up under the lock (`.handedOver`). `.done` for the
    /// loop's thread: stopped, everything drained. A blocking caller's drive also ends
    /// when a byte arrives on `interrupt` (`.interrupted`) or when other threads queue
    /// work (`.handedOver`, the multi handle still the caller's to give up).
    func drive(until done: () -> Bool, interrupt: Int32?) -> CallerDrive {
        let isThread = isCurrentThread
        while true {
            // Only what other threads queued needs the lock; most turns of a blocking
            // caller's drive find nothing (its own work does not go through the inbox).
            if inboxPending.load(ordering: .acquiring) {
                lock()
                if inbox.handOver, !isThread {
                    unlock()
                    return .handedOver
                }
                inboxPending.store(false, ordering: .relaxed)
                let work = inbox
                inbox.starts = []
                inbox.cancels = []
                inbox.tasks = []
                inbox.timers = []
                inbox.asleep = false
                unlock()
                for task in work.tasks { task() }
                for timer in work.timers { addTimer(at: timer.deadline, timer.task) }
                for transfer in work.starts { enqueue(transfer) }
                for transfer in work.cancels { cancel(transfer) }
                if work.stopping {  // every transfer ends cancelled, a blocking caller's too
                    drainAll()
                    return .done
                }
            }
            if done() { return .done }
            runDueTasks()
            startWaiting()
            runTimerIfDue()
            if done() { return .done }
            var timeout = waitMilliseconds()
            if timeout != 0 {
                // Asleep only with nothing queued; work queued after this wakes it. The
                // loop's thread with nothing left gives the multi handle up instead.
                lock()
                if !inbox.isEmpty || inbox.stopping || inbox.handOver {
                    // Look at the inbox next turn: a stop or a hand-over stays pending
                    // until a driver acts on it, and another driver may have taken the
                    // signal of it (a blocking caller that drove before this thread).
                    inboxPending.store(true, ordering: .relaxed)
                    timeout = 0
                } else if isThread, !hasWork {
                    inbox.owner = .none
                    unlock()
                    return .handedOver
                } else {
                    inbox.asleep = true
                }
                unlock()
            }
            if isThread { safePoint.rest() }
            let count = Int(nl_epoll_wait(epoll, &readyFDs, &readyFlags, Int32(readyFDs.count), timeout))
            if isThread { safePoint.work() }
            var stillRunning: Int32 = 0
            for i in 0..<max(0, count) {
                let fd = readyFDs[i]
                if fd == wakeFD {
                    nl_eventfd_drain(wakeFD)
                } else if fd == interrupt, let interrupt {
                    if Platform.ThreadInterrupt.arrived(interrupt, within: 0) { return .interrupted }
                } else if !paused.isEmpty, paused.resume(descriptor: fd) {
                    continue
                } else if !watched.isEmpty, watched.dispatch(fd, flags: readyFlags[i]) {
                    continue
                } else if dropIfUnwanted(fd) {
                    continue
                } else {
                    curl_multi_socket_action(multi, fd, readyFlags[i], &stillRunning)
                }
            }
            if !paused.isEmpty { paused.resumeDue(now: Self.now()) }
            runTimerIfDue()
            readCompletions()
        }
    }

    /// Called by the callback of `transfer` that paused it: it goes on when `wait` is
    /// over.
    func resume(_ transfer: CurlTransfer, after wait: TransferWait) {
        paused.add(transfer, until: wait, now: Self.now())
    }

    /// How long epoll may sleep: until libcurl's timer, at most a second.
    private func waitMilliseconds() -> Int32 {
        // Transfers queued by this thread itself (a redirect, a retry) start at once.
        if waitingHead < waiting.count, active < maxConcurrent { return 0 }
        var deadline = timerDeadline ?? .max
        if let first = timers.first?.deadline, first < deadline { deadline = first }
        if let next = paused.nextDeadline, next < deadline { deadline = next }
        if let next = waitingDeadlines.next, next < deadline { deadline = next }
        guard deadline != .max else { return 1000 }
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
        guard running.contains(transfer), let silence = transfer.silence else { return }
        let now = Self.now()
        if let error = silence.failure(at: now) {
            running.remove(transfer)
            finish(transfer)
            transfer.deliver(.failure(error))
        } else {
            addTimer(at: silence.nextCheck(after: now)) { [self] in checkSilence(of: transfer) }
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

    func enqueue(_ transfer: CurlTransfer) {
        if transfer.isCancelRequested {
            transfer.deliverCancelled()
        } else {
            waiting.append(transfer)
            if let deadline = transfer.deadlineAt { waitingDeadlines.add(transfer, deadline: deadline) }
        }
    }

    private func startWaiting() {
        while active < maxConcurrent, waitingHead < waiting.count {
            let transfer = waiting[waitingHead]
            waitingHead += 1
            if transfer.isDelivered { continue }  // cancelled while it waited
            begin(transfer)
        }
        if let deadline = waitingDeadlines.next, deadline <= Self.now() {
            endWaitingPastTheirDeadline()
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
            if !waitingDeadlines.isEmpty { waitingDeadlines.removeAll() }
        } else {
            if waitingHead > 1024 {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
            // Entries of transfers that started or ended stay until their deadline;
            // once they outnumber the queue, only the queue's are kept.
            if waitingDeadlines.count > 2 * (waiting.count - waitingHead) + 64 {
                waitingDeadlines.rebuild(from: waiting[waitingHead...])
            }
        }
    }

    /// Ends the waiting transfers whose deadline has passed (kind `timeout`): slots may
    /// not come free before it for long (streams hold them). A transfer that started
    /// or ended meanwhile is passed over.
    private func endWaitingPastTheirDeadline() {
        for transfer in waitingDeadlines.takeDue(now: Self.now())
        where !transfer.isDelivered && !running.contains(transfer) {
            transfer.deliver(.failure(CurlTransfer.deadlinePassedWhileWaiting))
        }
    }

    private func begin(_ transfer: CurlTransfer) {
        guard let handle = idleHandles.popLast() ?? CurlTransfer.EasyHandle() else {
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
        running.insert(transfer)
        active += 1
        if let silence = transfer.silence {
            addTimer(at: silence.expiresAt) { [self] in checkSilence(of: transfer) }
        }
    }

    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard nl_curl_msg_done(message) != 0, let easy = message.pointee.easy_handle else { continue }
            let code = nl_curl_msg_result(message)
            var context: UnsafeMutableRawPointer?
            nl_curl_getinfo_ptr(easy, CURLINFO_PRIVATE, &context)
            guard let context else { continue }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            guard running.remove(transfer) else { continue }
            let result = transfer.result(code: code)
            finish(transfer)
            transfer.deliver(result)
        }
    }

    private func cancel(_ transfer: CurlTransfer) {
        cancelNow(transfer)
        // Waiting transfers are skipped when their turn comes (deliver runs once).
        transfer.deliverCancelled()
    }

    /// Takes `transfer` out of the multi handle if it runs there (its completion is
    /// the caller's to deliver).
    func cancelNow(_ transfer: CurlTransfer) {
        if running.remove(transfer) {
            finish(transfer)
        }
    }

    private func finish(_ transfer: CurlTransfer) {
        guard let handle = transfer.handle else { return }
        paused.remove(transfer)
        curl_multi_remove_handle(multi, handle.pointer)
        active -= 1
        recycle(handle)
    }

    private func recycle(_ handle: CurlTransfer.EasyHandle) {
        handle.finishedTransfer()
        if idleHandles.count < maxConcurrent { idleHandles.append(handle) }  // else released: curl_easy_cleanup
    }

    /// At shutdown without a thread: what was queued is drained on the calling thread.
    func drain() {
        let work = withLock { inbox -> Inbox in
            let taken = inbox
            inbox.starts = []
            inbox.cancels = []
            inbox.tasks = []
            inbox.timers = []
            return taken
        }
        for task in work.tasks { task() }
        for timer in work.timers { addTimer(at: timer.deadline, timer.task) }
        for transfer in work.starts { enqueue(transfer) }
        for transfer in work.cancels { cancel(transfer) }
        drainAll()
    }

    private func drainAll() {
        watched.stopAll()
        for transfer in running.removeAll() {
            finish(transfer)
            transfer.deliverCancelled()
        }
        for transfer in waiting[waitingHead...] { transfer.deliverCancelled() }
        waiting.removeAll()
        waitingHead = 0
        waitingDeadlines.removeAll()
        // Work queued while we were draining (from inside completions).
        let late = withLock { inbox -> Inbox in
            defer {
                inbox.starts = []
                inbox.cancels = []
                inbox.tasks = []
                inbox.timers = []
                inbox.stopped = true
            }
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
