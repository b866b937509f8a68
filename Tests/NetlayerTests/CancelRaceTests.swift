import Foundation
import Netlayer
import Testing

/// A transport that keeps each completion for the test to run when it likes, and whose
/// transfers have always finished already when cancelled (`cancel()` returns false):
/// the state of a transfer whose result is on its way through the event loop when
/// `nl_cancel` comes in from another thread.
private final class HeldTransport: NetworkSessionManager, @unchecked Sendable {
    let completions = Locked<[CompletionHandler]>([])

    private struct AlreadyFinished: NetworkCancellable {
        func cancel() -> Bool { false }
    }

    func request(_ request: HTTPRequest, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        completions.withLock { $0.append(completion) }
        return AlreadyFinished()
    }
}

/// `cancel()` returns true exactly when the completion then reports `cancelled` (the
/// contract of `nl_cancel`), also when the transfer finished just before the cancel.
@Suite struct CancelRaceTests {
    private func send(_ network: DefaultNetworkService, into outcome: Locked<NetworkOutcome?>) throws -> any NetworkCancellable {
        let request = try network.makeRequest(for: Endpoint<JSON>(path: "x"))
        return network.send(request, id: nil) { result in outcome.withLock { $0 = result } }
    }

    @Test func aCancelThatReturnedTrueWinsOverASuccessAlreadyOnItsWay() throws {
        let transport = HeldTransport()
        let network = DefaultNetworkService(config: NetworkConfig(baseURL: "http://127.0.0.1:1/"),
                                            sessionManager: transport)
        let outcome = Locked<NetworkOutcome?>(nil)
        let request = try send(network, into: outcome)
        #expect(request.cancel(), "the completion has not run: the request is still in flight")
        let completion = try #require(transport.completions.withLock { $0.first })
        completion(.success(HTTPResponse(statusCode: 200, body: Array("{}".utf8))))
        let result = try #require(outcome.withLock { $0 })
        guard case .failure(let error) = result.result else {
            Issue.record("cancel() returned true but the completion reported success")
            return
        }
        #expect(error.isCancelled)
        #expect(!request.cancel())
    }

    @Test func aCancelAfterTheCompletionReturnsFalseAndChangesNothing() throws {
        let transport = HeldTransport()
        let network = DefaultNetworkService(config: NetworkConfig(baseURL: "http://127.0.0.1:1/"),
                                            sessionManager: transport)
        let outcome = Locked<NetworkOutcome?>(nil)
        let request = try send(network, into: outcome)
        let completion = try #require(transport.completions.withLock { $0.first })
        completion(.success(HTTPResponse(statusCode: 200, body: Array("{}".utf8))))
        #expect(!request.cancel())
        let result = try #require(outcome.withLock { $0 })
        #expect((try? result.result.get())?.statusCode == 200)
    }
}

/// An operation whose pause takes 50 ms to arrive, recording what it was told last.
private final class SlowToPause: NetworkCancellable {
    let told = Locked<Bool?>(nil)

    func cancel() -> Bool { true }

    func pauseReading(_ paused: Bool) -> Bool {
        if paused { usleep(50_000) }
        told.withLock { $0 = paused }
        return true
    }
}

/// A pause made before the operation is attached (a stream's next attempt) is applied
/// when it is; a resume made while that happens wins, as it came last.
@Suite struct DeferredPauseTests {
    @Test func aResumeDuringAttachWinsOverThePauseBeforeIt() async throws {
        let token = DeferredCancellable()
        token.pauseReading(true)
        let operation = SlowToPause()
        Thread.detachNewThread { token.attach(operation) }
        try await Task.sleep(for: .milliseconds(10))
        token.pauseReading(false)
        try await Task.sleep(for: .milliseconds(100))
        #expect(operation.told.withLock { $0 } == false)
    }
}
