import Glibc
import Synchronization

/// A cancellable whose underlying operation is attached after it was handed out:
/// a cancel that arrives first is remembered and applied on `attach`.
public final class DeferredCancellable: NetworkCancellable {
    private let state = Locked<(cancellable: (any NetworkCancellable)?, cancelled: Bool)>((nil, false))

    public init() {}

    public func attach(_ cancellable: (any NetworkCancellable)?) {
        let cancelNow = state.withLock { state -> Bool in
            state.cancellable = cancellable
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
}
