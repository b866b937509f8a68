import Testing
@testable import Netlayer

/// Response headers kept as bytes (`HTTPResponse.ReceivedHeaders`) must read exactly like the
/// string fields they replace, and write the same JSON.
@Suite struct ReceivedHeadersTests {
    private func received(_ lines: [String]) -> (HTTPHeaders, String?) {
        var block = HTTPResponse.ReceivedHeaders()
        var violation: String?
        for line in lines where violation == nil {
            var bytes = Array(line.utf8)
            violation = bytes.withUnsafeMutableBytes { block.append(line: UnsafeRawBufferPointer($0)) }
        }
        return (HTTPHeaders(received: block), violation)
    }

    /// A cache's `Age` (a lower-case name, a plain value) changes the received fields
    /// in place: a value that is not UTF-8 keeps its bytes, and its place.
    @Test func aLowerCaseChangeKeepsTheOtherFieldsBytes() {
        var block = HTTPResponse.ReceivedHeaders()
        for line in [Array("X-Latin1: caf".utf8) + [0xE9] + Array("\r\n".utf8), Array("Age: 1\r\n".utf8),
                     Array("Set-Cookie: a=1\r\n".utf8), Array("Set-Cookie: b=2\r\n".utf8)] {
            #expect(line.withUnsafeBytes { block.append(line: $0) } == nil)
        }
        var headers = HTTPHeaders(received: block)
        headers["age"] = "30"
        headers["connection"] = nil
        var fields: [(String, [UInt8])] = []
        headers.withEachSeparateFieldUTF8 { name, value in fields.append((String(decoding: name, as: UTF8.self), Array(value))) }
        #expect(fields.map(\.0) == ["x-latin1", "age", "set-cookie", "set-cookie"])
        #expect(fields[0].1 == Array("caf".utf8) + [0xE9])
        #expect(headers["age"] == "30" && headers.values(named: "set-cookie") == ["a=1", "b=2"])
        headers["X-Upper"] = "1"  // a name with capitals keeps them: the fields become strings
        #expect(headers.fields.map(\.name) == ["x-latin1", "age", "set-cookie", "X-Upper"])
    }

    @Test func readsLikeStringFieldsWithLowerCasedNamesAndTrimmedValues() {
        let (headers, violation) = received([
            "HTTP/1.1 200 OK\r\n", "Content-Type: application/json\r\n", "X-Empty:\r\n",
            "Set-Cookie: a=1\r\n", "ETAG:  \"v1\"  \r\n", "set-cookie: b=2\r\n", "\r\n",
        ])
        #expect(violation == nil)
        #expect(headers.fields.map(\.name) == ["content-type", "x-empty", "set-cookie", "etag"])
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["x-empty"] == "")
        #expect(headers["Set-Cookie"] == "a=1, b=2")
        #expect(headers["etag"] == "\"v1\"")
        #expect(headers["missing"] == nil)
        #expect(headers.count == 4)
        #expect(headers == HTTPHeaders([("content-type", "application/json"), ("x-empty", ""),
                                        ("set-cookie", "a=1, b=2"), ("etag", "\"v1\"")]))
    }

    @Test func valuesThatAreNotUTF8ReadAsLatin1AndKeepTheirBytesWhenJoined() {
        var block = HTTPResponse.ReceivedHeaders()
        for line: [UInt8] in [Array("X-A: caf".utf8) + [0xE9, 0x0D, 0x0A], Array("X-M: a\r\n".utf8),
                              Array("X-M: ".utf8) + [0xFF, 0x0D, 0x0A], Array("X-U: café\r\n".utf8)] {
            var bytes = line
            _ = bytes.withUnsafeMutableBytes { block.append(line: UnsafeRawBufferPointer($0)) }
        }
        let headers = HTTPHeaders(received: block)
        #expect(headers["x-a"] == "caf\u{E9}")
        #expect(headers["x-m"] == "a, \u{FF}")
        #expect(headers["x-u"] == "café")
        var joined: [String: [UInt8]] = [:]
        headers.withEachFieldUTF8 { name, value in joined[String(decoding: name, as: UTF8.self)] = Array(value) }
        #expect(joined["x-m"] == Array("a, ".utf8) + [0xFF])
        #expect([UInt8](Array("x".utf8) + [0xE9]).withUnsafeBufferPointer { HTTPHeaders.text(ofValue: $0).isLatin1 })
    }

    @Test func aStatusLineStartsOverAndMutationKeepsTheOtherFields() {
        var (headers, _) = received([
            "HTTP/1.1 301 Moved\r\n", "Location: /b\r\n", "\r\n",
            "HTTP/1.1 200 OK\r\n", "Server: t\r\n", "Date: now\r\n", "\r\n",
        ])
        #expect(headers.fields.map(\.name) == ["server", "date"])
        headers["Date"] = nil
        headers["X-New"] = "1"
        #expect(headers.fields == [.init(name: "server", value: "t"), .init(name: "X-New", value: "1")])
        #expect(HTTPHeaders(received: HTTPResponse.ReceivedHeaders()).isEmpty)
    }

    @Test func manyAndLongFieldsOutgrowTheFirstBuffer() {
        let lines = (0..<200).map { "X-Field-\($0): \(String(repeating: "v", count: $0 * 7))\r\n" }
        let (headers, violation) = received(["HTTP/1.1 200 OK\r\n"] + lines)
        #expect(violation == nil)
        #expect(headers.count == 200)
        #expect(headers["x-field-199"] == String(repeating: "v", count: 199 * 7))
        #expect(headers.fields.first == .init(name: "x-field-0", value: ""))
    }

    @Test func framingViolationsAreReported() {
        #expect(received(["HTTP/1.1 200 OK\r\n", "A: 1\n"]).1 == "the response uses bare LF line ends")
        let (_, conflict) = received(["Content-Length: 5\r\n", "Content-Length: 6\r\n"])
        #expect(conflict == "the response has conflicting Content-Length headers (5, 6)")
        #expect(received(["Content-Length: 5\r\n", "content-length: 5\r\n"]).1 == nil)
        // RFC 9110 5.1: a name is a token.
        #expect(received(["X-Bad : 1\r\n"]).1 == #"the response has a header field name that is not a token ("X-Bad ")"#)
        #expect(received(["X-\u{1}: 1\r\n"]).1 == #"the response has a header field name that is not a token ("X-\u{1}")"#)
    }

    /// A change (the cache's `Age`, a 304's fields) makes the fields strings: each
    /// `Set-Cookie` stays apart, and reading still joins repeated names.
    @Test func aChangeKeepsEachSetCookieApart() throws {
        let expires = "a=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT"
        var (headers, _) = received(["HTTP/1.1 200 OK\r\n", "Set-Cookie: \(expires)\r\n", "X: 1\r\n",
                                     "Set-Cookie: b=2\r\n", "\r\n"])
        headers["Age"] = "5"
        #expect(headers.values(named: "set-cookie") == [expires, "b=2"])
        #expect(headers["Set-Cookie"] == expires + ", b=2")
        #expect(headers.count == 3)
        #expect(headers.fields.map(\.name) == ["set-cookie", "x", "Age"])
        let document = RequestResult.ResultDocument.success(HTTPResponse(statusCode: 200, headers: headers), value: .value(.null),
                                              attempts: 1, decoder: nil, charset: nil, redactedQuery: []).bytes
        guard case .object(let root) = try JSONParser.parse(document), case .object(let written)? = root["headers"] else {
            Issue.record("no headers object in \(String(decoding: document, as: UTF8.self))")
            return
        }
        #expect(written.keys == ["set-cookie", "x", "Age"])
        #expect(root["setCookies"] == .array([.string(expires), .string("b=2")]))

        var added = HTTPHeaders()
        added.add(name: "Set-Cookie", value: "a=1")
        added.add(name: "set-cookie", value: "b=2")
        #expect(added.count == 1 && added["SET-COOKIE"] == "a=1, b=2" && added.values(named: "Set-Cookie") == ["a=1", "b=2"])
    }

    /// RFC 9112 5.2: a user agent reads an obsolete line folding as a space.
    @Test func aFoldedLineContinuesTheValueBeforeIt() {
        let (headers, violation) = received(["HTTP/1.1 200 OK\r\n", " before any field\r\n", "A: 1\r\n",
                                             " folded: 2 \r\n", "\t \tmore\r\n", "Empty:\r\n", "  x\r\n",
                                             "Quoted: q\r\n", " \"r\"\r\n", "B: 3\r\n", "\r\n"])
        #expect(violation == nil)
        #expect(headers["a"] == "1 folded: 2 more")
        #expect(headers["empty"] == "x")
        #expect(headers["quoted"] == "q \"r\"")
        #expect(headers["b"] == "3")
        #expect(headers.count == 4)
        var plain: [String: Bool] = [:]
        headers.withEachFieldUTF8(marking: { name, _, isPlain in plain[String(decoding: name, as: UTF8.self)] = isPlain })
        #expect(plain == ["a": true, "empty": true, "quoted": false, "b": true])
    }

    /// Fields are marked plain as they arrive only when JSON may hold their bytes as
    /// they are; the result document's `headers` read back exactly either way.
    @Test func onlyPlainFieldsAreMarkedAndEveryFieldWritesBackExactly() throws {
        var block = HTTPResponse.ReceivedHeaders()
        let lines: [[UInt8]] = [
            Array("HTTP/1.1 200 OK\r\n".utf8), Array("Server: nginx/1.22 (Debian)\r\n".utf8),
            Array("ETag: \"v1\"\r\n".utf8), Array("X-Back: a\\b\r\n".utf8), Array("X-Tab: a\tb\r\n".utf8),
            Array("X-Long: 0123456789abcdef0123456789\r\n".utf8), Array("X-Quote-Late: 0123456789abcdef\"\r\n".utf8),
            Array("X-U: caf\u{e9}\r\n".utf8), Array("X-L: caf".utf8) + [0xE9, 0x0D, 0x0A], Array("X-Empty:\r\n".utf8),
            Array("X-Del: a".utf8) + [0x7F, 0x0D, 0x0A], Array("X_Under.Score-NAME: v\r\n".utf8),
            Array("ABCDEFGH: 12345678\r\n".utf8), Array("Content-Security-Policy-Report-Only: 123456789\"\r\n".utf8),
            // A byte to escape before one that is not UTF-8 (found by Tests/fuzz): still ISO-8859-1.
            Array("X-Ctl-L: ".utf8) + [0x04, 0x88, 0x0D, 0x0A], Array("X-Quote-L: \"".utf8) + [0xE9, 0x22, 0x0D, 0x0A],
            Array("\r\n".utf8),
        ]
        for line in lines {
            var bytes = line
            _ = bytes.withUnsafeMutableBytes { block.append(line: UnsafeRawBufferPointer($0)) }
        }
        let headers = HTTPHeaders(received: block)
        var plain: [String: Bool] = [:]
        headers.withEachFieldUTF8(marking: { name, _, isPlain in plain[String(decoding: name, as: UTF8.self)] = isPlain })
        #expect(plain == ["server": true, "etag": false, "x-back": false, "x-tab": false, "x-long": true,
                          "x-quote-late": false, "x-u": false, "x-l": false, "x-empty": true, "x-del": false,
                          "x_under.score-name": true, "abcdefgh": true, "content-security-policy-report-only": false,
                          "x-ctl-l": false, "x-quote-l": false])

        let response = HTTPResponse(statusCode: 200, headers: headers, body: Array("{}".utf8))
        let document = RequestResult.ResultDocument.success(response, value: .text(RawJSON(.object(JSONObject()))), attempts: 1,
                                              decoder: nil, charset: nil, redactedQuery: []).bytes
        guard case .object(let root) = try JSONParser.parse(document), case .object(let written)? = root["headers"] else {
            Issue.record("no headers object in \(String(decoding: document, as: UTF8.self))")
            return
        }
        #expect(written["server"] == .string("nginx/1.22 (Debian)"))
        #expect(written["etag"] == .string("\"v1\""))
        #expect(written["x-back"] == .string("a\\b"))
        #expect(written["x-tab"] == .string("a\tb"))
        #expect(written["x-quote-late"] == .string("0123456789abcdef\""))
        #expect(written["x-u"] == .string("caf\u{e9}"))
        #expect(written["x-l"] == .string("caf\u{e9}"))
        #expect(written["x-empty"] == .string(""))
        #expect(written["x-del"] == .string("a\u{7f}"))
        #expect(written["x_under.score-name"] == .string("v"))
        #expect(written["abcdefgh"] == .string("12345678"))
        #expect(written["content-security-policy-report-only"] == .string("123456789\""))
        #expect(written["x-ctl-l"] == .string("\u{4}\u{88}"))
        #expect(written["x-quote-l"] == .string("\"\u{e9}\""))
        #expect(root["latin1Headers"] == .array([.string("x-l"), .string("x-ctl-l"), .string("x-quote-l")]))
    }

    @Test func writesTheSameJSONFromBytesAsFromStrings() {
        let value = "caf\u{e9} \"q\" \\ \t\u{1}"
        var fromString = JSONWriter()
        fromString.write(string: value)
        var fromBytes = JSONWriter()
        Array(value.utf8).withUnsafeBufferPointer { fromBytes.write(utf8: $0) }
        #expect(fromBytes.bytes == fromString.bytes)
        #expect(String(decoding: fromString.bytes, as: UTF8.self) == #""café \"q\" \\ \t\u0001""#)

        // Bytes that are not UTF-8 become U+FFFD, as String(decoding:) makes them.
        var invalid = JSONWriter()
        [0x61, 0xFF, 0x62].withUnsafeBufferPointer { invalid.write(utf8: $0) }
        #expect(String(decoding: invalid.bytes, as: UTF8.self) == "\"a\u{FFFD}b\"")

        // Object members: plain ones in one pass, the others escaped like any string.
        var members = JSONWriter()
        members.raw("{")
        for (i, (name, value)) in [("a", "1"), ("b\"c", "x"), ("d", "q\"t"), ("e", "caf\u{e9}")].enumerated() {
            _ = Array(name.utf8).withUnsafeBufferPointer { n in
                Array(value.utf8).withUnsafeBufferPointer { v in members.write(member: n, value: v, first: i == 0) }
            }
        }
        members.raw("}")
        #expect(String(decoding: members.bytes, as: UTF8.self) == #"{"a":"1","b\"c":"x","d":"q\"t","e":"café"}"#)

        // A name that is not a token is escaped like any string.
        var token = JSONWriter()
        Array("a\"b".utf8).withUnsafeBufferPointer { token.write(tokenUTF8: $0) }
        #expect(String(decoding: token.bytes, as: UTF8.self) == #""a\"b""#)
    }
}
