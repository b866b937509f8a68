import NetlayerJSON

/// The results of a batch, filled from loop-thread completions; the waiting thread
/// wakes once, when the last expected one is in, or when a signal interrupts it
/// (`Platform.ThreadInterrupt`): then every request of the batch is cancelled.
package struct BatchResults<Element: Sendable>: Sendable {
    private struct State {
        var results: [Element?]
        var started: [any NetworkCancellable] = []
        var interrupted = false
        /// The waiter has taken the results: nothing more is kept.
        var done = false
    }

    private let state: Locked<State>
    private let latch = Latch(count: 0)

    init(count: Int) { state = Locked(State(results: Array(repeating: nil, count: count))) }

    /// Before sending a request whose result `set` will bring later.
    func expectOneMore() { latch.countUp() }

    /// A request that was sent; cancelled at once if the wait was interrupted before.
    func track(_ request: any NetworkCancellable) {
        let cancelNow = state.withLock { state in
            // A request that completed inside `send` may come after the waiter left.
            if !state.interrupted, !state.done { state.started.append(request) }
            return state.interrupted
        }
        if cancelNow { request.cancel() }
    }

    func set(_ index: Int, _ result: Element) {
        state.withLock { $0.results[index] = result }
        latch.countDown()
    }

    /// `outcome`, or for a request cancelled because a signal interrupted the wait,
    /// the failure a blocking request interrupted that way has (`Platform.ThreadInterrupt.error`),
    /// which says why.
    func explained(_ outcome: NetworkOutcome) -> NetworkOutcome {
        guard case .failure(.cancelled) = outcome.result, state.withLock({ $0.interrupted }) else { return outcome }
        return NetworkOutcome(result: .failure(Platform.ThreadInterrupt.error), attempts: outcome.attempts, id: outcome.id)
    }

    /// - Parameter interrupt: the descriptor whose byte cancels the batch.
    func waitForAll(interruptedBy interrupt: Int32?) -> [Element?] {
        if !latch.waitUnlessInterrupted(by: interrupt) {
            let started = state.withLock { state in
                state.interrupted = true
                return state.started
            }
            for request in started { request.cancel() }
            latch.wait()  // the cancelled requests complete at once
        }
        return state.withLock { state in
            state.started = []  // each holds its completion, which holds these results
            state.done = true
            return state.results
        }
    }
}
