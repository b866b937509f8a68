import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

extension CassetteDocument {
    /// Writes `cassette` to `path`, whole or not at all. A failure cannot reach the
    /// caller (the client is shutting down, and `nl_client_free` returns nothing), so
    /// it is an `error` log event on standard error, whatever the config's log level:
    /// a recording lost without a word would pass for one that was never made.
    static func save(_ cassette: Cassette, to path: String) {
        do {
            try DocumentFile.write(serialize(cassette), to: path)
        } catch {
            let failure = DataTransferError.networkFailure(error)
            LogEvent.writeToStderr(LogEvent(level: .error, event: "error", fields: [
                "kind": .string(failure.kind.rawValue),
                "message": .string("config key 'cassette': the recording was not saved: \(failure.message)"),
            ]))
        }
    }

    /// The cassette file's text: indented JSON, one key per line, so that a
    /// re-recording reads as a diff of the exchanges that changed.
    static func serialize(_ cassette: Cassette) -> [UInt8] {
        var exchanges: [JSON] = []
        exchanges.reserveCapacity(cassette.exchanges.count)
        for exchange in cassette.exchanges {
            var object: JSONObject = ["request": .object(request(exchange.request))]
            switch exchange.result {
            case .success(let response):
                var answer: JSONObject = ["status": .int(Int64(response.statusCode))]
                let (fields, latin1) = receivedHeaders(response.headers)
                answer.appendUnchecked("headers", .object(fields))
                if !latin1.isEmpty { answer.appendUnchecked("latin1Headers", .array(latin1.map(JSON.string))) }
                addBody(response.body, to: &answer)
                if let version = response.httpVersion { answer.appendUnchecked("httpVersion", .string(version)) }
                object.appendUnchecked("response", .object(answer))
            case .failure(let error):
                object.appendUnchecked("error", .object([
                    "kind": .string(DataTransferError.networkFailure(error).kind.rawValue),
                    "message": .string(CassetteRedaction.message(of: error)),
                ]))
            }
            exchanges.append(.object(object))
        }
        var out: [UInt8] = []
        indented(.object(["netlayerCassette": 1, "exchanges": .array(exchanges)]), depth: 0, into: &out)
        out.append(0x0A)
        return out
    }

    private static func request(_ request: HTTPRequest) -> JSONObject {
        var object: JSONObject = ["method": .string(request.method.rawValue)]
        object.appendUnchecked("url", .string(request.url))
        object.appendUnchecked("headers", .object(headers(request.headers)))
        if let body = request.body { addBody(body, to: &object) }
        return object
    }

    /// Headers as an object; a repeated field's values as an array, each on its own
    /// (Set-Cookie values hold commas, so joined they could not be told apart).
    private static func headers(_ headers: HTTPHeaders) -> JSONObject {
        var object = JSONObject()
        var seen = Set<String>()
        for field in headers.fields where seen.insert(field.name.lowercased()).inserted {
            let values = headers.values(named: field.name)
            object.appendUnchecked(field.name, values.count == 1 ? .string(values[0]) : .array(values.map(JSON.string)))
        }
        return object
    }

    /// A response's headers as `headers` writes them, with the names of fields whose
    /// values are not all UTF-8 (HTTP allows any byte from 0x80 up): those values are
    /// written as ISO-8859-1 text, one code point per byte, as a result document's
    /// `latin1Headers` are, so that replay gives back the bytes the server sent.
    private static func receivedHeaders(_ headers: HTTPHeaders) -> (JSONObject, [String]) {
        var names: [String] = []
        var values: [String: [[UInt8]]] = [:]
        headers.withEachSeparateFieldUTF8 { name, value in
            let key = String(decoding: name, as: UTF8.self).lowercased()
            if values[key] == nil { names.append(key) }
            values[key, default: []].append(Array(value))
        }
        var object = JSONObject()
        var latin1: [String] = []
        for name in names {
            let bytes = values[name]!
            let isLatin1 = bytes.contains { String(validating: $0, as: UTF8.self) == nil }
            if isLatin1 { latin1.append(name) }
            let texts = bytes.map { value in
                isLatin1 ? String(String.UnicodeScalarView(value.map { Unicode.Scalar($0) }))
                         : String(decoding: value, as: UTF8.self)
            }
            object.appendUnchecked(name, texts.count == 1 ? .string(texts[0]) : .array(texts.map(JSON.string)))
        }
        return (object, latin1)
    }

    /// `body` as text when it reads as text (UTF-8 without control characters other
    /// than TAB, LF and CR), which a diff shows; else as `bodyBase64`.
    private static func addBody(_ body: [UInt8], to object: inout JSONObject) {
        guard !body.isEmpty else { return }
        let binary = body.contains(where: isBinary)
        if !binary, let text = String(validating: body, as: UTF8.self) {
            object.appendUnchecked("body", .string(text))
        } else {
            object.appendUnchecked("bodyBase64", .string(Base64.encode(body)))
        }
    }

    /// `value` as JSON text indented by two spaces per level; empty arrays and
    /// objects, and scalars, as the compact writer writes them.
    private static func indented(_ value: JSON, depth: Int, into out: inout [UInt8]) {
        let inner = [UInt8](repeating: 0x20, count: 2 * (depth + 1))
        switch value {
        case .array(let items) where !items.isEmpty:
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                out += i == 0 ? [0x0A] : [UInt8(ascii: ","), 0x0A]
                out += inner
                indented(item, depth: depth + 1, into: &out)
            }
            out.append(0x0A)
            out += inner.dropLast(2)
            out.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.enumerated() {
                out += i == 0 ? [0x0A] : [UInt8(ascii: ","), 0x0A]
                out += inner
                out += JSONWriter.serialize(.string(member.key))
                out += [UInt8(ascii: ":"), 0x20]
                indented(member.value, depth: depth + 1, into: &out)
            }
            out.append(0x0A)
            out += inner.dropLast(2)
            out.append(UInt8(ascii: "}"))
        default:
            out += JSONWriter.serialize(value)
        }
    }
}
