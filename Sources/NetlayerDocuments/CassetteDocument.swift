import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// The config's `cassette` key, `{"file": PATH, "mode": "record" | "replay"}`, and
/// the cassette file it names: `{"netlayerCassette": 1, "exchanges": [...]}` (see
/// docs/documents.md). A replay's file is read with the config, so that a missing or
/// malformed cassette fails the client's creation with a message naming the key and
/// the file; a recording's folder is checked then too. Writing is in
/// `CassetteDocument+File.swift`.
package struct CassetteDocument: Sendable {
    package enum Mode: String, Sendable {
        case record, replay
    }

    /// The cassette file's path, as given.
    package let file: String
    package let mode: Mode
    /// The exchanges a replay answers from; nil when recording.
    package let replayed: Cassette?

    /// Reads the config key `value` (and, to replay, the file it names).
    init(_ value: JSON) throws(NetworkError) {
        let doc = try DocumentReader(value, context: "config key 'cassette'")
        try doc.checkKeys(known: ["file", "mode"])
        guard let file = try doc.filePath("file"), !file.isEmpty else {
            throw .invalidRequest("config key 'cassette' needs 'file', the path of the cassette file")
        }
        guard let name = try doc.string("mode") else {
            throw .invalidRequest("config key 'cassette' needs 'mode': record or replay")
        }
        guard let mode = Mode(rawValue: name) else {
            throw .invalidRequest("config key 'cassette': mode '\(name.escapedForMessage)' is not record or replay")
        }
        self.file = file
        self.mode = mode
        let context = "config key 'cassette': file '\(file.escapedForMessage)'"
        switch mode {
        case .replay:
            let bytes: [UInt8]
            do {
                bytes = try DocumentFile.read(file)
            } catch {
                throw Self.named(error)
            }
            replayed = try Self.cassette(JSON.parseDocument(bytes, what: context), context: context)
        case .record:
            do {
                try DocumentFile.checkWritable(file)
            } catch {
                throw Self.named(error)
            }
            replayed = nil
        }
    }

    /// What the client does: record (redacting `redaction`'s secrets, saving at
    /// shutdown) or replay.
    package func clientMode(redaction: CassetteRedaction) -> CassetteMode {
        if let replayed { return .replay(replayed, redactedQuery: redaction.queryNames) }
        // From the root as the program's folder is now, when the client is made: the
        // recording goes there whatever folder the program is in when it is freed.
        let path = DocumentFile.absolute(file)
        return .record(redaction) { cassette in Self.save(cassette, to: path) }
    }

    /// The cassette a parsed file holds; anything malformed is `invalidRequest`
    /// naming where it is (`... exchange 3 key 'response': ...`).
    static func cassette(_ json: JSON, context: String) throws(NetworkError) -> Cassette {
        let doc = try DocumentReader(json, context: context)
        try doc.checkKeys(known: ["netlayerCassette", "exchanges"])
        guard doc.value("netlayerCassette")?.intValue == 1 else {
            throw .invalidRequest("\(context) is not a netlayer cassette: it needs \"netlayerCassette\": 1")
        }
        guard case .array(let items)? = doc.value("exchanges") else {
            throw .invalidRequest("\(context) needs 'exchanges', an array")
        }
        var exchanges: [Cassette.Exchange] = []
        exchanges.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            exchanges.append(try exchange(item, context: "\(context) exchange \(i)"))
        }
        return Cassette(exchanges: exchanges)
    }

    private static func exchange(_ json: JSON, context: String) throws(NetworkError) -> Cassette.Exchange {
        let doc = try DocumentReader(json, context: context)
        try doc.checkKeys(known: ["request", "response", "error"])
        guard let request = try doc.reader("request") else { throw .invalidRequest("\(context) needs 'request'") }
        try request.checkKeys(known: ["method", "url", "headers", "body", "bodyBase64"])
        guard let name = try request.string("method"), let method = HTTPMethod(named: name) else {
            throw .invalidRequest("\(request.context) needs 'method', a method token")
        }
        guard let url = try request.string("url"), !url.isEmpty else {
            throw .invalidRequest("\(request.context) needs 'url'")
        }
        var sent = HTTPRequest(method: method, url: url, headers: try headers(request))
        let body = try self.body(request)
        if !body.isEmpty { sent.body = body }

        switch (try doc.reader("response"), try doc.reader("error")) {
        case (let response?, nil):
            try response.checkKeys(known: ["status", "headers", "latin1Headers", "body", "bodyBase64", "httpVersion"])
            guard let status = try response.integer("status", in: 100...599) else {
                throw .invalidRequest("\(response.context) needs 'status'")
            }
            var answer = HTTPResponse(statusCode: status, headers: try received(headers(response),
                                                                                 latin1: latin1Names(response)),
                                      body: try self.body(response), effectiveURL: url)
            answer.httpVersion = try response.string("httpVersion")
            return Cassette.Exchange(request: sent, result: .success(answer))
        case (nil, let error?):
            try error.checkKeys(known: ["kind", "message"])
            let kind = try error.string("kind") ?? ""
            guard let errorKind = ErrorKind(rawValue: kind),
                  let failure = NetworkError(kind: errorKind, message: try error.string("message") ?? "cassette: \(kind)") else {
                throw .invalidRequest("\(error.context): kind '\(kind.escapedForMessage)' is not one a transport fails with")
            }
            return Cassette.Exchange(request: sent, result: .failure(failure))
        default:
            throw .invalidRequest("\(context) needs either 'response' or 'error'")
        }
    }

    /// The `headers` object: each value a string, or an array of strings for a
    /// repeated field. Names must be tokens and values hold no CR, LF or NUL (they
    /// would make other fields on replay).
    private static func headers(_ doc: DocumentReader) throws(NetworkError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        guard let object = try doc.object("headers") else { return headers }
        for member in object {
            let values: [JSON]
            if case .array(let items) = member.value { values = items } else { values = [member.value] }
            for value in values {
                guard case .string(let text) = value,
                      !member.key.isEmpty, member.key.allUTF8(HTTPHeaders.isTokenByte),
                      text.firstUTF8(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) == nil else {
                    throw .invalidRequest("\(doc.context) key 'headers': '\(member.key.escapedForMessage)' must be a header name with a string (or an array of strings) without CR, LF or NUL")
                }
                headers.add(name: member.key, value: text)
            }
        }
        return headers
    }

    /// The names `latin1Headers` lists (lower-cased): fields of `headers` whose values
    /// are ISO-8859-1 text, one code point per byte the server sent.
    private static func latin1Names(_ doc: DocumentReader) throws(NetworkError) -> Set<String> {
        guard let listed = doc.value("latin1Headers") else { return [] }
        let headers = try doc.object("headers") ?? JSONObject()
        let known = Set(headers.map { $0.key.lowercased() })
        guard case .array(let items) = listed else {
            throw .invalidRequest("\(doc.context) key 'latin1Headers' must be an array of names of 'headers'")
        }
        var names = Set<String>()
        for item in items {
            guard case .string(let name) = item, known.contains(name.lowercased()) else {
                throw .invalidRequest("\(doc.context) key 'latin1Headers' must be an array of names of 'headers'")
            }
            names.insert(name.lowercased())
        }
        return names
    }

    /// The fields as if received, so that a replayed response reads as a real one does:
    /// names in lower case, repeated fields joined, each Set-Cookie on its own; the
    /// values of `latin1` names as the bytes their code points are.
    private static func received(_ fields: HTTPHeaders, latin1: Set<String>) throws(NetworkError) -> HTTPHeaders {
        guard !fields.isEmpty else { return fields }
        var lines: [(name: String, value: [UInt8])] = []
        for field in fields.separateFields {
            guard latin1.contains(field.name.lowercased()) else {
                lines.append((field.name, Array(field.value.utf8)))
                continue
            }
            var bytes: [UInt8] = []
            for scalar in field.value.unicodeScalars {
                guard scalar.value <= 0xFF else {
                    throw .invalidRequest("cassette key 'latin1Headers': the value of '\(field.name.escapedForMessage)' "
                        + "holds U+\(String(scalar.value, radix: 16, uppercase: true)), which is not one byte")
                }
                bytes.append(UInt8(scalar.value))
            }
            lines.append((field.name, bytes))
        }
        return HTTPHeaders(receivedFields: lines)
    }

    /// `body` (text, as UTF-8) or `bodyBase64` (any bytes), not both; empty without either.
    /// A text body holds what the writer keeps as text: no control character but TAB,
    /// LF and CR, so that an edited cassette cannot replay terminal escapes or NULs
    /// hidden in a field that reads as text.
    private static func body(_ doc: DocumentReader) throws(NetworkError) -> [UInt8] {
        let text = try doc.string("body")
        if let text, let offset = text.utf8.firstIndex(where: isBinary) {
            let hex = String(text.utf8[offset], radix: 16, uppercase: true)
            let position = text.utf8.distance(from: text.utf8.startIndex, to: offset)
            throw .invalidRequest("\(doc.context) key 'body' holds the control character U+00\(hex.count < 2 ? "0" : "")\(hex) "
                + "at byte \(position): a body with control characters other than TAB, LF and CR goes in 'bodyBase64'")
        }
        guard let encoded = try doc.string("bodyBase64") else { return text.map { Array($0.utf8) } ?? [] }
        guard text == nil, let bytes = Base64.decode(encoded) else {
            throw .invalidRequest("\(doc.context) key 'bodyBase64' must be base64, and without 'body'")
        }
        return bytes
    }

    /// A byte that makes a body binary: a control character other than TAB, LF and
    /// CR. Such a body is written as `bodyBase64`, and refused as `body`.
    static func isBinary(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0x7F
    }

    /// `error` as `nl_client_new` reports a bad config, `invalidRequest` naming the
    /// key, whatever the file's trouble was (missing, unreadable, too large).
    private static func named(_ error: NetworkError) -> NetworkError {
        .invalidRequest("config key 'cassette': " + DataTransferError.networkFailure(error).message)
    }
}
