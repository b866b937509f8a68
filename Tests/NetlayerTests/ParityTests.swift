import Foundation
@testable import Netlayer
@testable import NetlayerCurl
import Synchronization
import Testing

private struct Movie: Decodable, Sendable, Equatable {
    let id: Int
    let title: String
}

private struct Page: Decodable, Sendable {
    let results: [Movie]
}

/// The seeds' Swift API beyond endpoints: Resource transforms, composed request
/// builders, the model features through Swift.
@Suite(.serialized) struct ParityTests {
    let server = TestServer.shared

    @Test func aResourceDecodesThenTransforms() async throws {
        let (service, _) = try server.service()
        let titles = Resource(Endpoint<Page>(path: "movies")) { page in page.results.map(\.title) }
        let list: [String] = try await service.request(titles)
        #expect(list == ["Dune", "Arrival", "Heat"])
    }

    @Test func composedBuildersAdaptEveryRequestInOrder() async throws {
        let chain = compose(
            { request in var r = request; r.headers["X-Step"] = "one"; return r },
            { request in var r = request; r.headers["X-Step"] = (r.headers["X-Step"] ?? "") + ",two"; return r })
        let network = DefaultNetworkService(config: NetworkConfig(baseURL: server.baseURL),
                                            sessionManager: try CurlSessionManager(), interceptor: chain)
        let service = DefaultDataTransferService(with: network)
        let echo: JSON = try await service.request(with: Endpoint<JSON>(path: "echo"))
        #expect(echo["headers"]?["x-step"] == "one,two")
    }

    @Test func downloadsGoToAFileAndFailuresLeaveNone() async throws {
        let (service, _) = try server.service()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netlayer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("body.bin").path
        let saved: JSON = try await service.request(with: Endpoint<JSON>(path: "bytes/5000",
                                                                         transfer: TransferOptions(downloadTo: target)))
        #expect(saved["bytes"] == 5000)
        #expect((try FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) == 5000)
        try FileManager.default.removeItem(atPath: target)
        await #expect(throws: DataTransferError.self) {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "status/404",
                                                                         transfer: TransferOptions(downloadTo: target)))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func streamedLinesArriveAsEvents() async throws {
        let (service, _) = try server.service()
        let lines = Mutex<[String]>([])
        let endpoint = Endpoint<JSON>(path: "lines", transfer: TransferOptions(stream: .lines) { event in
            if case .line(let line) = event { lines.withLock { $0.append(line) } }
            return .proceed
        })
        let response: DataResponse<JSON> = try await service.response(with: endpoint)
        #expect(response.value == .null)
        #expect(response.streamEvents == 5)
        #expect(lines.withLock { $0 } == ["first line", "second line", "third", "", "last without newline"])
    }

    @Test func serverSentEventsFollowTheFormat() {
        var parser = StreamParserProbe(mode: .sse)
        let events = parser.feed(": c\nretry: 10\n\nid: 7\nevent: tick\ndata: a\ndata: b\n\ndata: c\r\n\r\ndata: end")
        #expect(events == [
            .serverSent(event: "tick", data: "a\nb", lastEventId: "7", retry: 10),
            .serverSent(event: "message", data: "c", lastEventId: "7", retry: 10),
        ], "\"data: end\" is not ended by a blank line: discarded")
    }

    @Test func theCacheAnswersFreshResponsesWithoutTheServer() async throws {
        let cache = ResponseCache(maxEntries: 4)
        let network = DefaultNetworkService(config: NetworkConfig(baseURL: server.baseURL),
                                            sessionManager: try CurlSessionManager(), cache: cache)
        let service = DefaultDataTransferService(with: network)
        let key = "swift-\(UInt64.random(in: 0...UInt64.max))"
        let endpoint = Endpoint<JSON>(path: "cache/\(key)", queryParameters: ["max_age": 60],
                                      transfer: TransferOptions(useCache: true))
        let first: DataResponse<JSON> = try await service.response(with: endpoint)
        let second: DataResponse<JSON> = try await service.response(with: endpoint)
        #expect(first.fromCache == false && second.fromCache == true)
        #expect(second.value["hits"] == 1)
        #expect(second.attempts == 0)
    }

    @Test func xmlBodiesEscapeText() throws {
        var endpoint = Endpoint<JSON>(path: "x", method: .post, bodyParameters: ["q": "a<b & \"c\""], bodyEncoding: .xml)
        endpoint.xmlRoot = "search"
        let request = try endpoint.httpRequest(with: NetworkConfig(baseURL: "http://h/"))
        #expect(request.body.map { String(decoding: $0, as: UTF8.self) }
            == #"<?xml version="1.0" encoding="UTF-8"?><search><q>a&lt;b &amp; &quot;c&quot;</q></search>"#)
    }
}

/// Runs the stream parser on text, for the format test.
private struct StreamParserProbe {
    var parser: StreamParser

    init(mode: StreamMode) { parser = StreamParser(mode: mode) }

    mutating func feed(_ text: String) -> [StreamEvent] {
        let bytes = Array(text.utf8)
        var events = bytes.withUnsafeBytes { parser.feed($0) }
        events += parser.finish()
        return events
    }
}
