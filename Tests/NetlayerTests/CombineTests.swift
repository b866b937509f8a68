#if canImport(Combine) || Combine
// NetlayerCombine has its publishers on Apple platforms, and on Linux with the package
// trait "Combine" (OpenCombine): `swift test --traits Combine`, as scripts/test runs.
import Foundation
@testable import Netlayer
import NetlayerCombine
import Synchronization
import Testing
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

private struct Movie: Decodable, Sendable, Equatable {
    let id: Int
    let title: String
}

/// The seeds' Combine service: `publisher(for:)` over a DataTransferService.
@Suite(.serialized) struct CombineTests {
    let server = TestServer.shared

    @Test func aPublisherEmitsOnceAndFinishes() throws {
        let (service, _) = try server.service()
        let received = Mutex<[Movie]>([])
        let finished = Latch()
        let cancellable = service.publisher(for: Endpoint<Movie>(path: "movies/1", responseDecoder: JSONResponseDecoder(keyPath: "data")))
            .sink(receiveCompletion: { completion in
                if case .finished = completion { finished.countDown() }
            }, receiveValue: { movie in received.withLock { $0.append(movie) } })
        finished.wait()
        #expect(received.withLock { $0 } == [Movie(id: 1, title: "Dune")])
        _ = cancellable
    }

    @Test func aPublisherFailsWithTheDataTransferError() throws {
        let (service, _) = try server.service()
        let kind = Mutex<ErrorKind?>(nil)
        let done = Latch()
        let cancellable = service.publisher(for: Endpoint<JSON>(path: "status/404"))
            .sink(receiveCompletion: { completion in
                if case .failure(let error) = completion { kind.withLock { $0 = error.kind } }
                done.countDown()
            }, receiveValue: { _ in })
        done.wait()
        #expect(kind.withLock { $0 } == .status)
        _ = cancellable
    }

    @Test func cancellingTheSubscriptionCancelsTheTransfer() async throws {
        let (service, _) = try server.service()
        _ = try await service.request(with: Endpoint<JSON>(path: "stats/reset")) as JSON
        let cancellable = service.publisher(for: Endpoint<JSON>(path: "delay/3000"))
            .sink(receiveCompletion: { _ in }, receiveValue: { _ in })
        try await Task.sleep(for: .milliseconds(100))
        cancellable.cancel()
        // The connection of the cancelled transfer is closed, so the next request opens another.
        let value: JSON = try await service.request(with: Endpoint<JSON>(path: "json"))
        #expect(value["title"] == "Dune")
    }

    @Test func aCancelWhileTheTransferIsStartingCancelsIt() throws {
        let client = try NetlayerClient(baseURL: server.baseURL)
        defer { _ = client.shutdown() }
        let inner = client.service
        let ended = Mutex<ErrorKind??>(nil)
        let done = Latch()
        let service = SlowStartService(inner: inner) { kind in
            ended.withLock { $0 = .some(kind) }
            done.countDown()
        }
        let subscriber = CapturingSubscriber()
        service.publisher(for: Endpoint<JSON>(path: "delay/3000")).subscribe(subscriber)
        let subscription = try #require(subscriber.subscription)
        nonisolated(unsafe) let unchecked = subscription
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { unchecked.cancel() }
        let started = ContinuousClock.now
        subscription.request(.unlimited)  // starts the transfer; the cancel comes meanwhile
        done.wait()
        #expect(ended.withLock { $0 } == .some(.cancelled))
        #expect(ContinuousClock.now - started < .seconds(2))
    }
}

/// A service whose start takes a moment (as building a large body does), telling how
/// the transfer it started ended.
private struct SlowStartService: DataTransferService {
    let inner: DefaultDataTransferService
    let onEnd: @Sendable (ErrorKind?) -> Void

    func response<T: Decodable & Sendable, E: ResponseRequestable>(
        with endpoint: E, completion: @escaping @Sendable (Result<DataResponse<T>, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == T {
        let onEnd = self.onEnd
        let transfer = inner.response(with: endpoint) { (result: Result<DataResponse<T>, DataTransferError>) in
            if case .failure(let error) = result { onEnd(error.kind) } else { onEnd(nil) }
            completion(result)
        }
        usleep(300_000)
        return transfer
    }

    func request<E: ResponseRequestable>(
        with endpoint: E, completion: @escaping @Sendable (Result<Void, DataTransferError>) -> Void
    ) -> (any NetworkCancellable)? where E.Response == Void {
        inner.request(with: endpoint, completion: completion)
    }
}

/// Keeps its subscription, which `subscribe` hands it before it returns.
private final class CapturingSubscriber: Subscriber, @unchecked Sendable {
    typealias Input = JSON
    typealias Failure = DataTransferError
    var subscription: (any Subscription)?
    func receive(subscription: any Subscription) { self.subscription = subscription }
    func receive(_ input: JSON) -> Subscribers.Demand { .none }
    func receive(completion: Subscribers.Completion<DataTransferError>) {}
}
#endif
