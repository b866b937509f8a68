import Foundation
import Netlayer

/// The loopback test server (Tests/server/server.py), started once per test process
/// on a free port. It exits when our end of its stdin pipe closes, so it never
/// outlives the tests.
final class TestServer: Sendable {
    static let shared = TestServer()

    let baseURL: String
    private let process: Process
    private let stdin: Pipe

    private init() {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let portFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("netlayer-swift-tests-\(getpid()).port")
        try? FileManager.default.removeItem(at: portFile)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", repo.appendingPathComponent("Tests/server/server.py").path,
                             "--port", "0", "--port-file", portFile.path, "--exit-on-stdin-eof"]
        stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        try! process.run()
        var port = ""
        for _ in 0..<200 where port.isEmpty {
            port = (try? String(contentsOf: portFile, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            if port.isEmpty { usleep(50_000) }
        }
        precondition(!port.isEmpty, "the test server did not start")
        baseURL = "http://127.0.0.1:\(port)/"
    }

    /// A data transfer service for this server with `options` applied to every request.
    func service(options: RequestOptions = RequestOptions(), headers: HTTPHeaders = [:], query: JSONObject = [:],
                 maxConcurrent: Int = 64) throws -> (DefaultDataTransferService, CurlSessionManager) {
        let session = try CurlSessionManager(maxConcurrent: maxConcurrent)
        let config = NetworkConfig(baseURL: baseURL, headers: headers, queryParameters: query, requestOptions: options)
        let network = DefaultNetworkService(config: config, sessionManager: session)
        return (DefaultDataTransferService(with: network), session)
    }
}
