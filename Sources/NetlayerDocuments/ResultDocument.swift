import NetlayerCore
import NetlayerJSON

extension RequestResult {
    /// Writes result documents (contract section 5): the one writer for every language,
    /// C's `nl_request`, Python's and a Swift caller's `RequestResult.document`.
    package enum ResultDocument {
        /// The document of `result`.
        package static func write(_ result: consuming RequestResult) -> JSONWriter {
            if let error = result.error {
                return failureDocument(error, response: result.response, attempts: result.attempts)
            }
            guard result.response != nil, result.value != nil else {
                return failureDocument(.noResponse, response: result.response, attempts: result.attempts)
            }
            // Moved out rather than copied: the caller is done with the result.
            let response = result.response.take()!, value = result.value.take()!
            return success(response, value: value, attempts: result.attempts, decoder: result.decoderChoice,
                           charset: result.charset, redactedQuery: result.secretQueryNames)
        }

        /// - Parameter decoder: what the auto decoder chose, written as `decoder`.
        /// - Parameter charset: the encoding the auto decoder read a textual body in, written as `charset`.
        /// - Parameter redactedQuery: the config's own secret query names, whose values
        ///   are kept out of `url` and `redirects` as the well-known ones are.
        package static func success(_ response: HTTPResponse, value: ResponseValue, attempts: Int,
                            decoder: AutoResponseDecoder.Choice?, charset: TextEncoding?,
                            redactedQuery: Set<String>) -> JSONWriter {
            var w = JSONWriter(capacity: 512 + response.body.count)
            w.raw("{\"ok\":true,\"status\":")
            w.write(int: Int64(response.statusCode))
            w.raw(",\"headers\":")
            writeHeaders(response.headers, into: &w)
            writeHTTPVersion(response.httpVersion, into: &w)
            writeURLs(response.effectiveURL, response.redirects, redactedQuery: redactedQuery, into: &w)
            w.raw(",\"value\":")
            value.write(into: &w)
            if w.wroteBigInteger { w.raw(",\"bigIntegers\":true") }
            if let decoder {
                w.raw(",\"decoder\":")
                w.write(string: decoder.rawValue)
                if let charset, decoder == .text || decoder == .base64 {
                    w.raw(",\"charset\":")
                    w.write(string: charset.name)
                }
            }
            w.raw(response.fromCache ? ",\"fromCache\":true,\"attempts\":" : ",\"fromCache\":false,\"attempts\":")
            w.write(int: Int64(attempts))
            if let events = response.streamEvents {
                w.raw(",\"events\":")
                w.write(int: Int64(events))
            }
            writeTiming(total: response.totalMs, response.timing, into: &w)
            w.raw("}")
            return w
        }

        /// A failure document; `response` is what the server answered, when it answered.
        package static func failure(_ error: DataTransferError, response: HTTPResponse? = nil, attempts: Int = 1) -> [UInt8] {
            failureDocument(error, response: response, attempts: attempts).bytes
        }

        private static func failureDocument(_ error: DataTransferError, response: HTTPResponse?, attempts: Int) -> JSONWriter {
            let response = error.response ?? response
            var w = JSONWriter(capacity: 1024)
            w.raw("{\"ok\":false,\"status\":")
            if let response { w.write(int: Int64(response.statusCode)) } else { w.raw("null") }
            if let response {
                w.raw(",\"headers\":")
                writeHeaders(response.headers, into: &w)
                writeHTTPVersion(response.httpVersion, into: &w)
            }
            w.raw(",\"attempts\":")
            w.write(int: Int64(attempts))
            if let response {
                writeTiming(total: response.totalMs, response.timing, into: &w)
            }
            w.raw(",\"error\":{\"kind\":")
            w.write(string: error.kind.rawValue)
            w.raw(",\"message\":")
            w.write(string: error.message)
            w.raw(",\"status\":")
            if let response { w.write(int: Int64(response.statusCode)) } else { w.raw("null") }
            w.raw(",\"body\":")
            if let response, [.status, .parsing, .noResponse, .resolved].contains(error.kind) {
                let body = FailureBody(response)
                w.write(string: body.text)
                if body.isCut {
                    w.raw(",\"bodyTruncated\":true,\"bodyBytes\":")
                    w.write(int: Int64(response.body.count))
                }
            } else {
                w.raw("null")
            }
            w.raw(",\"code\":")
            if let code = error.code { w.write(string: code) } else { w.raw("null") }
            if let curlCode = error.curlCode {
                w.raw(",\"curlCode\":")
                w.write(int: Int64(curlCode))
            }
            w.raw("}}")
            return w
        }

        /// The `error` member of a failure document, as hooks receive it.
        package static func errorObject(_ error: DataTransferError) -> JSON {
            let response = error.response
            let body = response.map { FailureBody($0) }
            var object: JSONObject = [
                "kind": .string(error.kind.rawValue), "message": .string(error.message),
                "status": response.map { .int(Int64($0.statusCode)) } ?? .null,
                "body": body.map { .string($0.text) } ?? .null,
                "code": error.code.map { .string($0) } ?? .null,
            ]
            if let response {
                object["headers"] = .object(JSONObject(response.headers.map { ($0.name, JSON.string($0.value)) }))
                if body?.isCut == true {
                    object["bodyTruncated"] = .bool(true)
                    object["bodyBytes"] = .int(Int64(response.body.count))
                }
            }
            if let curlCode = error.curlCode { object["curlCode"] = .int(Int64(curlCode)) }
            return .object(object)
        }

        package static func invalid(_ message: String) -> [UInt8] {
            failure(.networkFailure(.invalidRequest(message)))
        }

        /// `,"timing":{...}`: the total and libcurl's phase marks (`TransferTiming`).
        private static func writeTiming(total: Double, _ timing: TransferTiming, into w: inout JSONWriter) {
            w.raw(",\"timing\":{\"totalMs\":")
            w.write(thousandths: total)
            w.raw(",\"dnsMs\":")
            w.write(thousandths: timing.dnsMs)
            w.raw(",\"connectMs\":")
            w.write(thousandths: timing.connectMs)
            w.raw(",\"tlsMs\":")
            w.write(thousandths: timing.tlsMs)
            w.raw(",\"firstByteMs\":")
            w.write(thousandths: timing.firstByteMs)
            w.raw(",\"redirectMs\":")
            w.write(thousandths: timing.redirectMs)
            w.raw("}")
        }

        /// `,"url":...` (when known) and `,"redirects":[{"status":302,"url":...},...]` (when
        /// there were any), their secrets redacted as in logs (`Redaction.url`).
        private static func writeURLs(_ url: String, _ redirects: [RedirectHop], redactedQuery: Set<String>,
                                      into w: inout JSONWriter) {
            if !url.isEmpty {
                w.raw(",\"url\":")
                w.write(string: Redaction.url(in: url, queryNames: redactedQuery))
            }
            guard !redirects.isEmpty else { return }
            w.raw(",\"redirects\":[")
            for (index, hop) in redirects.enumerated() {
                w.raw(index == 0 ? "{\"status\":" : ",{\"status\":")
                w.write(int: Int64(hop.status))
                w.raw(",\"url\":")
                w.write(string: Redaction.url(in: hop.url, queryNames: redactedQuery))
                w.raw("}")
            }
            w.raw("]")
        }

        private static func writeHTTPVersion(_ version: String?, into w: inout JSONWriter) {
            guard let version else { return }
            w.raw(",\"httpVersion\":")
            w.write(string: version)
        }

        /// The `headers` object; a value that is not UTF-8 is written as ISO-8859-1 text
        /// (`HTTPHeaders.text(ofValue:)`) and its name listed in `latin1Headers`, which
        /// follows, so that a reader gets the exact bytes back.
        private static func writeHeaders(_ headers: HTTPHeaders, into w: inout JSONWriter) {
            w.raw("{")
            var first = true
            var latin1: [String] = []
            var sawSetCookie = false
            headers.withEachFieldUTF8(marking: { name, value, isPlain in
                if name.count == 10, name.elementsEqual("set-cookie".utf8) { sawSetCookie = true }
                if isPlain {
                    w.write(plainMember: name, value: value, first: first)  // checked as it arrived
                } else if !w.write(member: name, value: value, first: first) {
                    let field = String(decoding: name, as: UTF8.self)
                    if !first { w.raw(",") }
                    w.write(string: field)
                    w.raw(":")
                    w.write(string: HTTPHeaders.text(ofValue: value).text)
                    latin1.append(field)
                }
                first = false
            })
            w.raw("}")
            if sawSetCookie {
                // Each cookie on its own: joined with ", " (the rule for `headers`) they
                // cannot be told apart, since an Expires date holds a comma.
                w.raw(",\"setCookies\":")
                w.write(.array(headers.values(named: "set-cookie").map(JSON.string)))
            }
            if !latin1.isEmpty {
                w.raw(",\"latin1Headers\":")
                w.write(.array(latin1.map(JSON.string)))
            }
        }
    }
}

extension ResponseValue {
    func write(into writer: inout JSONWriter) {
        if let text { text.write(into: &writer) } else { writer.write(value) }
    }
}

extension RawJSON {
    func write(into writer: inout JSONWriter) {
        // Checked JSON text: copied without the whitespace around it.
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, Self.isWhitespace(bytes[start]) { start += 1 }
        while end > start, Self.isWhitespace(bytes[end - 1]) { end -= 1 }
        bytes.withUnsafeBufferPointer { writer.writeRaw(UnsafeBufferPointer(rebasing: $0[start..<end])) }
        if hasBigIntegers { writer.noteBigInteger() }
    }

    private static func isWhitespace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
}

/// The part of a response body a failure document carries: at most `limit` bytes,
/// so that a 100 MB error page costs 64 KiB of document (escaped, a whole body could be
/// six times its size). The text is read as `auto` reads a body: in the charset its
/// `Content-Type` names or a byte order mark gives (an error page in ISO-8859-1 or
/// UTF-16 reads as it was written), else as UTF-8, an invalid sequence becoming U+FFFD.
/// A cut body ends before a sequence that would not fit.
package struct FailureBody {
    static let limit = 64 * 1024

    let text: String
    let isCut: Bool

    init(_ response: HTTPResponse) {
        let body = response.body
        isCut = body.count > Self.limit
        let charset = body.isEmpty ? nil : AutoResponseDecoder.reading(for: response)?.charset
        if let charset {
            // A cut may split a character of a multibyte encoding: back off up to three
            // bytes (a UTF-16 or Shift_JIS character is at most four).
            for end in stride(from: min(body.count, Self.limit), through: max(min(body.count, Self.limit) - 3, 1), by: -1) {
                if let text = charset.decodeBody(isCut ? Array(body[..<end]) : body) {
                    self.text = text
                    return
                }
                if !isCut { break }
            }
        }
        guard isCut else {
            text = String(decoding: body, as: UTF8.self)
            return
        }
        var end = Self.limit
        // Back off over continuation bytes (10xxxxxx) to the start of a sequence.
        while end > Self.limit - 4, body[end] & 0xC0 == 0x80 { end -= 1 }
        text = String(decoding: body[..<end], as: UTF8.self)
    }
}
