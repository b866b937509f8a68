import Testing
@testable import Netlayer

/// `MIMEType` against the web-platform-tests tables (3-Clause BSD License) of the
/// standards it follows: mimesniff/mime-types/resources/mime-types.json for "parse a
/// MIME type" and its serialization, fetch/content-type/resources/content-types.json
/// for "extract a MIME type" over repeated Content-Type lines; and `TextEncoding`'s
/// labels as the Encoding Standard names them. (The cases are written out here, with
/// the standards' current serialization, `;` without a space.)
@Suite struct MIMETypeTests {
    /// Header bytes of a test's text: code points up to U+00FF are bytes (isomorphic
    /// encoding); one above, which no header byte can be, becomes 0x00, which no rule
    /// of the parser accepts either.
    private static func bytes(_ text: String) -> [UInt8] {
        text.unicodeScalars.map { $0.value <= 0xFF ? UInt8($0.value) : 0 }
    }

    /// (input, serialized output or nil for failure, the encoding its charset names)
    static let parsing: [(String, String?, String?)] = [
        // Basics
        ("text/html;charset=gbk", "text/html;charset=gbk", "GBK"),
        ("TEXT/HTML;CHARSET=GBK", "text/html;charset=GBK", "GBK"),
        // Legacy comment syntax
        ("text/html;charset=gbk(", "text/html;charset=\"gbk(\"", nil),
        ("text/html;x=(;charset=gbk", "text/html;x=\"(\";charset=gbk", "GBK"),
        // Duplicate parameter
        ("text/html;charset=gbk;charset=windows-1255", "text/html;charset=gbk", "GBK"),
        ("text/html;charset=();charset=GBK", "text/html;charset=\"()\"", nil),
        // Spaces
        ("text/html;charset =gbk", "text/html", nil),
        ("text/html ;charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html; charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;charset= gbk", "text/html;charset=\" gbk\"", "GBK"),
        ("text/html;charset= \"gbk\"", "text/html;charset=\" \\\"gbk\\\"\"", nil),
        // Single quotes are a token, not a delimiter
        ("text/html;charset='gbk'", "text/html;charset='gbk'", nil),
        ("text/html;charset='gbk", "text/html;charset='gbk", nil),
        ("text/html;charset=gbk'", "text/html;charset=gbk'", nil),
        ("text/html;charset=';charset=GBK", "text/html;charset='", nil),
        // Invalid parameters
        ("text/html;test;charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;test=;charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;';charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;\";charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html ; ; charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;;;;charset=gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;charset= \"\u{7F};charset=GBK", "text/html;charset=GBK", "GBK"),
        ("text/html;charset=\"\u{7F};charset=foo\";charset=GBK", "text/html;charset=GBK", "GBK"),
        // Double quotes
        ("text/html;charset=\"gbk\"", "text/html;charset=gbk", "GBK"),
        ("text/html;charset=\"gbk", "text/html;charset=gbk", "GBK"),
        ("text/html;charset=gbk\"", "text/html;charset=\"gbk\\\"\"", nil),
        ("text/html;charset=\" gbk\"", "text/html;charset=\" gbk\"", "GBK"),
        ("text/html;charset=\"gbk \"", "text/html;charset=\"gbk \"", "GBK"),
        ("text/html;charset=\"\\ gbk\"", "text/html;charset=\" gbk\"", "GBK"),
        ("text/html;charset=\"\\g\\b\\k\"", "text/html;charset=gbk", "GBK"),
        ("text/html;charset=\"gbk\"x", "text/html;charset=gbk", "GBK"),
        ("text/html;charset=\"\";charset=GBK", "text/html;charset=\"\"", nil),
        ("text/html;charset=\";charset=GBK", "text/html;charset=\";charset=GBK\"", nil),
        // Unexpected code points
        ("text/html;charset={gbk}", "text/html;charset=\"{gbk}\"", nil),
        // Parameter name longer than 127
        ("text/html;" + String(repeating: "0123456789", count: 13) + "=x;charset=gbk",
         "text/html;" + String(repeating: "0123456789", count: 13) + "=x;charset=gbk", "GBK"),
        // type/subtype longer than 127
        (String(repeating: "0123456789", count: 13) + "/" + String(repeating: "0123456789", count: 13),
         String(repeating: "0123456789", count: 13) + "/" + String(repeating: "0123456789", count: 13), nil),
        // End-of-file handling
        ("x/x;test", "x/x", nil),
        ("x/x;test=\"\\", "x/x;test=\"\\\\\"", nil),
        // Whitespace
        ("x/x;x= ", "x/x", nil),
        ("x/x;x=\t", "x/x", nil),
        // Latin1
        ("text/html;test=\u{FF};charset=gbk", "text/html;test=\"\u{FF}\";charset=gbk", "GBK"),
        // >Latin1
        ("x/x;test=\u{FFFD};x=x", "x/x;x=x", nil),
        // Failure
        ("", nil, nil), ("\t", nil, nil), ("/", nil, nil), ("bogus", nil, nil), ("bogus/", nil, nil),
        ("bogus/ ", nil, nil), ("bogus/bogus/;", nil, nil), ("</>", nil, nil), ("(/)", nil, nil),
        ("\u{FF}/\u{FF}", nil, nil), ("text/html(;doesnot=matter", nil, nil), ("{/}", nil, nil),
        ("\u{100}/\u{100}", nil, nil),
    ]

    @Test func parsesAndSerializesAsTheMIMESniffingStandard() {
        for (input, output, encoding) in Self.parsing {
            let parsed = MIMEType(parsing: Self.bytes(input))
            #expect(parsed?.serialized == output, "\(input.debugDescription)")
            let charset = parsed?.parameter("charset").flatMap { TextEncoding(label: $0) }
            #expect(charset?.name == encoding, "\(input.debugDescription)")
        }
    }

    /// The "Valid" group: every token code point in type, subtype and a parameter, and
    /// every quoted-string code point in a quoted value (escaped `"` and `\` included).
    @Test func keepsEveryTokenAndQuotedStringCodePoint() {
        let token = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        let lower = token.lowercased()
        #expect(MIMEType(parsing: Self.bytes("\(token)/\(token);\(token)=\(token)"))?.serialized
                == "\(lower)/\(lower);\(lower)=\(token)")
        var value = "\t"
        for code in UInt32(0x20)...0xFF where code != 0x7F { value.unicodeScalars.append(Unicode.Scalar(code)!) }
        let escaped = value.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
        let parsed = MIMEType(parsing: Self.bytes("x/x;x=\"\(escaped)\""))
        #expect(parsed?.parameter("x") == value)
        #expect(parsed?.serialized == "x/x;x=\"\(escaped)\"")
    }

    /// (Content-Type lines, the MIME type extracted, the encoding of its charset)
    static let extracting: [([String], String?, String?)] = [
        (["", "text/plain"], "text/plain", nil),
        (["text/plain", ""], "text/plain", nil),
        (["text/html", "text/plain"], "text/plain", nil),
        (["text/plain;charset=gbk", "text/html"], "text/html", nil),
        (["text/plain;charset=gbk", "text/html;charset=windows-1254"], "text/html;charset=windows-1254", "windows-1254"),
        (["text/plain;charset=gbk", "text/plain"], "text/plain;charset=gbk", "GBK"),
        (["text/plain;charset=gbk", "text/plain;charset=windows-1252"], "text/plain;charset=windows-1252", "windows-1252"),
        (["text/html;charset=gbk", "text/html;x=\",text/plain"], "text/html;x=\",text/plain\";charset=gbk", "GBK"),
        (["text/html;charset=gbk", "text/plain", "text/html"], "text/html", nil),
        (["text/plain", "*/*"], "text/plain", nil),
        (["text/html", "*/*"], "text/html", nil),
        (["*/*", "text/html"], "text/html", nil),
        (["text/plain", "*/*;charset=gbk"], "text/plain", nil),
        (["text/html", "*/*;charset=gbk"], "text/html", nil),
        (["text/html;x=\"", "text/plain"], "text/html;x=\", text/plain\"", nil),
        (["text/html;\"", "text/plain"], "text/html", nil),
        // beyond the table: no valid type, and a charset carried past a type that repeats one
        (["", "*/*"], nil, nil),
        (["text/plain;charset=gbk", "text/plain;charset=latin1", "text/plain"], "text/plain;charset=gbk", "GBK"),
    ]

    @Test func extractsAsTheFetchStandardFromRepeatedLines() {
        for (lines, output, encoding) in Self.extracting {
            let joined = lines.joined(separator: ", ")  // as repeated fields reach a reader
            let extracted = MIMEType.extract(fromContentType: Self.bytes(joined))
            #expect(extracted?.serialized == output, "\(lines)")
            #expect(extracted?.parameter("charset").flatMap { TextEncoding(label: $0) }?.name == encoding, "\(lines)")
            // The auto decoder's own reading agrees.
            let reading = AutoResponseDecoder.reading(contentType: joined, body: Array("ok".utf8))
            #expect(reading.charset?.name == encoding, "\(lines)")
        }
    }

    @Test func labelsNameTheirEncodingsAsTheEncodingStandard() {
        let cases: [(String, String?)] = [
            ("utf8", "UTF-8"), (" UTF-8\t", "UTF-8"), ("unicode-1-1-utf-8", "UTF-8"), ("latin1", "windows-1252"),
            ("US-ASCII", "windows-1252"), ("iso-8859-1", "windows-1252"), ("iso-8859-9", "windows-1254"),
            ("gb2312", "GBK"), ("GB18030", "gb18030"), ("big5-hkscs", "Big5"), ("x-sjis", "Shift_JIS"),
            ("ks_c_5601-1987", "EUC-KR"), ("utf-16", "UTF-16LE"), ("iso-2022-kr", "replacement"),
            ("koi", "KOI8-R"), ("mac", "macintosh"), ("tis-620", "windows-874"), ("utf-7", nil), ("", nil),
            ("utf-8 x", nil), ("\u{130}so-8859-2", nil),
        ]
        for (label, name) in cases {
            #expect(TextEncoding(label: label)?.name == name, "\(label.debugDescription)")
        }
    }

    @Test func decodesStrictlyWithTheStandardsMappings() {
        func decode(_ label: String, _ bytes: [UInt8]) -> String? { TextEncoding(label: label)!.decode(bytes) }
        #expect(decode("latin1", [0x63, 0xE9, 0x80, 0x81, 0x9D]) == "c\u{E9}\u{20AC}\u{81}\u{9D}")
        #expect(decode("gbk", [0xC4, 0xE3, 0xBA, 0xC3]) == "\u{4F60}\u{597D}")
        #expect(decode("gbk", [0xC4]) == nil)  // cut short
        #expect(decode("shift_jis", [0x93, 0xFA, 0x96, 0x7B]) == "\u{65E5}\u{672C}")
        #expect(decode("iso-2022-jp", [0x1B, 0x24, 0x42, 0x46, 0x7C, 0x4B, 0x5C, 0x1B, 0x28, 0x42]) == "\u{65E5}\u{672C}")
        #expect(decode("utf-16be", [0x00, 0x68, 0x00, 0xE9]) == "h\u{E9}")
        #expect(decode("utf-16le", [0x68, 0x00, 0x00, 0xD8]) == nil)  // a lone surrogate
        #expect(decode("utf-8", [0x61, 0xFF]) == nil)
        #expect(decode("x-user-defined", [0x61, 0x80, 0xFF]) == "a\u{F780}\u{F7FF}")
        #expect(decode("replacement", []) == "" && decode("replacement", [0x61]) == nil)
        let large = [UInt8](repeating: 0xE9, count: 200_000)  // more than one step of output
        #expect(decode("iso-8859-2", large) == String(repeating: "\u{E9}", count: 200_000))
    }
}

private extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
