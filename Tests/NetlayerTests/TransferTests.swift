import Foundation
import Netlayer
import Synchronization
import Testing

/// Issue-4 rows through the Swift API: what the server received for multipart,
/// uploads and form bodies; progress; compression; named-endpoint paths.
@Suite(.serialized) struct TransferTests {
    let server = TestServer.shared

    private func temporaryFile(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("netlayer-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func jsonAfterAUTF8ByteOrderMarkDecodes() throws {
        let body: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"a": [1, "x"]}"#.utf8)
        let decoder = JSONResponseDecoder()
        let expected: JSON = ["a": [1, "x"]]
        #expect(try decoder.decodeJSON(body) == expected)
        let raw: RawJSON = try decoder.decode(body)
        #expect(raw.bytes == Array(#"{"a": [1, "x"]}"#.utf8))
        struct Value: Decodable, Equatable { var a: [JSON] }
        #expect(try decoder.decode(body) as Value == Value(a: [1, "x"]))
        // A mark anywhere else is not JSON.
        #expect(throws: DataTransferError.self) { try decoder.decodeJSON(Array(#"{"a": 1}"#.utf8) + [0xEF, 0xBB, 0xBF]) }
    }

    @Test func multipartPartsReachTheServer() async throws {
        let (service, _) = try server.service()
        let file = try temporaryFile(Array("file-content".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let parts = [MultipartPart(name: "caption", content: .text("hello")),
                     MultipartPart(name: "doc", content: .file(path: file), filename: "a.txt", contentType: "text/plain"),
                     MultipartPart(name: "blob", content: .data([0, 1, 2]), filename: "b.bin")]
        let echo: JSON = try await service.request(with: Endpoint<JSON>(path: "echo", method: .post,
                                                                         transfer: TransferOptions(multipart: parts)))
        let body = echo["body"]?.stringValue ?? ""
        #expect(echo["headers"]?["content-type"]?.stringValue?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(body.contains("name=\"caption\"") && body.contains("hello"))
        #expect(body.contains("filename=\"a.txt\"") && body.contains("file-content") && body.contains("Content-Type: text/plain"))
    }

    @Test func anUploadStreamsTheFileAsTheBody() async throws {
        let (service, _) = try server.service()
        let bytes = (0..<300_000).map { UInt8($0 % 251) }
        let file = try temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let sink: JSON = try await service.request(with: Endpoint<JSON>(path: "sink", method: .put,
                                                                         transfer: TransferOptions(uploadFrom: file)))
        #expect(sink["bytes"] == 300_000)
        #expect(sink["contentType"] == "application/octet-stream")
        await #expect(throws: DataTransferError.self) {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "sink", method: .put,
                                                                         transfer: TransferOptions(uploadFrom: "/nonexistent/x")))
        }
    }

    @Test func formBodiesArriveEncoded() async throws {
        let (service, _) = try server.service()
        let echo: JSON = try await service.request(with: Endpoint<JSON>(
            path: "echo", method: .post, bodyParameters: ["a": "1 2", "b": ["x", "y"], "c": true], bodyEncoding: .form))
        #expect(echo["body"] == "a=1%202&b=x&b=y&c=true")
    }

    @Test func progressIsReportedAndEndsWithTheTotal() async throws {
        let (service, _) = try server.service()
        let reports = Mutex<[TransferProgress]>([])
        let endpoint = Endpoint<Void>(path: "stream-bytes/300000", queryParameters: ["chunk": 16384, "delay_ms": 10],
                                      responseDecoder: EmptyResponseDecoder(),
                                      transfer: TransferOptions(progress: { report in
                                          reports.withLock { $0.append(report) }
                                          return .proceed
                                      }))
        try await service.request(with: endpoint)
        let all = reports.withLock { $0 }
        #expect(all.count >= 2)
        #expect(all.last?.done == 300_000 && all.last?.total == 300_000)
    }

    @Test func aProgressHandlerCanCancel() async throws {
        let (service, _) = try server.service()
        let endpoint = Endpoint<Void>(path: "stream-bytes/300000", queryParameters: ["chunk": 16384, "delay_ms": 10],
                                      transfer: TransferOptions(progress: { _ in .cancel }))
        do {
            try await service.request(with: endpoint)
            Issue.record("not cancelled")
        } catch {
            #expect(error.kind == .cancelled)
        }
    }

    @Test(arguments: ["gzip", "deflate", "br", "zstd"])
    func compressedBodiesAreDecoded(encoding: String) async throws {
        let (service, _) = try server.service()
        let value: JSON = try await service.request(with: Endpoint<JSON>(path: "compressed/\(encoding)"))
        #expect(value["compressed"] == true)
    }

    @Test func maxResponseBytesCountsDecodedBytes() async throws {
        var options = RequestOptions()
        options.maxResponseBytes = 1000
        let (service, _) = try server.service(options: options)
        do {
            let _: JSON = try await service.request(with: Endpoint<JSON>(path: "compressed/gzip"))
            Issue.record("1832 decoded bytes passed a 1000-byte limit")
        } catch {
            #expect(error.kind == .tooLarge)
        }
    }

    @Test func aPathTemplateFillsANamedRoute() async throws {
        let (service, _) = try server.service()
        let path = try PathTemplate.render("movies/{id}", params: ["id": 3])
        let movie: JSON = try await service.request(with: Endpoint<JSON>(path: path, responseDecoder: JSONResponseDecoder(keyPath: "data.title")))
        #expect(movie == "Heat")
    }
}
