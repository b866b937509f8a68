import Foundation
import Netlayer
@testable import NetlayerCurl
import Testing

/// The WebSocket servers of Tests/server/ws_servers.py (the `websockets` package's
/// echo server, and a raw server that breaks the protocol), started once per process.
final class WebSocketServers: Sendable {
    static let shared = WebSocketServers()

    let echoURL: String
    let hostileURL: String
    private let processes: [(Process, Pipe)]

    private init() {
        var processes: [(Process, Pipe)] = []
        func start(_ kind: String) -> String {
            let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let portFile = FileManager.default.temporaryDirectory
                .appendingPathComponent("netlayer-swift-ws-\(kind)-\(getpid()).port")
            try? FileManager.default.removeItem(at: portFile)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", repo.appendingPathComponent("Tests/server/ws_servers.py").path, kind,
                                 "--port", "0", "--port-file", portFile.path, "--exit-on-stdin-eof"]
            let stdin = Pipe()
            process.standardInput = stdin
            process.standardOutput = FileHandle.nullDevice
            try! process.run()
            processes.append((process, stdin))
            var port = ""
            for _ in 0..<200 where port.isEmpty {
                port = (try? String(contentsOf: portFile, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                if port.isEmpty { usleep(50_000) }
            }
            precondition(!port.isEmpty, "ws_servers.py \(kind) did not start")
            return "http://127.0.0.1:\(port)/"
        }
        echoURL = start("echo")
        hostileURL = start("hostile")
        self.processes = processes
    }
}

@Suite(.serialized) struct WebSocketTests {
    private func client(_ baseURL: String) throws -> NetlayerClient {
        try NetlayerClient(baseURL: baseURL)
    }

    @Test func messagesEchoAsAnAsyncSequenceAndTheCloseIsReported() async throws {
        let client = try client(WebSocketServers.shared.echoURL)
        let socket = try await client.webSocket(.get("protocol"), options: WebSocketOptions(protocols: ["chat"]))
        #expect(socket.subprotocol == "chat")
        #expect(socket.response.statusCode == 101)
        try await socket.send("hello")
        try await socket.send([0, 1, 255])
        var received: [WebSocket.Message] = []
        for try await message in socket {
            received.append(message)
            if received.count == 3 { try await socket.close(code: 1000, reason: "bye") }
        }
        #expect(received == [.text("chat"), .text("hello"), .binary([0, 1, 255])])
        #expect(socket.closeCode == 1000)
        #expect(socket.closeReason == "bye")
        _ = client.shutdown()
    }

    /// RFC 7692 section 7.1.2.1: server_max_window_bits is a decimal from 8 to 15
    /// without leading zeros; any other value fails the connection.
    @Test func aWindowSizeParameterIsReadAsTheRFCWritesIt() {
        for value in ["8", "15", "\"9\""] {
            guard case .success = WebSocketCompression.agreed("permessage-deflate; server_max_window_bits=\(value)") else {
                Issue.record("refused \(value)")
                continue
            }
        }
        for value in ["010", "+9", "7", "16", "09"] {
            if case .success = WebSocketCompression.agreed("permessage-deflate; server_max_window_bits=\(value)") {
                Issue.record("accepted \(value)")
            }
        }
    }

    @Test func aServerCloseEndsTheSequenceWithItsCode() async throws {
        let client = try client(WebSocketServers.shared.echoURL)
        var endpoint = Endpoint<JSON>.get("close")
        endpoint.queryParameters = ["code": 4002, "reason": "later"]
        let socket = try await client.webSocket(endpoint)
        for try await _ in socket { Issue.record("no message expected") }
        #expect(socket.closeCode == 4002)
        #expect(socket.closeReason == "later")
        _ = client.shutdown()
    }

    @Test func cancellingTheTaskEndsAHandshakeTheServerNeverAnswers() async throws {
        let client = try client(WebSocketServers.shared.hostileURL)
        let opening = Task { try await client.webSocket(.get("no-answer")) }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        opening.cancel()
        do {
            _ = try await opening.value
            Issue.record("the handshake should have been cancelled")
        } catch {
            #expect(DataTransferError.networkFailure(error as! NetworkError).kind == .cancelled)
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        _ = client.shutdown()
    }

    @Test func aBadHandshakeThrowsFromOpening() async throws {
        let client = try client(WebSocketServers.shared.hostileURL)
        do {
            _ = try await client.webSocket(.get("bad-accept"))
            Issue.record("the handshake should have failed")
        } catch {
            #expect(DataTransferError.networkFailure(error).kind == .protocol)
        }
        do {
            _ = try await client.webSocket(.get("status-403"))
            Issue.record("the handshake should have failed")
        } catch {
            #expect(error.response?.statusCode == 403)
        }
        _ = client.shutdown()
    }

    @Test func invalidUTF8FromTheServerEndsTheSequenceWithAProtocolError() async throws {
        let client = try client(WebSocketServers.shared.hostileURL)
        let socket = try await client.webSocket(.get("bad-utf8"))
        do {
            for try await _ in socket {}
            Issue.record("the sequence should have thrown")
        } catch let error as NetworkError {
            #expect(DataTransferError.networkFailure(error).kind == .protocol)
        }
        #expect(socket.closeCode == 1006)
        _ = client.shutdown()
    }

    @Test func pingsKeepAQuietConnectionAndAServerThatNeverAnswersFailsIt() async throws {
        // The websockets server says nothing on /silent but answers pings: pings after
        // 0.2 s of silence keep a 1 s idleTimeout from passing.
        let echo = try client(WebSocketServers.shared.echoURL)
        let quiet = try await echo.webSocket(.get("silent"), options: WebSocketOptions(idleTimeout: 1, pingInterval: 0.2))
        try await Task.sleep(for: .milliseconds(2500))
        try await quiet.close()
        for try await _ in quiet { Issue.record("no message expected") }
        #expect(quiet.closeCode == 1000)
        _ = echo.shutdown()
        // /no-read never reads, so never answers: the connection fails after twice the interval.
        let hostile = try client(WebSocketServers.shared.hostileURL)
        let deaf = try await hostile.webSocket(.get("no-read"), options: WebSocketOptions(pingInterval: 0.2))
        do {
            for try await _ in deaf {}
            Issue.record("the sequence should have thrown")
        } catch let error as NetworkError {
            #expect(DataTransferError.networkFailure(error).kind == .timeout)
            #expect("\(error)".contains("pingInterval"))
        }
        _ = hostile.shutdown()
    }

    @Test func aReaderFarBehindMakesTheServerWaitAndGetsEveryMessage() async throws {
        let client = try client(WebSocketServers.shared.echoURL)
        // 6000 messages of 64 random bytes at once; at most 8 wait for the reader before
        // the connection stops reading: without that, the 4104 the stream holds would overflow.
        let socket = try await client.webSocket(.get("burst", query: ["count": 6000, "bytes": 64]), bufferLimit: 8)
        try await Task.sleep(for: .milliseconds(300))
        var indexes: [Int] = []
        for try await message in socket {
            switch message {
            case .binary(let bytes):
                #expect(bytes.count == 64)
                indexes.append(bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) })
            case .text(let text):
                #expect(text == "sent 6000")
                try await socket.close()
            }
        }
        #expect(indexes == Array(0..<6000))
        #expect(socket.closeCode == 1000)
        _ = client.shutdown()
    }

    @Test func aTransportWithoutWebSocketsRefusesToOpen() async throws {
        let client = try NetlayerClient(.init(config: NetworkConfig(baseURL: "http://127.0.0.1:1/"),
                                              makeTransport: { _ throws(NetworkError) in
            StubSessionManager(rules: [], loop: try CurlSessionManager())
        }))
        await #expect(throws: NetworkError.self) { _ = try await client.webSocket(Endpoint<JSON>.get("x")) }
    }
}
