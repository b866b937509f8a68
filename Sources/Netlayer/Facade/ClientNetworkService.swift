import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// The seeds' `NetworkService` over a client: its requests run through the client's
/// one driver, with the client's ids, cancellation and threads.
struct ClientNetworkService: NetworkService {
    let client: NetlayerClient

    func makeRequest(for endpoint: some Requestable) throws(NetworkError) -> HTTPRequest {
        try client.makeRequest(for: endpoint)
    }

    func send(_ request: HTTPRequest, id: UInt64?, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        let id = id ?? client.newID()
        client.start(request, id: id, completion: completion)
        return StartedRequest(client: client, id: id)
    }

    func sendBlocking(_ request: HTTPRequest, id: UInt64?) -> NetworkOutcome {
        client.perform(request, id: id ?? client.newID())
    }

    /// A request the client started, cancelled and paused by its id.
    private struct StartedRequest: NetworkCancellable {
        let client: NetlayerClient
        let id: UInt64

        @discardableResult
        func cancel() -> Bool { client.cancel(id: id) }

        @discardableResult
        func pauseReading(_ paused: Bool) -> Bool { client.pause(id: id, paused) }
    }
}

extension NetlayerClient {
    /// The seeds' `DataTransferService` over this client: sends `Requestable`s and
    /// decodes their responses.
    public var service: DefaultDataTransferService {
        DefaultDataTransferService(with: ClientNetworkService(client: self), errorResolver: errorResolver,
                                   errorLogger: logger)
    }
}
