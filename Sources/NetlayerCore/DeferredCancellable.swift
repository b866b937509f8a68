import Glibc
import Synchronization

/// A cancellable whose underlying operation is attached after it was handed out:
/// a cancel or a pause that arrives first is remembered and applied on `attach`.
public final class DeferredCancellable: NetworkCancellable {
    private let state = Locked<(cancellable: (any NetworkCancellable)?, cancelled: Bool, paused: Bool)>((nil, false, false))

    public init() {}

    public func attach(_ cancellable: (any NetworkCancellable)?) {
        let cancelNow = state.withLock { state -> Bool in
            state.cancellable = cancellable
            // A remembered pause is applied under the lock, as `pauseReading` forwards:
            // applied after it, it would undo a resume made meanwhile, for ever.
            if !state.cancelled, state.paused { cancellable?.pauseReading(true) }
            return state.cancelled
        }
        if cancelNow { cancellable?.cancel() }
    }

    /// Alias kept for the async bridge.
    package func set(_ cancellable: (any NetworkCancellable)?) { attach(cancellable) }

    @discardableResult
    public func cancel() -> Bool {
        let (cancellable, wasCancelled) = state.withLock { state -> ((any NetworkCancellable)?, Bool) in
            defer { state.cancelled = true }
            return (state.cancellable, state.cancelled)
        }
        if let cancellable { return cancellable.cancel() }
        return !wasCancelled
    }

    /// Forwarded under the lock, so that pauses and resumes from different threads
    /// reach the operation in the order they were made here.
    @discardableResult
    public func pauseReading(_ paused: Bool) -> Bool {
        state.withLock { state -> Bool in
            state.paused = paused
            if let cancellable = state.cancellable { return cancellable.pauseReading(paused) }
            return !state.cancelled
        }
    }
}
