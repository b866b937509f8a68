import NetlayerJSON

/// A request in flight that can be cancelled.
public protocol NetworkCancellable: Sendable {
    /// Cancels the request; its completion then reports `cancelled`.
    /// - Returns: true if it was still in flight, false if it had already completed.
    @discardableResult
    func cancel() -> Bool

    /// Stops (`true`) or resumes (`false`) reading the response from its connection,
    /// so that a consumer that cannot keep up with a stream makes the server wait
    /// instead of filling memory. What was read before the pause took effect is still
    /// delivered. A transport that cannot pause ignores it.
    /// - Returns: true if the request was still in flight.
    @discardableResult
    func pauseReading(_ paused: Bool) -> Bool
}

extension NetworkCancellable {
    /// Transports that cannot pause (stubs, replays) ignore it.
    @discardableResult
    public func pauseReading(_ paused: Bool) -> Bool { false }
}
