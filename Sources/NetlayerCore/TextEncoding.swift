import Glibc

/// A character encoding of the WHATWG Encoding Standard, found by one of its labels
/// (a `charset` parameter's value), and a strict decoder for it.
///
/// Swift on Linux decodes only the Unicode encodings without Foundation's ICU (which the
/// library does not link: its data alone is tens of megabytes), so the legacy encodings
/// are glibc's iconv converters, part of the C library every Linux system has. Where the
/// Encoding Standard and iconv read a byte differently, the standard wins: its labels
/// `latin1` and `us-ascii` are windows-1252, whose five bytes iconv leaves undefined are
/// the C1 controls of the same number; GBK is read by the gb18030 decoder, Big5 with
/// HKSCS, Shift_JIS as Windows-31J and EUC-KR as Windows-949, as browsers read them.
public struct TextEncoding: Sendable, Hashable {
    /// The encoding's name in the Encoding Standard: `UTF-8`, `windows-1252`, `GBK`,
    /// `Shift_JIS`, `ISO-8859-2`, ...
    public let name: String
    private let converter: Converter

    private enum Converter: Sendable, Hashable {
        case utf8
        case iconv(String)
        /// iconv's CP1252, with the five bytes it has no character for read as C1 controls.
        case windows1252
        /// Decodes any non-empty input to an error: labels of encodings browsers refuse.
        case replacement
        /// Bytes 0x80 to 0xFF as U+F780 to U+F7FF.
        case userDefined
    }

    public static let utf8 = TextEncoding(name: "UTF-8", converter: .utf8)

    private init(name: String, converter: Converter) {
        self.name = name
        self.converter = converter
    }

    /// The encoding `label` names ("get an encoding": ASCII whitespace around it
    /// ignored, ASCII case too); nil for a label the standard does not know.
    public init?(label: String) {
        var label = label
        let found = label.withUTF8 { Self.find(label: $0) }
        guard let found else { return nil }
        self = found
    }

    /// `init(label:)` on bytes (a header parameter as it came).
    static func find(label: UnsafeBufferPointer<UInt8>) -> TextEncoding? {
        var start = 0, end = label.count
        while start < end, isASCIIWhitespace(label[start]) { start += 1 }
        while end > start, isASCIIWhitespace(label[end - 1]) { end -= 1 }
        let trimmed = UnsafeBufferPointer(rebasing: label[start..<end])
        // The label nearly every server sends, without a string made for it.
        if HTTPResponse.MIMEScan.equalsIgnoringCase(trimmed, "utf-8") { return .utf8 }
        guard trimmed.count <= 32, trimmed.allSatisfy({ $0 < 0x80 }) else { return nil }
        let key = String(decoding: trimmed.map(HTTPResponse.MIMEScan.lowercased), as: UTF8.self)
        guard let name = TextEncoding.names[key] else { return nil }
        return TextEncoding(standardName: name)
    }

    /// The encoding of one of the standard's names.
    private init(standardName name: String) {
        self.name = name
        switch name {
        case "UTF-8": converter = .utf8
        case "windows-1252": converter = .windows1252
        case "replacement": converter = .replacement
        case "x-user-defined": converter = .userDefined
        default: converter = .iconv(Self.iconvNames[name] ?? name)
        }
    }

    /// `bytes` as text, or nil when they are not valid in this encoding (an undefined
    /// byte, a sequence cut short): the caller keeps such a body as bytes. Takes time
    /// and memory in proportion to the bytes.
    /// The encoding a byte order mark at the start of `bytes` names (UTF-8, UTF-16BE,
    /// UTF-16LE), which the Encoding Standard's "decode" takes over any label; nil
    /// without one.
    public static func byteOrderMark(of bytes: [UInt8]) -> TextEncoding? {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { return .utf8 }
        guard bytes.count >= 2 else { return nil }
        if bytes[0] == 0xFE, bytes[1] == 0xFF { return TextEncoding(standardName: "UTF-16BE") }
        if bytes[0] == 0xFF, bytes[1] == 0xFE { return TextEncoding(standardName: "UTF-16LE") }
        return nil
    }

    /// `bytes` as text the way the Encoding Standard's "decode" reads a body: a byte
    /// order mark chooses the encoding, whatever this one is, and is not part of the
    /// text (as browsers, and requests for UTF-16, read it); else this encoding.
    public func decodeBody(_ bytes: [UInt8]) -> String? {
        guard let marked = Self.byteOrderMark(of: bytes) else {
            return self == .utf8 ? String(validating: bytes, as: UTF8.self) : decode(bytes)
        }
        let text = Array(bytes.dropFirst(marked == .utf8 ? 3 : 2))
        return marked == .utf8 ? String(validating: text, as: UTF8.self) : marked.decode(text)
    }

    public func decode(_ bytes: [UInt8]) -> String? {
        switch converter {
        case .utf8:
            return String(validating: bytes, as: UTF8.self)
        case .replacement:
            return bytes.isEmpty ? "" : nil
        case .userDefined:
            var text = ""
            text.unicodeScalars.reserveCapacity(bytes.count)
            for byte in bytes {
                text.unicodeScalars.append(Unicode.Scalar(byte < 0x80 ? UInt32(byte) : 0xF780 + UInt32(byte - 0x80))!)
            }
            return text
        case .windows1252:
            return Self.iconvDecode(bytes, from: "CP1252") { [0x81, 0x8D, 0x8F, 0x90, 0x9D].contains($0) }
        case .iconv(let iconvName):
            return Self.iconvDecode(bytes, from: iconvName) { _ in false }
        }
    }

    /// Converts with iconv into UTF-8, in steps of at most 64 KiB of output. A byte iconv
    /// refuses is an error, unless `passThrough` says it stands for the code point of
    /// its own value.
    private static func iconvDecode(_ bytes: [UInt8], from encoding: String,
                                    passThrough: (UInt8) -> Bool) -> String? {
        let converter = iconv_open("UTF-8", encoding)
        guard let converter, Int(bitPattern: converter) != -1 else { return nil }
        defer { iconv_close(converter) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2 + 16)
        var chunk = [UInt8](repeating: 0, count: min(64 * 1024, bytes.count * 4 + 16))
        let ok = bytes.withUnsafeBufferPointer { inputBuffer -> Bool in
            chunk.withUnsafeMutableBufferPointer { chunkBuffer -> Bool in
                // iconv's input is `char **` but it only reads through it.
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(mutating: inputBuffer.baseAddress)?
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = inputBuffer.count
                var flushing = false
                while true {
                    var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(chunkBuffer.baseAddress!)
                        .assumingMemoryBound(to: CChar.self)
                    var outLeft = chunkBuffer.count
                    // With no input left, a null input returns a stateful encoding (ISO-2022-JP)
                    // to its initial state, writing what that takes.
                    let result = flushing ? iconv(converter, nil, nil, &outPointer, &outLeft)
                                          : iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                    let failure = result == -1 ? errno : 0
                    output.append(contentsOf: UnsafeBufferPointer(start: chunkBuffer.baseAddress, count: chunkBuffer.count - outLeft))
                    if failure == E2BIG { continue }
                    if failure == EILSEQ, let at = inPointer, inLeft > 0,
                       passThrough(UInt8(bitPattern: at.pointee)) {
                        let scalar = Unicode.Scalar(UInt8(bitPattern: at.pointee))
                        output.append(contentsOf: String(Character(scalar)).utf8)
                        inPointer = at + 1
                        inLeft -= 1
                        continue
                    }
                    if failure != 0 { return false }  // EILSEQ, or EINVAL: a sequence cut short at the end
                    if flushing { return true }
                    flushing = true
                }
            }
        }
        return ok ? String(decoding: output, as: UTF8.self) : nil
    }

    private static func isASCIIWhitespace(_ b: UInt8) -> Bool {
        b == 0x09 || b == 0x0A || b == 0x0C || b == 0x0D || b == 0x20
    }

    /// iconv's name for each encoding the standard names otherwise (the others, such as
    /// `ISO-8859-2` or `KOI8-R`, iconv knows by the same name).
    private static let iconvNames: [String: String] = [
        "ISO-8859-8-I": "ISO-8859-8", "macintosh": "MACINTOSH", "x-mac-cyrillic": "MAC-CYRILLIC",
        "windows-874": "CP874", "windows-1250": "CP1250", "windows-1251": "CP1251", "windows-1253": "CP1253",
        "windows-1254": "CP1254", "windows-1255": "CP1255", "windows-1256": "CP1256", "windows-1257": "CP1257",
        "windows-1258": "CP1258", "GBK": "GB18030", "gb18030": "GB18030", "Big5": "BIG5-HKSCS",
        "Shift_JIS": "CP932", "EUC-KR": "CP949",
    ]
}
