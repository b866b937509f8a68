import CWslay
import NetlayerCore
import NetlayerJSON

/// The opening handshake of a WebSocket (RFC 6455 section 4): the HTTP/1.1 Upgrade
/// request, written from a request built as every request is, and the checks of the
/// server's `101 Switching Protocols` answer.
struct WebSocketHandshake {
    /// The request's bytes, as they go on the wire.
    let requestBytes: [UInt8]
    /// Its request line and header lines, for the response's `sentHeaderLines` (with
    /// `RequestOptions.recordsSentHeaders`, up to `HTTPResponse.maxSentHeaderBytes`).
    let sentLines: [String]
    /// The `Sec-WebSocket-Accept` a server must answer with.
    let expectedAccept: String
    let offered: [String]
    let offersCompression: Bool

    /// The most bytes a server's handshake response may have; a longer one fails.
    static let maxResponseBytes = 64 * 1024

    /// The Upgrade request for `request` (whose URL is http or https) to `url`, with
    /// `cookies` (the jar's, for this URL) and a new random key.
    init(request: HTTPRequest, url: ParsedURL, cookies: [StoredCookie], protocols: [String],
         compression: Bool) throws(NetworkError) {
        var key = [UInt8](repeating: 0, count: 16)
        guard nl_ws_random(&key, 16) == 0 else { throw .generic("the kernel gave no random bytes for Sec-WebSocket-Key", curlCode: -1) }
        let keyText = Base64.encode(key)
        expectedAccept = Self.accept(for: keyText)
        offered = protocols
        offersCompression = compression
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        let defaultPort = url.scheme == "https" ? "443" : "80"
        var lines = ["GET \(target) HTTP/1.1"]
        if request.headers["Host"] == nil {
            lines.append("Host: " + url.host + (url.port.map { $0 == defaultPort ? "" : ":" + $0 } ?? ""))
        }
        lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: \(keyText)", "Sec-WebSocket-Version: 13"]
        if !protocols.isEmpty { lines.append("Sec-WebSocket-Protocol: " + protocols.joined(separator: ", ")) }
        if compression { lines.append("Sec-WebSocket-Extensions: " + WebSocketCompression.offer) }
        if request.headers["User-Agent"] == nil, let agent = request.options.userAgent { lines.append("User-Agent: \(agent)") }
        var cookieHeader = cookies.map { "\($0.name)=\($0.value)" }
        for field in request.headers {
            let name = field.name.lowercased()
            let value = String(decoding: HTTPHeaders.wireValue(field.value), as: UTF8.self)
            if name == "cookie" {
                cookieHeader.append(value)  // the request's own cookies, in the one Cookie line
            } else {
                lines.append("\(field.name): \(value)")
            }
        }
        if !cookieHeader.isEmpty { lines.append("Cookie: " + cookieHeader.joined(separator: "; ")) }
        requestBytes = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        var kept = 0
        sentLines = request.options.recordsSentHeaders
            ? Array(lines.prefix { line in
                kept += line.utf8.count + 2
                return kept <= HTTPResponse.maxSentHeaderBytes
            })
            : []
    }

    /// base64(SHA-1(key + the RFC's GUID)).
    static func accept(for key: String) -> String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        _ = nl_ws_sha1(input, input.count, &digest)
        return Base64.encode(digest)
    }

    /// The end of the header section in `buffer` (the index after CRLF CRLF), if it is there.
    static func headerEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 3..<buffer.count where buffer[i] == 0x0A && buffer[i - 1] == 0x0D && buffer[i - 2] == 0x0A
            && buffer[i - 3] == 0x0D {
            return i + 1
        }
        return nil
    }

    /// Reads the server's answer (its header section, `head`) and checks it: the
    /// response, and the subprotocol chosen; or the error with the response, when
    /// there was one.
    func check(_ head: ArraySlice<UInt8>, url: String) -> Result<Agreed, WebSocketFailure> {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { Array($0) + [0x0A] }
        while let last = lines.last, last.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { lines.removeLast() }
        guard let statusLine = lines.first else {
            return .failure(WebSocketFailure(.protocolViolation("the server's handshake response is empty", curlCode: 0)))
        }
        let words = statusLine.split(separator: 0x20, maxSplits: 2)
        guard words.count >= 2, words[0].starts(with: Array("HTTP/1.".utf8)),
              let status = Int(String(decoding: words[1], as: UTF8.self)), (100...599).contains(status) else {
            return .failure(WebSocketFailure(.protocolViolation(
                "the server did not answer the WebSocket handshake with an HTTP/1.1 status line", curlCode: 0)))
        }
        var received = HTTPResponse.ReceivedHeaders()
        for line in lines.dropFirst() {
            if let violation = line.withUnsafeBytes({ received.append(line: $0) }) {
                return .failure(WebSocketFailure(.protocolViolation(violation, curlCode: 0)))
            }
        }
        var response = HTTPResponse(statusCode: status, headers: HTTPHeaders(received: received), effectiveURL: url)
        if !sentLines.isEmpty { response.sentHeaderLines = sentLines }
        func fail(_ why: String) -> Result<Agreed, WebSocketFailure> {
            .failure(WebSocketFailure(.protocolViolation(why, curlCode: 0), response: response))
        }
        guard status == 101 else {
            return .failure(WebSocketFailure(.error(statusCode: status, response: response), response: response))
        }
        let headers = response.headers
        guard headers["upgrade"]?.lowercased() == "websocket" else {
            return fail("the server answered 101 without 'Upgrade: websocket'")
        }
        guard let connection = headers["connection"],
              connection.split(separator: ",").contains(where: { $0.trimmingCharacters(in: " \t").lowercased() == "upgrade" }) else {
            return fail("the server answered 101 without 'Connection: Upgrade'")
        }
        guard headers["sec-websocket-accept"]?.trimmingCharacters(in: " \t") == expectedAccept else {
            return fail("the server's Sec-WebSocket-Accept does not match the key sent (RFC 6455 section 4.1)")
        }
        var compression: WebSocketCompression?
        if let extensions = headers["sec-websocket-extensions"], !extensions.isEmpty {
            guard offersCompression else {
                return fail("the server chose WebSocket extensions ('\(extensions.escapedForMessage)') that were not offered")
            }
            switch WebSocketCompression.agreed(extensions) {
            case .success(let agreed): compression = agreed
            case .failure(let refused): return .failure(WebSocketFailure(refused.error, response: response))
            }
        }
        var chosen: String?
        if let picked = headers["sec-websocket-protocol"]?.trimmingCharacters(in: " \t"), !picked.isEmpty {
            guard offered.contains(picked) else {
                return fail("the server chose the subprotocol '\(picked.escapedForMessage)', which was not offered")
            }
            chosen = picked
        }
        return .success(Agreed(response: response, subprotocol: chosen, compression: compression))
    }

    /// What a successful handshake agreed.
    struct Agreed {
        let response: HTTPResponse
        let subprotocol: String?
        let compression: WebSocketCompression?
    }
}

/// Why a WebSocket failed, and the handshake's response when there was one.
struct WebSocketFailure: Error {
    let error: NetworkError
    let response: HTTPResponse?

    init(_ error: NetworkError, response: HTTPResponse? = nil) {
        self.error = error
        self.response = response
    }
}
