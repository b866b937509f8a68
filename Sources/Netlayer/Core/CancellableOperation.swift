
/// Bridges a completion-handler operation to async/await, cancelling the operation
/// when the awaiting `Task` is cancelled (even if that happens before it started).
enum CancellableOperation {
    static func run<Value: Sendable>(
        _ start: (@escaping @Sendable (Result<Value, DataTransferError>) -> Void) -> (any NetworkCancellable)?
    ) async throws(DataTransferError) -> Value {
        let box = DeferredCancellable()
        let result: Result<Value, DataTransferError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancellable = start { continuation.resume(returning: $0) }
                box.set(cancellable)
            }
        } onCancel: {
            box.cancel()
        }
        return try result.get()
    }
}

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
    func set(_ cancellable: (any NetworkCancellable)?) { attach(cancellable) }

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
