import NetlayerCore

/// The body of a streamed request as events (`NetlayerClient.events`): an
/// `AsyncSequence` that ends when the response ends and throws the request's
/// `DataTransferError` when it fails. It can be iterated once. A reader that falls
/// behind makes the server wait: once `bufferLimit` events wait for it, the transfer
/// stops reading until half of them were taken.
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = StreamEvent

    let events: AsyncThrowingStream<StreamEvent, any Error>
    let flow: ReadingFlow

    /// The events in order; each one taken lets the transfer read again once the
    /// reader has caught up by half.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<StreamEvent, any Error>.AsyncIterator
        let flow: ReadingFlow

        public mutating func next() async throws -> StreamEvent? {
            let event = try await base.next()
            if event != nil { flow.took() }
            return event
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: events.makeAsyncIterator(), flow: flow)
    }
}
