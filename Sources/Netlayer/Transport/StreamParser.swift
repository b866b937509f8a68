/// Cuts a body into `StreamEvent`s as its bytes arrive, following the server-sent
/// events format (WHATWG HTML, "Parsing an event stream") for `.sse`.
struct StreamParser {
    let mode: StreamMode
    private var pending: [UInt8] = []
    // Server-sent event fields being assembled.
    private var eventType = ""
    private var data: [String] = []
    private var lastEventId = ""
    private var retry: Int?
    private var sawBOM = false

    init(mode: StreamMode) { self.mode = mode }

    /// The events completed by `bytes`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [StreamEvent] {
        if mode == .chunks { return bytes.isEmpty ? [] : [.chunk(Array(bytes))] }
        pending.append(contentsOf: bytes)
        var events: [StreamEvent] = []
        var start = 0
        var i = 0
        while i < pending.count {
            let b = pending[i]
            if b == 0x0A || b == 0x0D {
                // A CR that ends the buffer may be the first half of CRLF: wait for more.
                if b == 0x0D && i + 1 == pending.count { break }
                let line = Array(pending[start..<i])
                if b == 0x0D && pending[i + 1] == 0x0A { i += 1 }
                i += 1
                start = i
                if let event = take(line: line) { events.append(event) }
                continue
            }
            i += 1
        }
        pending.removeFirst(start)
        return events
    }

    /// What is left when the body ends: a last unterminated line, or an event without
    /// its blank line (dispatched, as browsers do not, but a client reading a closed
    /// stream would expect).
    mutating func finish() -> [StreamEvent] {
        var events: [StreamEvent] = []
        if !pending.isEmpty {
            if let event = take(line: pending) { events.append(event) }
            pending = []
        }
        if mode == .sse, let event = dispatch() { events.append(event) }
        return events
    }

    private mutating func take(line: [UInt8]) -> StreamEvent? {
        var text = String(decoding: line, as: UTF8.self)
        if !sawBOM {
            sawBOM = true
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        }
        switch mode {
        case .lines: return .line(text)
        case .chunks: return nil
        case .sse: break
        }
        if text.isEmpty { return dispatch() }
        if text.hasPrefix(":") { return nil }  // comment
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value.removeFirst() }
        } else {
            field = Substring(text)
            value = ""
        }
        switch field {
        case "event": eventType = String(value)
        case "data": data.append(String(value))
        case "id" where !value.contains("\0"): lastEventId = String(value)
        case "retry": if let ms = Int(value), ms >= 0 { retry = ms }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> StreamEvent? {
        // `retry` is the stream's reconnection time: it stays until changed, like the id.
        defer {
            eventType = ""
            data = []
        }
        guard !data.isEmpty else { return nil }
        return .serverSent(event: eventType.isEmpty ? "message" : eventType, data: data.joined(separator: "\n"),
                           lastEventId: lastEventId, retry: retry)
    }
}
