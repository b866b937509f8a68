import NetlayerCore

/// How many items (a WebSocket's messages, a stream's events) wait for their reader,
/// and whether reading stops because of them: at `limit` waiting, reading pauses; it
/// resumes when the reader has caught up by half.
///
/// The handler's thread decides to pause and the reader's thread to resume, each under
/// the lock. The source is told outside it (telling it may run a handler on this very
/// thread), by one thread at a time, until it has the last decision: told by each
/// thread as it got there, a pause could reach the source after the resume decided
/// later, and leave reading paused with nobody left to resume it.
final class ReadingFlow: Sendable {
    let limit: Int
    /// Past `limit`, what one read may still bring (a read of 4 KiB holds at most 2048
    /// empty WebSocket frames; one of a stream, as many events) and more: only a source
    /// that cannot pause gets there.
    var hardLimit: Int { Self.hardLimit(for: limit) }
    private let state = Locked(State())
    /// Pauses (`true`) or resumes the source; nil until it is attached.
    private let pause = Locked<(@Sendable (Bool) -> Void)?>(nil)

    private struct State {
        var waiting = 0
        /// What was decided last, and what the source was told last.
        var paused = false
        var told = false
        /// A thread is telling the source: the others leave it their decisions.
        var telling = false

        /// Whether this thread is to tell the source (then it is the one telling).
        mutating func takeTelling() -> Bool {
            guard !telling, told != paused else { return false }
            telling = true
            return true
        }
    }

    static func hardLimit(for limit: Int) -> Int { limit + 4096 }

    init(limit: Int) {
        self.limit = limit
    }

    /// The source to pause and resume, once it exists (items may arrive before).
    func attach(_ pause: @escaping @Sendable (Bool) -> Void) {
        self.pause.withLock { $0 = pause }
    }

    /// An item was queued for the reader (a handler's thread).
    func received() {
        // Not attached yet: the item is counted, and the next one pauses.
        guard let pause = pause.withLock({ $0 }) else { return state.withLock { $0.waiting += 1 } }
        let tell = state.withLock { state -> Bool in
            state.waiting += 1
            if state.waiting >= limit { state.paused = true }
            return state.takeTelling()
        }
        if tell { tellUntilCurrent(pause) }
    }

    /// The reader took an item.
    func took() {
        guard let pause = pause.withLock({ $0 }) else { return state.withLock { $0.waiting -= 1 } }
        let tell = state.withLock { state -> Bool in
            state.waiting -= 1
            if state.paused, state.waiting <= limit / 2 { state.paused = false }
            return state.takeTelling()
        }
        if tell { tellUntilCurrent(pause) }
    }

    /// Tells the source the last decision, again while another thread changed it.
    private func tellUntilCurrent(_ pause: @Sendable (Bool) -> Void) {
        while let paused = state.withLock({ state -> Bool? in
            guard state.told != state.paused else {
                state.telling = false
                return nil
            }
            state.told = state.paused
            return state.paused
        }) {
            pause(paused)
        }
    }
}
