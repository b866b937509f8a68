import CYAML
import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Reads a YAML text, such as an OpenAPI document written in YAML, as a JSON value.
///
/// libyaml parses the text (UTF-8, or UTF-16 with a byte order mark) and
/// `YAMLTreeBuilder` turns its events into JSON: mappings are objects in document
/// order (a duplicate key is an error), sequences arrays, plain scalars resolved by
/// the YAML 1.2 core schema (`YAMLScalar`), quoted and block scalars strings. Anchors
/// and aliases work, as do YAML 1.1 merge keys (`<<`); `.inf` and `.nan`, which JSON
/// cannot write, are errors. Every error is `invalidRequest` naming the source, line
/// and column.
package enum YAMLReader {
    /// How many values (scalars and collections, aliases counted as what they repeat)
    /// a text of `inputSize` bytes may produce: 100 per byte, at least 100 000 and at
    /// most 10 million. A real document stays far below; nested aliases do not.
    package static func maxValues(inputSize: Int) -> Int {
        max(100_000, min(10_000_000, inputSize.multipliedReportingOverflow(by: 100).partialValue))
    }

    /// How large, as JSON text (`JSON.textSize`, aliases expanded each time they are
    /// used), the value of a text of `inputSize` bytes may be: 32 times the text, at
    /// least 4 MiB, at most `maxBytes`. Without aliases a text's value is at most about
    /// twice its size; a few aliases of a long string are what goes past.
    package static func maxBytes(inputSize: Int, maxBytes: Int) -> Int {
        min(maxBytes, max(4 << 20, inputSize.multipliedReportingOverflow(by: 32).partialValue))
    }

    /// The YAML text `bytes` (one document) as a JSON value; `what` names the source in
    /// errors ("openapi file 'petstore.yaml'"). The value may be at most
    /// `maxBytes(inputSize:maxBytes:)` bytes as JSON text.
    package static func parse(_ bytes: [UInt8], what: String, maxBytes: Int = 64 << 20) throws(NetworkError) -> JSON {
        guard !bytes.isEmpty else { throw NetworkError.invalidRequest("\(what): no YAML document (the text is empty)") }
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) != 0 else {
            throw NetworkError.invalidRequest("\(what): out of memory starting the YAML parser")
        }
        defer { yaml_parser_delete(parser) }
        var builder = YAMLTreeBuilder(what: what, maxValues: maxValues(inputSize: bytes.count),
                                      maxBytes: Self.maxBytes(inputSize: bytes.count, maxBytes: maxBytes),
                                      maxDepth: JSONParser.maxDepth)
        let result: Result<JSON, NetworkError> = bytes.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
            do throws(NetworkError) {
                return .success(try read(parser, into: &builder, bytes: buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Feeds every event of the stream to `builder`; the one document's value.
    private static func read(_ parser: UnsafeMutablePointer<yaml_parser_t>, into builder: inout YAMLTreeBuilder,
                             bytes: UnsafeBufferPointer<UInt8>) throws(NetworkError) -> JSON {
        var event = yaml_event_t()
        var documents = 0
        while true {
            guard yaml_parser_parse(parser, &event) != 0 else {
                throw parserError(parser.pointee, what: builder.what, bytes: bytes)
            }
            defer { yaml_event_delete(&event) }
            let mark = YAMLMark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    throw builder.error("a second YAML document in the stream ('---'); the text must hold one document", at: mark)
                }
            case YAML_STREAM_END_EVENT:
                guard let root = builder.root else {
                    throw NetworkError.invalidRequest("\(builder.what): no YAML document (only comments or blank lines)")
                }
                return root
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: s.value, count: Int(s.length)), as: UTF8.self)
                try builder.scalar(text, tag: string(s.tag), plain: s.style == YAML_PLAIN_SCALAR_STYLE,
                                   anchor: string(s.anchor), at: mark)
            case YAML_ALIAS_EVENT:
                try builder.alias(string(event.data.alias.anchor) ?? "", at: mark)
            case YAML_SEQUENCE_START_EVENT:
                let s = event.data.sequence_start
                try builder.startCollection(mapping: false, tag: string(s.tag), anchor: string(s.anchor), at: mark)
            case YAML_MAPPING_START_EVENT:
                let m = event.data.mapping_start
                try builder.startCollection(mapping: true, tag: string(m.tag), anchor: string(m.anchor), at: mark)
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                try builder.endCollection(at: mark)
            default:
                break  // stream start, document end
            }
        }
    }

    private static func string(_ chars: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        chars.map { String(cString: $0) }
    }

    /// libyaml's complaint, where it found it and, when it says, what it was reading.
    private static func parserError(_ p: yaml_parser_t, what: String, bytes: UnsafeBufferPointer<UInt8>) -> NetworkError {
        let problem = p.problem.map { String(cString: $0) } ?? "invalid YAML"
        switch p.error {
        case YAML_MEMORY_ERROR:
            return .invalidRequest("\(what): out of memory reading YAML")
        case YAML_READER_ERROR:
            // Bad encoding: libyaml gives a byte offset, not a line.
            let offset = min(Int(p.problem_offset), bytes.count)
            let before = UnsafeBufferPointer(rebasing: bytes[..<offset])
            let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
            let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            let value = p.problem_value == -1 ? "" : " (byte 0x\(String(Int(p.problem_value), radix: 16, uppercase: true)))"
            return .invalidRequest("\(what): line \(line) column \(column): \(problem)\(value) at byte \(offset)")
        default:
            var message = "\(what): line \(p.problem_mark.line + 1) column \(p.problem_mark.column + 1): \(problem)"
            if let context = p.context.map({ String(cString: $0) }) {
                message += " (\(context) at line \(p.context_mark.line + 1) column \(p.context_mark.column + 1))"
            }
            return .invalidRequest(message)
        }
    }
}
