import Testing
@testable import Netlayer

@Suite struct JSONTests {
    /// Every ASCII byte at every place of strings longer than the eight bytes the
    /// writer checks at once: written as JSON, each parses back to itself.
    @Test func stringsWithAnyASCIIByteAnywhereRoundTrip() throws {
        for length in [1, 7, 8, 9, 16, 17, 23] {
            for position in 0..<length {
                for byte in UInt8(0)..<0x80 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    let written = JSONWriter.serialize(.string(text))
                    #expect(try JSONParser.parse(written) == .string(text), "byte \(byte) at \(position) of \(length)")
                }
            }
        }
    }

    @Test func parsesAndWritesEveryKindOfValueRoundTrip() throws {
        let text = #"{"a":1,"b":-2.5,"c":"x\"y\\z\n","d":[true,false,null],"e":{"f":[]},"g":12345678901234}"#
        let value = try JSONParser.parse(text)
        #expect(value["a"] == .int(1))
        #expect(value["b"] == .double(-2.5))
        #expect(value["c"] == .string("x\"y\\z\n"))
        #expect(String(decoding: JSONWriter.serialize(value), as: UTF8.self) == text)
    }

    @Test(arguments: [
        "18446744073709551616", "-99999999999999999999999", "3.14159265358979323846264338327950288",
        "-1E-400", "0.30000000000000004", "12345678901234567.8",
    ])
    func keepsTheTextOfNumbersNoNativeTypeCarries(_ text: String) throws {
        let value = try JSONParser.parse(text)
        #expect(value == .number(text))
        #expect(String(decoding: JSONWriter.serialize(.array([value])), as: UTF8.self) == "[\(text)]")
        #expect(value.typeName == "a number")
    }

    @Test func numbersNativeTypesCarryStayNative() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(.max))
        #expect(try JSONParser.parse("1.5") == .double(1.5))
        #expect(try JSONParser.parse("0.5") == .double(0.5))
    }

    @Test func decimalsTheWriterWouldSpellOtherwiseKeepTheirText() throws {
        for text in ["1.50", "-0.0", "0.000", "2e0", "1E+2", "1.0", "-0"] {
            let value = try JSONParser.parse(text)
            #expect(value == .number(text))
            #expect(String(decoding: JSONWriter.serialize(value), as: UTF8.self) == text)
        }
        #expect(try JSONParser.parse("1.0").intValue == 1)
        #expect(try JSONParser.parse("1e2").intValue == 100)
        #expect(try JSONParser.parse("1.5e0").intValue == nil)
        #expect(try JSONParser.parse("1e30").intValue == nil)
        #expect(try JSONParser.parse("1.50").doubleValue == 1.5)
        #expect(JSON.number(exactly: "18446744073709551615")?.isBigInteger == true)
        #expect(JSON.number(exactly: "1.5e3")?.isBigInteger == false)
        #expect(try JSONParser.parse("-0").isBigInteger == false && JSONParser.parse("-0").intValue == 0)
        #expect(String(decoding: JSONWriter.serialize(try JSONParser.parse("[-0,1E2]")), as: UTF8.self) == "[-0,1E2]")
        #expect(JSON.number(exactly: "12a") == nil)
        // UInt64.max is not a Double: it rounds to 2^64.
        #expect(JSON.number(exactly: "18446744073709551615")?.doubleValue == 18446744073709551616)
    }

    @Test func keepsMemberOrder() throws {
        let value = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
    }

    @Test func decodesUnicodeEscapesAndSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""\u00e9\ud83d\ude00""#) == .string("é😀"))
        #expect(throws: JSONParseError.self) { try JSONParser.parse(#""\ud83d""#) }
    }

    @Test(arguments: [
        ("", 0), ("{", 1), ("[1,]", 3), ("{\"a\" 1}", 5), ("tru", 0), ("01", 0), ("1 2", 2),
        ("{\"a\":1,\"a\":2}", 7), ("\"a\u{01}\"", 2), ("[1] x", 4),
    ])
    func rejectsMalformedTextWithTheByteOffset(text: String, offset: Int) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.offset == offset, "\(text): \(error)")
        }
    }

    @Test func reportsTheOffsetOfInvalidUTF8() {
        let bytes: [UInt8] = Array(#"{"k":"ab"#.utf8) + [0xFF] + Array(#""}"#.utf8)
        do {
            _ = try JSONParser.parse(bytes)
            Issue.record("parsed invalid UTF-8")
        } catch {
            #expect(error.offset == 8)
            #expect(error.reason.contains("UTF-8"))
        }
    }

    @Test func fastCheckAcceptsOnlyWhatTheParserAccepts() throws {
        func fast(_ text: String) -> Bool { Array(text.utf8).withUnsafeBufferPointer { JSONParser.JSONFastCheck.isValid($0) } }
        let plain = [#"{"id":1,"title":"Dune","year":2021,"tags":["sf","novel"],"rating":8.1}"#,
                     #"[{"a":{"a":{"a":[]}}},{"a":1},"x\n",-0.5,true,false,null]"#, " [ ] ", "\"\""]
        for text in plain {
            #expect(fast(text), "\(text)")
            #expect((try? JSONParser.parse(text)) != nil)
        }
        for text in [#"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":2}}"#, "[1,]", "01", "[1] x", #"{"a"}"#, "[", ""] {
            #expect(!fast(text), "\(text)")
        }
        // A key may repeat in sibling or nested objects, only not within one.
        #expect(fast(#"[{"a":1},{"a":2},{"a":{"a":3}}]"#))
        // Keys of open objects past the check's room go to the parser: not "valid"
        // here, though the parser accepts them.
        let wide = "{" + (0..<100).map { #""k\#($0)":1"# }.joined(separator: ",") + "}"
        #expect(!fast(wide))
        #expect((try? JSONParser.parse(wide)) != nil)
        let deepKeys = (0..<40).map { #"{"a\#($0)":1,"b\#($0)":1,"c\#($0)":1,"d":"# }.joined()
            + "0" + String(repeating: "}", count: 40)
        #expect(!fast(deepKeys))
        #expect((try? JSONParser.parse(deepKeys)) != nil)
        // Keys of closed objects do not count.
        let manyClosed = "[" + (0..<300).map { #"{"a\#($0)":1,"b":2}"# }.joined(separator: ",") + "]"
        #expect(fast(manyClosed))
    }

    @Test func parsesAnObjectOfManyMembersInLinearTimeAndStillFindsDuplicates() throws {
        let members = (0..<200_000).map { "\"k\($0)\": \($0)" }
        let clock = ContinuousClock()
        var parsed: JSON?
        let elapsed = try clock.measure { parsed = try JSONParser.parse("{" + members.joined(separator: ",") + "}") }
        #expect(parsed?.objectValue?.count == 200_000)
        #expect(elapsed < .seconds(3))
        let duplicate = "{" + members.prefix(40).joined(separator: ",") + ", \"k5\": 1}"
        #expect(throws: JSONParseError.self) { try JSONParser.parse(duplicate) }
    }

    @Test func textSizeIsWhatTheWriterWritesAndStopsAtItsLimit() {
        let value: JSON = ["a\"\\\n\u{1}é": ["x", 12, -7, true, false, nil, ["k": "v\t"]],
                           "n": .number("123456789012345678901234567890"), "m": .int(.min)]
        let written = JSONWriter.serialize(value).count
        #expect(value.textSize(limit: .max) == written)
        #expect(value.textSize(limit: written) == written)
        #expect(value.textSize(limit: written - 1) == nil)
        for double in [-2.2250738585072014e-308, 0.1, 1e300, -0.0] {
            #expect(JSON.double(double).textSize(limit: .max)! >= JSONWriter.serialize(.double(double)).count)
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
    }

    @Test func writesControlCharactersAsEscapes() {
        let out = String(decoding: JSONWriter.serialize(.string("a\u{01}b\tc")), as: UTF8.self)
        #expect(out == #""a\u0001b\tc""#)
    }

    @Test func keyPathsWalkObjectsAndArraysAndNameTheMissingPart() throws {
        let value = try JSONParser.parse(#"{"data":{"results":[{"title":"Dune"}]}}"#)
        #expect(try value.value(atKeyPath: "data.results.0.title") == "Dune")
        #expect(throws: DataTransferError.self) { try value.value(atKeyPath: "data.results.3") }
        do {
            _ = try value.value(atKeyPath: "data.missing.x")
        } catch {
            #expect(error.kind == .parsing)
            #expect(error.message.contains("'missing'"))
        }
    }

    // The fast check, the parser and the writer walk bytes with pointers, eight at a
    // time: the edges of those walks (the 8-byte steps, the end of the text, lengths
    // and digit counts at their limits) against what the parser decides.

    private func fast(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { JSONParser.JSONFastCheck.isValid($0) } }
    private func fast(_ text: String) -> Bool { fast(Array(text.utf8)) }
    private func parses(_ text: String) -> Bool { (try? JSONParser.parse(text)) != nil }

    @Test func fastCheckEdges() {
        // Escapes: the simple ones are checked, \u goes to the parser.
        for escape in [#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#] {
            #expect(fast("[\"a\(escape)b\"]"), "\(escape)")
            #expect(fast("[\"\(escape)\"]"), "\(escape)")
        }
        for text in [#"["\u0041"]"#, #"["\x"]"#, #"["\"]"#, #"["abc\"]"#, #"{"a\nb":1}"#] {
            #expect(!fast(text), "\(text)")
        }
        // At most 15 digits, integer and fraction together; no exponent.
        for (text, accepted) in [("123456789012345", true), ("1234567890123456", false), ("-123456789012345", true),
                                 ("1.23456789012345", true), ("1.234567890123456", false), ("0.00000000000001", true),
                                 ("0.000000000000001", false), ("1e5", false), ("1E5", false), ("1.5e3", false),
                                 ("-0", true), ("-", false), ("0.", false), (".5", false), ("01", false), ("-01", false)] {
            #expect(fast(text) == accepted, "\(text)")
            if accepted { #expect(parses(text), "\(text)") }
        }
        // Duplicate keys, also ones of equal length that differ only inside, or only at the end.
        let long = String(repeating: "k", count: 40)
        for (text, accepted) in [(#"{"abcdefghij":1,"abcdefghik":2}"#, true), (#"{"abcdefghij":1,"abcdefghij":2}"#, false),
                                 (#"{"abXcd":1,"abYcd":2}"#, true), (#"{"abXcd":1,"abXcd":2}"#, false),
                                 ("{\"\(long)1\":1,\"\(long)2\":2}", true), ("{\"\(long)1\":1,\"\(long)2\":2,\"\(long)1\":3}", false),
                                 (#"{"":1,"":2}"#, false), (#"{"":1,"a":2}"#, true),
                                 // Lengths 1 and 65 share a bit of the length filter, and are still compared.
                                 ("{\"a\":1,\"\(String(repeating: "a", count: 65))\":2}", true),
                                 ("{\"\(String(repeating: "a", count: 65))\":1,\"\(String(repeating: "a", count: 65))\":2}", false)] {
            #expect(fast(text) == accepted, "\(text)")
            #expect(parses(text) == accepted, "\(text)")
        }
        // Nesting up to the parser's limit, not past it.
        for depth in [255, 256, 257] {
            let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let inner = String(repeating: "[", count: depth - 1) + #"{"a":1}"# + String(repeating: "]", count: depth - 1)
            #expect(fast(arrays) == (depth <= 256))
            #expect(fast(inner) == (depth <= 256))
            #expect(parses(arrays) == (depth <= 256))
        }
        // Keys of the open objects: room for 128, then the parser decides.
        for depth in [128, 129] {
            let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            #expect(fast(objects) == (depth <= 128))
            #expect(parses(objects))
        }
        // Whitespace wherever it may be.
        #expect(fast(" \t\r\n{ \"a\" :\n[ 1 ,\t\"x\" , true , false , null , { } , [ ] ] , \"b\" : -0.5 }\r\n "))
        // Bytes from 0x80 up (valid UTF-8 or not), and control characters, go to the parser.
        for bytes: [UInt8] in [[0x22, 0xC3, 0xA9, 0x22], [0x22, 0xFF, 0x22], [0x22, 0x61, 0x01, 0x22], [0x22, 0x7F, 0x22]] {
            let expected = bytes.contains(0x7F)  // DEL is plain ASCII in a string
            #expect(fast(bytes) == expected, "\(bytes)")
        }
    }

    @Test func fastCheckFindsEveryStringEndAroundTheEightByteSteps() throws {
        // A special byte at each place of strings around eight bytes long, with the
        // text ending right after the string or later.
        for length in 0...20 {
            for special: UInt8 in [0x22, 0x5C, 0x01, 0x1F, 0x7F, 0x80, 0xE9] {
                for position in 0..<max(length, 1) {
                    for tail in ["", "]", "  ]"] {
                        var bytes = Array("[\"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: length)
                        if length > 0 { bytes[2 + position] = special }
                        bytes += Array("\"".utf8) + Array(tail.utf8)
                        let accepted = fast(bytes)
                        let parsed = (try? JSONParser.parse(bytes)) != nil
                        #expect(!accepted || parsed, "\(bytes)")
                        // Plain ASCII (DEL included) and a whole text: the check accepts what the parser does.
                        if length == 0 || special == 0x7F || special == 0x01 || special == 0x1F {
                            #expect(accepted == parsed, "\(bytes)")
                        }
                    }
                }
            }
        }
        // Every prefix of a valid text is refused by both (truncated input).
        let text = Array(#"{"id":1,"title":"Dune and more","year":2021,"tags":["sf","novel"],"rating":8.1,"ok":true,"n":null}"#.utf8)
        #expect(fast(text))
        for count in 0..<text.count {
            let prefix = Array(text.prefix(count))
            #expect(!fast(prefix), "\(count)")
            #expect((try? JSONParser.parse(prefix)) == nil, "\(count)")
        }
    }

    @Test func parsesStringsOfEveryShortLengthAnywhereInTheText() throws {
        // Strings of up to 15 ASCII bytes are built as small strings directly: the same
        // value and the same bits as String(decoding:), wherever they sit in the text.
        for length in 0...20 {
            let content = String((0..<length).map { Character(UnicodeScalar(UInt8(0x20 + ($0 * 7 + length) % 0x5F))) })
                .replacingOccurrences(of: "\\", with: "a").replacingOccurrences(of: "\"", with: "b")
            for text in ["\"\(content)\"", "[\"\(content)\"]", "[\"\(content)\",        1]", "{\"\(content)\":1}"] {
                let value = try JSONParser.parse(text)
                let string = value.stringValue ?? value.arrayValue?.first?.stringValue ?? value.objectValue?.keys.first
                #expect(string == content, "\(text)")
                #expect(string?.utf8.count == length)
                if let string {
                    let expected = String(decoding: Array(content.utf8), as: UTF8.self)
                    if length <= 15 {  // small strings: equal bits (longer ones are on the heap)
                        #expect(unsafeBitCast(string, to: (UInt64, UInt64).self) == unsafeBitCast(expected, to: (UInt64, UInt64).self))
                    }
                    #expect(string.hashValue == expected.hashValue)
                }
            }
        }
        // Escapes and non-ASCII after a plain start, and the offsets of errors in strings.
        #expect(try JSONParser.parse(#""abcdefghij\n\u00e9é""#) == .string("abcdefghij\né\u{e9}"))
        for (text, offset) in [("\"abcdefghij\u{01}\"", 11), ("\"abcdefghij", 0), (#""abcdefghij\q""#, 12),
                               (#"["abcdefghijklmnop"#, 1)] {
            do {
                _ = try JSONParser.parse(text)
                Issue.record("parsed \(text)")
            } catch {
                #expect(error.offset == offset, "\(text): \(error)")
            }
        }
    }

    @Test func writesTimingsAsThousandthsRoundedHalfAwayFromZero() {
        // What `write(thousandths:)` did with `rounded()` and divisions.
        func reference(_ value: Double) -> String {
            let scaled = UInt64((value * 1000).rounded())
            let fraction = scaled % 1000
            var text = String(scaled / 1000)
            if fraction != 0 {
                text += "." + String(String(fraction + 1000).dropFirst())
                while text.hasSuffix("0") { text.removeLast() }
            }
            return text
        }
        var values: [Double] = [0, 0.0004, 0.0005, 0.0015, 0.0025, 0.4995, 0.49999999999999994, 0.5, 1, 1.0005, 12.5,
                                0.692, 9.9995, 10, 999.9995, 123456.789, 999_999_999_999.9, 4_503_599_627.3705]
        for i in 0..<2000 { values.append(Double(i) * 0.0005 + Double(i % 7) * 1.25) }
        for value in values {
            var writer = JSONWriter()
            writer.write(thousandths: value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == reference(value), "\(value)")
        }
        for value in [-1, 1e12, .nan, .infinity] {
            var writer = JSONWriter()
            writer.write(thousandths: value)
            #expect(writer.bytes == JSONWriter.serialize(.double(value)), "\(value)")
        }
    }

    @Test func writesIntegersAndLiteralsOfEveryLength() {
        for value: UInt64 in [0, 9, 10, 99, 100, 101, 999, 1000, 65535, 1 << 32, 9_999_999_999_999_999_999, .max] {
            var writer = JSONWriter(capacity: 1)
            writer.write(uint: value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
        }
        let literals: [StaticString] = ["", "{", "[]", "nul", "null", "false", ",\"url\":", ",\"value\":", "{\"ok\":true,\"status\":",
                                        ",\"fromCache\":false,\"attempts\":", "0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef!"]
        var writer = JSONWriter(capacity: 1)  // growing along the way
        var expected = ""
        for literal in literals + literals.reversed() {
            writer.raw(literal)
            expected += literal.description
            #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        }
    }

    @Test func writesHeaderNamesAndValuesAsTheyAreOrEscaped() {
        // The byte-class table is the tchar rule and the plain-ASCII rule.
        for byte in 0...255 {
            let b = UInt8(byte)
            let plain = b >= 0x20 && b < 0x7F && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\")
            #expect(JSONWriter.byteClass[byte] == (isHTTPTokenByte(b) ? 0x30 : plain ? 0x31 : 0x32), "\(byte)")
        }
        // Names around eight bytes with a byte of each kind at each place: as a token,
        // else as an escaped string; values likewise, only escaped.
        for length in 1...20 {
            for position in 0..<length {
                for byte: UInt8 in [UInt8(ascii: "a"), UInt8(ascii: "Z"), UInt8(ascii: "7"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                                    UInt8(ascii: " "), UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x01, 0x7F, 0xC3] {
                    var name = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    name[position] = byte
                    let value = name
                    var writer = JSONWriter()
                    let written = name.withUnsafeBufferPointer { n in
                        value.withUnsafeBufferPointer { writer.write(member: n, value: $0, first: false) }
                    }
                    guard let text = String(validating: value, as: UTF8.self) else {
                        #expect(!written)
                        continue
                    }
                    #expect(written)
                    let quoted = String(decoding: JSONWriter.serialize(.string(text)), as: UTF8.self)
                    #expect(String(decoding: writer.bytes, as: UTF8.self) == ",\(quoted):\(quoted)", "\(name)")
                }
            }
        }
    }
}
