import CWslay
import NetlayerCore
import NetlayerJSON

/// permessage-deflate (RFC 7692) as a handshake agreed it: messages whose first frame
/// has RSV1 set are deflated. zlib does the work (`nl_pmd_*` in the CWslay shim); its
/// state is made with the first compressed message, so an idle connection holds none.
/// Loop thread only.
final class WebSocketCompression {
    /// What the client offers: no parameters, so the server may not narrow the
    /// client's window (which zlib's raw deflate cannot make 256 bytes).
    static let offer = "permessage-deflate"
    /// Messages shorter than this are sent as they are (deflate would not shrink them).
    static let minimumBytes = 32

    /// The server resets its compressor after each message.
    let serverNoContextTakeover: Bool
    /// The client resets its compressor after each message.
    let clientNoContextTakeover: Bool
    private let zlib: UnsafeMutablePointer<nl_pmd>

    private init?(serverNoContextTakeover: Bool, clientNoContextTakeover: Bool) {
        guard let zlib = nl_pmd_new() else { return nil }
        self.zlib = zlib
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
    }

    deinit { nl_pmd_free(zlib) }


    /// The extension a server's `Sec-WebSocket-Extensions` agrees to, or why it cannot
    /// be used (RFC 7692 section 7.1): one permessage-deflate with known parameters.
    static func agreed(_ header: String) -> Result<WebSocketCompression, WebSocketFailure> {
        let offers = header.split(separator: ",")
        guard offers.count == 1 else { return .refused("the server chose more than one WebSocket extension ('\(header.escapedForMessage)')") }
        let parts = offers[0].split(separator: ";").map { $0.trimmingCharacters(in: " \t") }
        guard parts.first?.lowercased() == "permessage-deflate" else {
            return .refused("the server chose a WebSocket extension that was not offered ('\(header.escapedForMessage)')")
        }
        var server = false, client = false
        var seen: Set<String> = []
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " \t\"") }
            let name = pair[0].lowercased()
            guard seen.insert(name).inserted else { return .refused("permessage-deflate names '\(name)' twice") }
            switch name {
            case "server_no_context_takeover" where pair.count == 1: server = true
            case "client_no_context_takeover" where pair.count == 1: client = true
            // RFC 7692 section 7.1.2.1: a decimal value from 8 to 15 without leading zeros
            // ("010" and "+9" are invalid, which fails the connection).
            case "server_max_window_bits" where pair.count == 2 && (8...15).map(String.init).contains(pair[1]):
                break  // inflating with a 32 KiB window reads any smaller one
            default:
                return .refused("the server's permessage-deflate parameter '\(parameter.escapedForMessage)' was not offered or is invalid")
            }
        }
        guard let agreed = WebSocketCompression(serverNoContextTakeover: server, clientNoContextTakeover: client) else {
            return .refused("out of memory for permessage-deflate")
        }
        return .success(agreed)
    }

    enum Inflated {
        case message(UnsafeMutablePointer<UInt8>?, Int)
        case tooLarge
        case corrupt
    }

    /// Inflates one received message; `.message` is malloc'ed (free it).
    func inflate(_ bytes: UnsafeRawBufferPointer, limit: Int) -> Inflated {
        var out: UnsafeMutablePointer<UInt8>?
        var count = 0
        let rc = nl_pmd_inflate(zlib, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, limit,
                                serverNoContextTakeover ? 1 : 0, &out, &count)
        switch rc {
        case 0: return .message(out, count)
        case 1: return .tooLarge
        default: return .corrupt
        }
    }

    /// Deflates one message to send; nil when memory ran out.
    func deflate(_ bytes: [UInt8]) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>?
        var count = 0
        let rc = bytes.withUnsafeBufferPointer {
            nl_pmd_deflate(zlib, $0.baseAddress, $0.count, clientNoContextTakeover ? 1 : 0, &out, &count)
        }
        defer { free(out) }
        guard rc == 0 else { return nil }
        return Array(UnsafeBufferPointer(start: out, count: count))
    }
}

extension Result where Failure == WebSocketFailure {
    /// A handshake the server's extensions break (kind `protocol`).
    static func refused(_ why: String) -> Self { .failure(WebSocketFailure(.protocolViolation(why, curlCode: 0))) }
}
