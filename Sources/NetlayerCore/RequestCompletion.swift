import Synchronization
import NetlayerJSON

/// What a blocking call waits for: opened once by whichever thread completes the work
/// (`NetworkSessionManager.run(_:until:interrupt:)`); the waiting thread may be the one
/// that drives the transport meanwhile, which looks at `isOpen` between its steps.
public class CompletionSignal: @unchecked Sendable {
    private let opened = Atomic<Bool>(false)
    private let latch = Latch()

    public init() {}

    /// Whether it was opened (an acquiring read: what was stored before is visible).
    public final var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Opens it; false when it was open already.
    public final func signal() -> Bool {
        guard !opened.load(ordering: .acquiring) else { return false }
        opened.store(true, ordering: .releasing)
        latch.countDown()
        return true
    }

    /// Waits until opened (true), or a signal arrives on `interrupt` (false).
    public final func wait(interruptedBy interrupt: Int32? = nil) -> Bool {
        if isOpen { return true }
        return latch.waitUnlessInterrupted(by: interrupt)
    }
}

/// A `CompletionSignal` that carries the outcome of the work.
package final class RequestCompletion<Value>: CompletionSignal, @unchecked Sendable {
    /// Set before the signal opens; read after.
    private var value: Value?

    /// Stores `value` and opens the signal; only the first call counts.
    package func open(_ value: Value) {
        guard !isOpen else { return }
        self.value = value
        _ = signal()
    }

    /// The value `open` stored; nil before.
    package var outcome: Value? { isOpen ? value : nil }
}
