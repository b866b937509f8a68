import NetlayerCore
import NetlayerJSON

/// Cuts a body into `StreamEvent`s as its bytes arrive, following the server-sent
/// events format (WHATWG HTML, "Parsing an event stream") for `.sse`.
package struct StreamParser {
    let mode: StreamMode
    /// The most bytes one line, or the data of one server-sent event, may hold: what
    /// a server can make the parser keep (`RequestOptions.maxStreamItemBytes`).
    let maxItemBytes: Int
    /// A line or an event passed `maxItemBytes`: nothing more is parsed.
    private(set) var tooLarge = false
    private var pending: [UInt8] = []
    // Server-sent event fields being assembled.
    private var eventType = ""
    private var data: [String] = []
    private var lastEventId = ""
    private var retry: Int?
    /// Bytes of the data of the event being assembled, newlines between its lines included.
    private var dataBytes = 0
    private var sawBOM = false
    /// How many bytes of `pending` hold no line end (a long line arriving in pieces).
    private var scanned = 0
    /// The last read ended with a CR, which ended its line: an LF that starts the next
    /// read is the rest of that CRLF, not an empty line.
    private var skipsLF = false
    /// For `.lines`: the charset the response's `Content-Type` names (nil: UTF-8), which
    /// a line is decoded from, as `auto` decodes a body's text.
    var charset: TextEncoding?

    init(mode: StreamMode, maxItemBytes: Int = .max) {
        self.mode = mode
        self.maxItemBytes = maxItemBytes
    }

    /// The events completed by `bytes`, up to a line or event that passes
    /// `maxItemBytes` (then `tooLarge` is set).
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [StreamEvent] {
        if mode == .chunks { return bytes.isEmpty ? [] : [.chunk(Array(bytes))] }
        if tooLarge { return [] }
        pending.append(contentsOf: bytes)
        var events: [StreamEvent] = []
        var start = 0
        var i = scanned  // bytes before it were looked at by an earlier call: splitting stays linear
        if skipsLF, i < pending.count {
            if pending[i] == 0x0A {
                i += 1
                start = i
            }
            skipsLF = false
        }
        while i < pending.count {
            let b = pending[i]
            if b == 0x0A || b == 0x0D {
                // A CR ends its line at once (end-of-line = CRLF / CR / LF), also when it
                // ends the read: a server that sends "data: x\r\r" and goes quiet has sent
                // an event. An LF after it is skipped, here or at the next read.
                let line = Array(pending[start..<i])
                if b == 0x0D {
                    if i + 1 == pending.count { skipsLF = true } else if pending[i + 1] == 0x0A { i += 1 }
                }
                i += 1
                start = i
                if let event = take(line: line) { events.append(event) }
                if tooLarge { break }
                continue
            }
            i += 1
        }
        // The unfinished line is pending[start..<i].
        if tooLarge || i - start > maxItemBytes {
            tooLarge = true
            pending = []
            scanned = 0
            return events
        }
        pending.removeFirst(start)
        scanned = i - start
        return events
    }

    /// What is left when the body ends: for `lines`, a last line without its newline. For `sse` nothing else: the HTML standard discards
    /// pending data at the end of the stream, so an event not ended by a blank line is
    /// not dispatched.
    mutating func finish() -> [StreamEvent] {
        if tooLarge { return [] }
        defer {
            pending = []
            scanned = 0
            skipsLF = false
        }
        guard mode == .lines, !pending.isEmpty else { return [] }
        return take(line: pending).map { [$0] } ?? []
    }

    private mutating func take(line: [UInt8]) -> StreamEvent? {
        if line.count > maxItemBytes {
            tooLarge = true
            return nil
        }
        var line = line[...]
        if !sawBOM {
            sawBOM = true
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
        }
        switch mode {
        case .lines:
            // What does not decode in the charset is read as UTF-8, each bad byte U+FFFD.
            if let charset, charset != .utf8, let text = charset.decode(Array(line)) { return .line(text) }
            return .line(String(decoding: line, as: UTF8.self))
        case .chunks: return nil
        case .sse: break
        }
        // Bytes, not Characters: a combining mark after the colon must not merge with it.
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }  // comment
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = line
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event": eventType = String(decoding: value, as: UTF8.self)
        case "data":
            dataBytes += value.count + (data.isEmpty ? 0 : 1)
            if dataBytes > maxItemBytes {
                tooLarge = true
                return nil
            }
            data.append(String(decoding: value, as: UTF8.self))
        case "id" where !value.contains(0): lastEventId = String(decoding: value, as: UTF8.self)
        case "retry":
            // Only ASCII digits count: "+5", "-0" and " 5" are ignored.
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }),
               let ms = Int(String(decoding: value, as: UTF8.self)) {
                retry = ms
            }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> StreamEvent? {
        // `retry` is the stream's reconnection time: it stays until changed, like the id.
        defer {
            eventType = ""
            data = []
            dataBytes = 0
        }
        guard !data.isEmpty else { return nil }
        return .serverSent(event: eventType.isEmpty ? "message" : eventType, data: data.joined(separator: "\n"),
                           lastEventId: lastEventId, retry: retry)
    }
}
