import NetlayerJSON

/// A request in flight that can be cancelled.
public protocol NetworkCancellable: Sendable {
    /// Cancels the request; its completion then reports `cancelled`.
    /// - Returns: true if it was still in flight, false if it had already completed.
    @discardableResult
    func cancel() -> Bool
}
