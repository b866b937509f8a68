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
        #expect(try JSONParser.parse("0.000") == .double(0))
        #expect(JSON.number(exactly: "18446744073709551615")?.isBigInteger == true)
        #expect(JSON.number(exactly: "1.5e3")?.isBigInteger == false)
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
        func fast(_ text: String) -> Bool { Array(text.utf8).withUnsafeBufferPointer { JSONFastCheck.isValid($0) } }
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
}
