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
}
#endif
