import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// Streamed bodies and progress as `AsyncSequence`s.
extension NetlayerClient {
    /// The body of `endpoint` as events while it arrives: server-sent events, lines
    /// or chunks. The sequence ends when the response ends and throws the request's
    /// `DataTransferError` when it fails (a status outside the acceptable ones too).
    /// Leaving the loop or cancelling the consuming task cancels the transfer.
    ///
    /// ```swift
    /// for try await event in client.events(.get("feed"), as: .sse) { print(event) }
    /// ```
    ///
    /// - Parameter bufferLimit: events held for a reader that has not taken them yet
    ///   before the transfer stops reading (the server then waits, by TCP flow
    ///   control); it reads again when half of them were taken. Over a transport that
    ///   cannot pause (a stub or cassette), a reader more than `bufferLimit` plus 4096
    ///   events behind fails the request with `tooLarge` rather than let a fast server
    ///   fill memory.
    public func events<T>(_ endpoint: Endpoint<T>, as mode: StreamMode = .sse,
                          bufferLimit: Int = 4096) -> EventStream {
        let flow = ReadingFlow(limit: max(1, bufferLimit))
        let (events, continuation) = AsyncThrowingStream.makeStream(of: StreamEvent.self, throwing: (any Error).self,
                                                                    bufferingPolicy: .bufferingOldest(flow.hardLimit))
        var streamed = endpoint.decoding(as: JSON.self, with: JSONResponseDecoder())
        streamed.transfer.stream = mode
        streamed.transfer.onStreamEvent = { event in
            switch continuation.yield(event) {
            case .enqueued:
                flow.received()
                return .proceed
            case .dropped: return .fail(.tooLarge("the stream's reader is \(flow.hardLimit) events behind"))
            case .terminated: return .cancel
            @unknown default: return .cancel
            }
        }
        let operation = service.response(with: streamed) { (result: Result<DataResponse<JSON>, DataTransferError>) in
            switch result {
            case .success: continuation.finish()
            case .failure(let error): continuation.finish(throwing: error)
            }
        }
        if let operation { flow.attach { _ = operation.pauseReading($0) } }
        continuation.onTermination = { termination in
            if case .cancelled = termination { operation?.cancel() }
        }
        return EventStream(events: events, flow: flow)
    }

    /// Starts `endpoint` and returns at once: its progress reports as they come, and
    /// its response when it ends.
    ///
    /// ```swift
    /// let transfer = client.transfer(.get("big.iso", decoder: RawDataResponseDecoder()) as Endpoint<Data>)
    /// for await progress in transfer.progress { print(progress.done, "of", progress.total) }
    /// let body = try await transfer.response.value
    /// ```
    public func transfer<T: Decodable & Sendable>(_ endpoint: Endpoint<T>) -> Transfer<T> {
        // Reports are cumulative: a slow reader loses nothing by seeing only the newest.
        let (progress, continuation) = AsyncStream.makeStream(of: TransferProgress.self,
                                                              bufferingPolicy: .bufferingNewest(16))
        var endpoint = withClientDecoding(endpoint)
        let earlier = endpoint.transfer.progress
        endpoint.transfer.progress = { report in
            continuation.yield(report)
            return earlier?(report) ?? .proceed
        }
        let service = self.service
        let task = Task { () async throws(DataTransferError) -> DataResponse<T> in
            defer { continuation.finish() }
            return try await service.response(with: endpoint)
        }
        return Transfer(progress: progress, task: task)
    }
}

/// A request in flight (`NetlayerClient.transfer`): its progress and its response.
public struct Transfer<T: Sendable>: Sendable {
    /// Progress reports, at most every 50 ms while data moves and once at the end;
    /// finishes when the request ends.
    public let progress: AsyncStream<TransferProgress>
    let task: Task<DataResponse<T>, any Error>

    /// The decoded response, once the request ends.
    public var response: DataResponse<T> {
        get async throws(DataTransferError) {
            do {
                return try await task.value
            } catch let error as DataTransferError {
                throw error
            } catch {
                throw .networkFailure(.cancelled)
            }
        }
    }

    /// Cancels the request: `response` throws `cancelled`.
    public func cancel() { task.cancel() }
}
