import Glibc
import NetlayerJSON

/// An ordered list of HTTP header fields with case-insensitive names.
///
/// This is the one place header names and values are validated: a name must be an
/// RFC 9110 token and a value must not contain a control character other than HTAB
/// (RFC 9110 section 5.5), since libcurl sends header lines as given and a stray CRLF
/// would let a caller's input forge headers; and a request's `Host`, `Content-Length`
/// and `Transfer-Encoding` are the library's to set, never a caller's. Multipart header
/// parameters (a part's name, filename and type) follow the value rule through
/// `forbiddenValueByte`.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, unless `received` holds them.
    private var list: [Field] = []
    /// A response's fields as received, kept as bytes until someone asks for strings:
    /// most responses are only copied into a result document, which reads the bytes.
    private var received = HTTPResponse.ReceivedHeaders()
    /// Every field has passed `validate` since the last change: a request's headers
    /// are checked once, however many layers hand them on.
    private var isValidated: Bool {
        get { state.contains(.validated) }
        set { if newValue { state.insert(.validated) } else { state.remove(.validated) } }
    }
    /// `list` may hold a name more than once (`add`, or received fields made strings,
    /// each `Set-Cookie` on its own): reading joins them, as for received fields.
    private var listHasRepeats: Bool {
        get { state.contains(.listHasRepeats) }
        set { if newValue { state.insert(.listHasRepeats) } else { state.remove(.listHasRepeats) } }
    }
    /// Both flags in one byte, so that the headers, which every request and response
    /// holds and copies, are no larger than with one.
    private var state: State = []

    private struct State: OptionSet {
        let rawValue: UInt8
        static let validated = State(rawValue: 1 << 0)
        static let listHasRepeats = State(rawValue: 1 << 1)
    }

    public init() {}

    public init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { self[name] = value }
    }

    package init(received: HTTPResponse.ReceivedHeaders) {
        self.received = received
    }

    /// Fields as if received from a server, each a name and its value's bytes (which
    /// need not be UTF-8), for a reader that rebuilds a response (a cassette's, a
    /// redacted copy) and must keep the bytes a value had. Names are lower-cased, as
    /// received ones are; a line the header parser refuses is left out.
    package init(receivedFields fields: [(name: String, value: [UInt8])]) {
        var received = HTTPResponse.ReceivedHeaders()
        var line: [UInt8] = []
        for (name, value) in fields { received.appendField(name.utf8, value, line: &line) }
        self.received = received
    }

    /// The fields in order; repeated response fields are joined into one.
    public var fields: [Field] {
        guard received.isEmpty else { return received.fields }
        return listHasRepeats ? Self.joiningRepeats(list) : list
    }

    public var count: Int { received.isEmpty ? (listHasRepeats ? fields.count : list.count) : received.count }
    public var isEmpty: Bool { received.isEmpty && list.isEmpty }

    /// The value for `name` (any case); setting replaces every field of that name,
    /// and setting nil removes them.
    public subscript(name: String) -> String? {
        get {
            if !received.isEmpty { return received.value(named: name) }
            if listHasRepeats { return joinedValue(named: name) }
            for f in list where f.name.caseInsensitiveEquals(name) { return f.value }
            return nil
        }
        set {
            isValidated = false
            // A change to received fields keeps the others' bytes (a value that is not
            // UTF-8 stays one: a cached response's `Age` must not lose it).
            if !received.isEmpty, let changed = received.replacing(name, with: newValue) {
                received = changed
                return
            }
            materialize()
            let first = list.firstIndex { $0.name.caseInsensitiveEquals(name) }
            list.removeAll { $0.name.caseInsensitiveEquals(name) }
            guard let newValue else { return }
            list.insert(Field(name: name, value: newValue), at: first ?? list.endIndex)
        }
    }

    /// Each value of `name` (any case) on its own, in order, where `self[name]` joins
    /// them: what Set-Cookie needs, whose values hold commas (RFC 6265 section 3).
    public func values(named name: String) -> [String] {
        guard !received.isEmpty else { return list.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value) }
        var found: [String] = []
        let wanted = name.lowercased()
        received.forEachRecord { recordName, value in
            if recordName.elementsEqual(wanted.utf8) { found.append(Self.text(ofValue: value).text) }
        }
        return found
    }

    /// Adds a field without replacing others of the same name (repeated response headers).
    public mutating func add(name: String, value: String) {
        materialize()
        isValidated = false
        if !listHasRepeats, list.contains(where: { $0.name.caseInsensitiveEquals(name) }) { listHasRepeats = true }
        list.append(Field(name: name, value: value))
    }

    /// Sets a field the library itself chose the value of (a `Content-Type` of its
    /// own): it needs no check, so validated headers stay validated.
    package mutating func setChecked(_ name: String, _ value: String) {
        let wasValidated = isValidated
        self[name] = value
        isValidated = wasValidated
    }

    /// `other`'s fields replace same-named fields of `self`; new names are appended.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var merged = self
        for field in other.fields { merged[field.name] = field.value }
        merged.isValidated = isValidated && other.isValidated
        return merged
    }

    /// A received value as text: UTF-8 when it is valid UTF-8; else ISO-8859-1, each
    /// byte the code point of its value (how http.client, requests and the Fetch
    /// standard's byte strings read header bytes), so that nothing is lost:
    /// `isLatin1` says that the text's code points are the bytes.
    public static func text(ofValue bytes: UnsafeBufferPointer<UInt8>) -> (text: String, isLatin1: Bool) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, false) }
        var scalars = String.UnicodeScalarView()
        for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
        return (String(scalars), true)
    }

    /// Calls `body` with each field's name and value bytes, without making strings of
    /// received fields (repeated fields arrive joined, as in `fields`). A received
    /// value is the bytes the server sent, which need not be UTF-8
    /// (`text(ofValue:)` reads them); a value set in Swift is UTF-8.
    public func withEachFieldUTF8(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        if !received.isEmpty {
            received.forEachField(body)
            return
        }
        for field in fields {
            var name = field.name, value = field.value
            name.withUTF8 { n in value.withUTF8 { v in body(n, v) } }
        }
    }

    /// `withEachFieldUTF8`, with whether each field is plain: a name of `tchar`s and a
    /// value of printable ASCII without `"` or `\`, which JSON text may hold as they
    /// are. Known for received fields as they arrived; false for any other field, and
    /// `false` is always safe (the writer then checks the bytes).
    package func withEachFieldUTF8(marking body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, Bool) -> Void) {
        guard received.isEmpty else { return received.forEachField(marking: body) }
        withEachFieldUTF8 { name, value in body(name, value, false) }
    }

    /// Calls `body` with each field line's name and value bytes on its own, in order
    /// (a repeated name's values apart, as `separateFields`), without making strings
    /// of received fields, whose values need not be UTF-8.
    package func withEachSeparateFieldUTF8(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        guard received.isEmpty else { return received.forEachRecord(body) }
        for field in list {
            var name = field.name, value = field.value
            name.withUTF8 { name in value.withUTF8 { value in body(name, value) } }
        }
    }

    /// Makes the received fields strings, before a change: each record on its own, so
    /// that `values(named:)` still gives each `Set-Cookie` apart (joined, an `Expires`
    /// date's comma would make them one).
    private mutating func materialize() {
        guard !received.isEmpty else { return }
        list = separateFields
        listHasRepeats = received.hasRepeats
        received = HTTPResponse.ReceivedHeaders()
    }

    /// Every field line on its own, in order: the values of a repeated name apart, where
    /// `fields` joins them (for whoever copies headers field by field, each Set-Cookie
    /// intact).
    package var separateFields: [Field] {
        guard !received.isEmpty else { return list }
        var fields: [Field] = []
        fields.reserveCapacity(received.recordCount)
        received.forEachRecord { name, value in
            fields.append(Field(name: String(decoding: name, as: UTF8.self), value: Self.text(ofValue: value).text))
        }
        return fields
    }

    /// The values of `name` in `list` joined with ", " (RFC 9110 5.3), or nil. Out of
    /// line: the subscript is read many times per request, almost never this way.
    @inline(never)
    private func joinedValue(named name: String) -> String? {
        let values = values(named: name)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// `fields` of a list that may name a field more than once: one field per name
    /// (any case), where it first occurs, its values joined with ", " (RFC 9110 5.3).
    @inline(never)
    private static func joiningRepeats(_ list: [Field]) -> [Field] {
        var joined: [Field] = []
        for field in list {
            if let i = joined.firstIndex(where: { $0.name.caseInsensitiveEquals(field.name) }) {
                joined[i].value += ", " + field.value
            } else {
                joined.append(field)
            }
        }
        return joined
    }

    // Whether the fields were checked is not part of the value.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        if lhs.received.isEmpty, rhs.received.isEmpty, !lhs.listHasRepeats, !rhs.listHasRepeats {
            return lhs.list == rhs.list  // a request's headers: compared for every request (HeaderList)
        }
        return lhs.fields == rhs.fields
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Throws `invalidRequest` naming the first field whose name or value is unsafe to send.
    public func validate() throws(NetworkError) {
        guard !isValidated else { return }
        for field in fields { try Self.validate(name: field.name, value: field.value) }
    }

    /// `validate()`, remembered: the next call costs nothing until a field changes.
    public mutating func validateOnce() throws(NetworkError) {
        try validate()
        isValidated = true
    }

    /// For a reader that checked every field with `validate(name:value:)` as it added it.
    package mutating func markValidated() { isValidated = true }

    /// Throws `invalidRequest` when a request may not send this field: a name or value
    /// HTTP cannot carry (`validateSyntax`), or a field the library sets itself
    /// (`libraryOwnedReason`). Every header a caller gives a request passes here.
    public static func validate(name: String, value: String) throws(NetworkError) {
        try validateSyntax(name: name, value: value)
        if let reason = libraryOwnedReason(name) {
            throw .invalidRequest("header '\(name)' cannot be set: \(reason)")
        }
    }

    /// The name is an RFC 9110 token and the value holds no control character but HTAB:
    /// what any header line needs, a request's or a response's (a stub's answer).
    package static func validateSyntax(name: String, value: String) throws(NetworkError) {
        guard !name.isEmpty, name.allUTF8(isTokenByte) else {
            throw .invalidRequest("header name '\(name.escapedForMessage)' is not a valid token")
        }
        if let bad = forbiddenValueByte(in: value) {
            throw .invalidRequest("header '\(name)' has \(describeControl(bad)) in its value, which HTTP does not allow (only HTAB among control characters)")
        }
    }

    /// Why a caller may not set `name` (any case), or nil. The framing fields say where
    /// the body ends: libcurl sends a caller's `Content-Length` or `Transfer-Encoding`
    /// as given and frames the body by it, so a value that disagrees with the body
    /// makes the server read the rest as another request (request smuggling). A
    /// caller's `Host` would be sent to the URL's server while libcurl 7.88 picks the
    /// cookies of the jar by it, handing one host's cookies to another.
    package static func libraryOwnedReason(_ name: String) -> String? {
        switch name.utf8.count {  // the length first: this runs for every field of every request
        case 4 where name.caseInsensitiveEquals("Host"):
            return "Netlayer sends the URL's host (and chooses the cookies to send by it); to reach another address under the URL's host, use the config keys 'resolve' or 'unixSocket'"
        case 14 where name.caseInsensitiveEquals("Content-Length"), 17 where name.caseInsensitiveEquals("Transfer-Encoding"):
            return "Netlayer frames the body it sends, and a value of the caller's that disagrees with the body would let the server read part of it as another request"
        default:
            return nil
        }
    }

    /// The first byte of `value` a field value may not hold: a control character other
    /// than HTAB (0x00-0x08, 0x0A-0x1F, 0x7F). Everything else, including non-ASCII
    /// text, is sent as its UTF-8 bytes.
    package static func forbiddenValueByte(in value: String) -> UInt8? {
        value.firstUTF8 { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }

    /// "a CR", "a NUL", "the control character U+0001": for messages about a refused byte.
    package static func describeControl(_ byte: UInt8) -> String {
        switch byte {
        case 0x00: return "a NUL"
        case 0x0A: return "an LF"
        case 0x0D: return "a CR"
        default: return "the control character U+\(String(byte, radix: 16, uppercase: true).leftPadded(to: 4))"
        }
    }

    /// The value as a header line carries it: a field value excludes leading and trailing
    /// SP and HTAB (RFC 9110 section 5.5), and libcurl reads a line whose value is only
    /// whitespace as "remove this header", so trimming first keeps such a header (sent
    /// empty, as `Name;`).
    package static func wireValue(_ value: String) -> Substring.UTF8View {
        let utf8 = value.utf8
        let isBlank = { (b: UInt8) in b == 0x20 || b == 0x09 }
        guard let first = utf8.firstIndex(where: { !isBlank($0) }),
              let last = utf8.lastIndex(where: { !isBlank($0) }) else { return utf8[utf8.startIndex..<utf8.startIndex] }
        return utf8[first...last]
    }

    /// RFC 9110 `tchar`.
    package static func isTokenByte(_ b: UInt8) -> Bool { isHTTPTokenByte(b) }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }
}

extension String {
    /// Whether every UTF-8 byte passes `test`; over the contiguous bytes, which is
    /// several times cheaper than iterating `utf8` (these checks run per request).
    package func allUTF8(_ test: (UInt8) -> Bool) -> Bool {
        var copy = self
        return copy.withUTF8 { $0.allSatisfy(test) }
    }

    /// The first UTF-8 byte that passes `test`.
    package func firstUTF8(where test: (UInt8) -> Bool) -> UInt8? {
        var copy = self
        return copy.withUTF8 { $0.first(where: test) }
    }

    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    /// Whether the string starts with `prefix` (ASCII), comparing bytes in place:
    /// `utf8.starts(with:)` walks both views element by element.
    package func hasASCIIPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        return utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count >= count && memcmp(bytes.baseAddress!, prefix.utf8Start, count) == 0
        } ?? utf8.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: count))
    }

    package func caseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) }
    }

    /// The string with control characters shown as escapes, safe to put in a message.
    public var escapedForMessage: String {
        var out = ""
        for scalar in unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
