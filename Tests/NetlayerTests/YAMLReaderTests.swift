import Foundation
import Testing
@testable import Netlayer

@Suite struct YAMLReaderTests {
    private static let openapiFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("openapi")

    private func parse(_ text: String) throws(NetworkError) -> JSON {
        try YAMLReader.parse(Array(text.utf8), what: "test.yaml")
    }

    /// The message of the error parsing `text` raises, or nil when it parses.
    private func failure(_ bytes: [UInt8]) -> String? {
        do {
            _ = try YAMLReader.parse(bytes, what: "test.yaml")
            return nil
        } catch {
            guard case .invalidRequest(let message) = error else { return "not invalidRequest: \(error)" }
            return message
        }
    }

    private func failure(_ text: String) -> String? { failure(Array(text.utf8)) }

    @Test(arguments: [
        ("~", JSON.null), ("null", .null), ("Null", .null), ("NULL", .null), ("", .null),
        ("true", .bool(true)), ("True", .bool(true)), ("TRUE", .bool(true)), ("false", .bool(false)),
        ("FALSE", .bool(false)),
        ("0", .int(0)), ("-17", .int(-17)), ("+17", .int(17)), ("007", .int(7)), ("0x1F", .int(31)),
        ("0o17", .int(15)), ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .number("9223372036854775808")),
        ("0xFFFFFFFFFFFFFFFFFF", .number("4722366482869645213695")),
        ("1.5", .double(1.5)), ("-.5", .double(-0.5)), ("+1.", .double(1)), ("1e3", .double(1000)),
        ("2.5E-3", .double(0.0025)), ("3.14159265358979323846", .number("3.14159265358979323846")),
        // YAML 1.1 forms the core schema leaves as strings
        ("yes", .string("yes")), ("off", .string("off")), ("1_000", .string("1_000")),
        ("2024-01-02", .string("2024-01-02")), ("0x", .string("0x")), ("1.2.3", .string("1.2.3")),
        ("hello world", .string("hello world")), ("e3", .string("e3")), ("-x", .string("-x")),
    ])
    func resolvesPlainScalarsByTheCoreSchema(text: String, expected: JSON) throws {
        #expect(try parse("v: \(text)\n") == .object(["v": expected]), "\(text)")
    }

    @Test func quotedAndTaggedScalars() throws {
        let value = try parse("""
            a: "true"
            b: '12'
            c: !!str 12
            d: !!int "0x10"
            e: !!float 2
            f: !!bool "False"
            g: !!null ''
            h: ! 12
            i: "line\\nbreak \\u00e9"
            j: 'it''s'
            """)
        #expect(value == .object([
            "a": "true", "b": "12", "c": "12", "d": .int(16), "e": .double(2), "f": false, "g": nil,
            "h": "12", "i": "line\nbreak é", "j": "it's",
        ]))
    }

    @Test func blockScalarsKeepOrFoldLines() throws {
        let value = try parse("""
            literal: |
              one
                two
              three
            folded: >
              one
              two

              three
            stripped: |-
              text
            kept: |+
              text

            end: 1
            """)
        #expect(value["literal"] == "one\n  two\nthree\n")
        #expect(value["folded"] == "one two\nthree\n")
        #expect(value["stripped"] == "text")
        #expect(value["kept"] == "text\n\n")
        #expect(value["end"] == .int(1))
    }

    @Test func flowCollectionsKeepOrder() throws {
        let value = try parse(#"{z: [1, two, {x: null}], a: {}, m: [], "q": [ "s", 'single' ]}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m", "q"])
        #expect(value == .object([
            "z": [1, "two", ["x": nil]], "a": .object([:]), "m": [], "q": ["s", "single"],
        ]))
    }

    @Test func keysAreTheirTextAsWritten() throws {
        let value = try parse("200: ok\n'404': missing\n~: tilde\n1.50: price\n")
        #expect(value.objectValue?.keys == ["200", "404", "~", "1.50"])
    }

    @Test func anchorsAliasesAndMergeKeys() throws {
        let value = try parse("""
            base: &base {a: 1, b: 2}
            same: *base
            list: &l [x, &s scalar]
            again: [*l, *s]
            merged:
              <<: *base
              b: 3
              c: 4
            many:
              <<: [{k: first, only1: 1}, {k: second, only2: 2}]
            "<<": a quoted key is no merge
            """)
        #expect(value["same"] == value["base"])
        #expect(value["again"] == [["x", "scalar"], "scalar"])
        #expect(value["merged"] == ["a": 1, "b": 3, "c": 4])
        #expect(value["merged"]?.objectValue?.keys == ["a", "b", "c"])
        #expect(value["many"] == ["k": "first", "only2": 2, "only1": 1])
        #expect(value["<<"] == "a quoted key is no merge")
        #expect(failure("a: *nowhere")?.contains("line 1 column 4: alias *nowhere names no anchor") == true)
        #expect(failure("a: &r [1, *r]")?.contains("alias *r names no anchor") == true)
        #expect(failure("a: {<<: 5}")?.contains("merge key << needs a mapping") == true)
    }

    @Test func refusesAnAliasBombFast() {
        var text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for i in 1...9 {
            let previous = Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ")
            text += "a\(i): &a\(i) [\(previous)]\n"
        }
        let clock = ContinuousClock()
        var message: String?
        let elapsed = clock.measure { message = failure(text) }
        #expect(message?.contains("expands to more than 100000 values") == true, "\(message ?? "parsed")")
        // a4 is the first node past the limit: 111 111 values
        #expect(message?.hasPrefix("test.yaml: line 5 column") == true, "\(message ?? "parsed")")
        #expect(elapsed < .seconds(1))
        // The same aliases, fewer of them, are fine.
        #expect(failure(text.split(separator: "\n").prefix(4).joined(separator: "\n")) == nil)
    }

    @Test func refusesABombOfLongStringsByItsSizeAsJSON() {
        // 64 aliases of 100 000 characters: 6.4 MB as JSON from 100 KB of text, and few
        // values, so the value count alone never sees it.
        let text = "a: &a " + String(repeating: "x", count: 100_000) + "\nb: ["
            + Array(repeating: "*a", count: 64).joined(separator: ", ") + "]\n"
        let clock = ContinuousClock()
        var message: String?
        let elapsed = clock.measure { message = failure(text) }
        #expect(message?.hasPrefix("test.yaml: line 2 column") == true, "\(message ?? "parsed")")
        #expect(message?.contains("expands to more than 4194304 bytes as JSON text") == true, "\(message ?? "parsed")")
        #expect(elapsed < .seconds(1))
        // The bound grows with the text (32 times it): a long text without aliases is fine.
        #expect(failure("a: " + String(repeating: "y", count: 5_000_000) + "\n") == nil)
        #expect(YAMLReader.maxBytes(inputSize: 1_000_000, maxBytes: 64 << 20) == 32_000_000)
        #expect(YAMLReader.maxBytes(inputSize: 10_000_000, maxBytes: 64 << 20) == 64 << 20)
    }

    @Test func refusesDuplicateKeysNamingKeyAndLine() {
        #expect(failure("a: 1\nb:\n  c: 1\n  c: 2\n") == "test.yaml: line 4 column 3: duplicate key 'c'")
        #expect(failure("{x: 1, x: 1}") == "test.yaml: line 1 column 8: duplicate key 'x'")
        #expect(failure("? [a, b]\n: 1\n")?.contains("a mapping key must be a scalar") == true)
    }

    @Test func refusesASecondDocument() {
        #expect(failure("a: 1\n---\nb: 2\n") == "test.yaml: line 2 column 1: a second YAML document in the stream ('---'); the text must hold one document")
        #expect(failure("--- a\n...\n") == nil)
        #expect(failure("# only a comment\n")?.contains("no YAML document") == true)
        #expect(failure("")?.contains("no YAML document") == true)
    }

    @Test func syntaxErrorsNameLineAndColumn() {
        #expect(failure("a: 1\nb: [1, 2\nc: 3\n")?.hasPrefix("test.yaml: line 3 column 2: ") == true)
        let message = failure("a:\n  b: 1\n c: 2\n")
        #expect(message?.hasPrefix("test.yaml: line 3 column 2: did not find expected key") == true, "\(message ?? "parsed")")
        #expect(failure("a: \"unterminated\n")?.contains("line 2") == true)
        #expect(failure("a: !!binary aGk=") == "test.yaml: line 1 column 4: unsupported tag !!binary (only the core schema's !!str, !!int, !!float, !!bool, !!null, !!map and !!seq have a JSON value)")
        #expect(failure("a: !custom [1]")?.contains("unsupported tag !custom on a sequence") == true)
        #expect(failure("a: !!int 1.5") == "test.yaml: line 1 column 4: '1.5' is not a valid !!int")
        #expect(failure("a:\n  b: .inf\n") == "test.yaml: line 2 column 6: .inf is a number JSON cannot carry (quote it to keep it as text)")
        #expect(failure("a: -.Inf")?.contains("-.Inf is a number JSON cannot carry") == true)
        #expect(failure("a: .NaN")?.contains(".NaN is a number JSON cannot carry") == true)
        #expect(failure("a: 1e400")?.contains("1e400 is beyond the range") == true)
        #expect((try? parse("a: '.inf'"))?["a"] == ".inf")
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(failure(deep)?.contains("nesting deeper than 256 levels") == true)
    }

    @Test func encodings() throws {
        #expect(try YAMLReader.parse([0xEF, 0xBB, 0xBF] + Array("a: é\n".utf8), what: "bom.yaml") == ["a": "é"])
        let utf16: [UInt8] = [0xFF, 0xFE] + "a: é\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(try YAMLReader.parse(utf16, what: "utf16.yaml") == ["a": "é"])
        let latin1 = Array("a: 1\nb: caf".utf8) + [0xE9] + Array("\n".utf8)
        let message = failure(latin1)
        #expect(failure([0xFF, 0xFE, 0x61])?.contains("UTF-16") == true)
        #expect(message?.hasPrefix("test.yaml: line 2 column 7: incomplete UTF-8 octet sequence") == true, "\(message ?? "parsed")")
        #expect(message?.contains("at byte 11") == true, "\(message ?? "parsed")")
        #expect(try parse("a: \"nul\\0here\"")["a"] == "nul\u{0}here")
    }

    /// The Petstore's YAML, read here, equals its JSON as PyYAML (a parser nobody on the
    /// project wrote) converted it; Tests/openapi/README.md says how.
    @Test func petstoreMatchesPyYAMLsReading() throws {
        let yaml = try Array(Data(contentsOf: Self.openapiFolder.appendingPathComponent("petstore-openapi.yaml")))
        let json = try Array(Data(contentsOf: Self.openapiFolder.appendingPathComponent("petstore-openapi.json")))
        let fromYAML = try YAMLReader.parse(yaml, what: "openapi file 'petstore-openapi.yaml'")
        let fromJSON = try JSONParser.parse(json)
        #expect(fromYAML == fromJSON)
        #expect(fromYAML["paths"]?["/pet/{petId}"]?["get"]?["operationId"] == "getPetById")
        // JSON is YAML too: the JSON text read as YAML is the same value.
        #expect(try YAMLReader.parse(json, what: "petstore-openapi.json") == fromJSON)
    }
}
