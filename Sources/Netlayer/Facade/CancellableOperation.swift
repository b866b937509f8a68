import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON


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
