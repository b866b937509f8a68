import Glibc
import NetlayerJSON

extension HTTPResponse {
    /// A response's header fields as libcurl hands them over, kept as bytes: records of
    /// `[name length][value length][lower-cased name][value]` (lengths as 32-bit native
    /// integers, the name's top bit marking a plain field: see `forEachField(marking:)`)
    /// in one buffer. Making two strings per field costs more than the rest of
    /// the header handling together, and most responses only have their fields copied
    /// into a result document; `HTTPHeaders` makes strings when they are asked for.
    ///
    /// Only the transfer that receives a response appends to its block, and it hands the
    /// block over (`HTTPHeaders(received:)`) once the response is complete: from then on
    /// the block is read-only and may be shared like any value.
    package struct ReceivedHeaders: @unchecked Sendable {
        /// The records; nil until the first field arrives.
        private var block: Block?
        /// Whether the blank line that ends the header section has arrived since the last
        /// status line: libcurl 7.88 hands over a response whose connection closed before
        /// it as if it were complete. (One that closes after a 1xx section, libcurl
        /// reports itself, as an empty reply.)
        package private(set) var sectionEnded = false
        /// Fields a new one is compared with in passing; past them, the block's index of names.
        private static let scannedFields = 16

        package init() {}

        var recordCount: Int { block?.records ?? 0 }
        /// Whether a name occurs more than once (its values are joined when read).
        var hasRepeats: Bool { block?.hasRepeats ?? false }
        package var isEmpty: Bool { recordCount == 0 }

        /// Fields, counting a repeated name once.
        var count: Int { hasRepeats ? fields.count : recordCount }

        /// The records and their counts in one allocation (a `ManagedBuffer`: the bytes
        /// follow the header in memory). A block does not grow in place: `reserve` moves
        /// the records to a larger one.
        private final class Block: ManagedBuffer<BlockCounts, UInt8> {
            static func make(capacity: Int) -> Block {
                unsafeDowncast(create(minimumCapacity: capacity) { _ in BlockCounts(capacity: capacity) }, to: Block.self)
            }

            var bytes: UnsafeMutablePointer<UInt8> { withUnsafeMutablePointerToElements { $0 } }
            var count: Int {
                get { header.count }
                set { header.count = newValue }
            }
            var records: Int {
                get { header.records }
                set { header.records = newValue }
            }
            var hasRepeats: Bool {
                get { header.hasRepeats }
                set { header.hasRepeats = newValue }
            }
        }

        private struct BlockCounts {
            let capacity: Int
            var count = 0
            var records = 0
            /// Where the last record starts: a folded line (`continueLastValue`) extends it.
            var lastRecord = 0
            var hasRepeats = false
            /// Where the first record of each name starts, by the name's hash, once the
            /// section has more than `scannedFields` fields: tens of thousands of them must
            /// not cost their square. In the block, not the struct, so that copying the
            /// headers (every response's are) copies no more than a reference.
            var firstByName: [Int: Int]?

            init(capacity: Int) { self.capacity = capacity }
        }

        /// The block, with room for `extra` more bytes.
        private mutating func reserve(_ extra: Int) -> Block {
            guard let block else {
                let made = Block.make(capacity: max(512, extra))  // a typical response's fields: one allocation
                self.block = made
                return made
            }
            let needed = block.count + extra
            guard needed > block.header.capacity else { return block }
            let bigger = Block.make(capacity: max(block.header.capacity * 2, needed))
            bigger.bytes.update(from: block.bytes, count: block.count)
            bigger.count = block.count
            bigger.records = block.records
            bigger.header.lastRecord = block.header.lastRecord
            bigger.hasRepeats = block.hasRepeats
            self.block = bigger
            return bigger
        }

        /// Takes one header line as libcurl delivers it (with its line end). Returns why
        /// the line breaks HTTP framing where libcurl lets it through (bare LF line ends,
        /// conflicting Content-Length: RFC 9112 2.2, 6.3; a field name that is not a token:
        /// RFC 9110 5.1), else nil. A status line starts a new response (a redirect, or
        /// after 100 Continue): the fields so far are dropped. A line that starts with a
        /// space or tab continues the value before it. The blank line ends the section
        /// (`sectionEnded`). A field after it is a trailer, which is not merged into the
        /// header section (RFC 9110 section 6.5.1: a `Content-Type` or `Set-Cookie` there
        /// must not change how the body is read or what is stored), as requests, httpx and
        /// browsers leave trailers out (the caller bounds how many it takes).
        package mutating func append(line: UnsafeRawBufferPointer) -> String? {
            let n = line.count
            guard n > 0, let base = line.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
            if base[n - 1] == 0x0A, n < 2 || base[n - 2] != 0x0D {
                return "the response uses bare LF line ends"
            }
            var end = n
            while end > 0, base[end - 1] == 0x0A || base[end - 1] == 0x0D { end -= 1 }
            if end == 0 {
                sectionEnded = true
                return nil
            }
            if sectionEnded, end < 5 || memcmp(base, "HTTP/", 5) != 0 { return nil }  // a trailer field
            if end >= 5, memcmp(base, "HTTP/", 5) == 0 {
                sectionEnded = false
                if let block {
                    block.count = 0
                    block.records = 0
                    block.hasRepeats = false
                    block.header.firstByName = nil
                }
                return nil
            }
            if base[0] == 0x20 || base[0] == 0x09 {
                continueLastValue(base, end: end)
                return nil
            }
            guard let found = memchr(base, Int32(UInt8(ascii: ":")), end) else { return nil }
            let colon = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            guard colon > 0 else { return "the response has a header field with an empty name" }
            var valueStart = colon + 1
            while valueStart < end, base[valueStart] == 0x20 || base[valueStart] == 0x09 { valueStart += 1 }
            var valueEnd = end
            while valueEnd > valueStart, base[valueEnd - 1] == 0x20 || base[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let valueLength = valueEnd - valueStart

            let block = reserve(8 + colon + valueLength)
            let recordStart = block.count
            let record = block.bytes + recordStart
            UnsafeMutableRawPointer(record).storeBytes(of: UInt32(truncatingIfNeeded: colon), as: UInt32.self)
            UnsafeMutableRawPointer(record + 4).storeBytes(of: UInt32(truncatingIfNeeded: valueLength), as: UInt32.self)
            // Header names are ASCII tokens: lower-case the bytes, not Unicode. The JSON
            // writer's byte classes seen tell whether the name is one, at a load per byte
            // ("0" a `tchar`: the name is a token when only "0" was seen).
            if colon < 8 || !Self.lowercaseSimpleName(from: base, into: record + 8, count: colon) {
                var seen = UInt8(ascii: "0")
                let classes = JSONWriter.byteClass
                for i in 0..<colon {
                    let b = base[i]
                    record[8 + i] = HTTPResponse.MIMEScan.lowercased(b)
                    seen |= classes[Int(b)]
                }
                if seen != UInt8(ascii: "0") {
                    // RFC 9110 5.1: a field name is a token. One that is not (whitespace
                    // before the colon, a smuggling classic; bytes that are not ASCII, which
                    // two names could not be told apart by once written as JSON text) fails
                    // the response, as browsers and Go's client do.
                    let shown = String(decoding: UnsafeBufferPointer(start: base, count: min(colon, 64)), as: UTF8.self)
                    return "the response has a header field name that is not a token (\"\(shown.escapedForMessage)\"\(colon > 64 ? "..." : ""))"
                }
            }
            (record + 8 + colon).update(from: base + valueStart, count: valueLength)
            if JSONWriter.isPlain(UnsafeBufferPointer(start: base + valueStart, count: valueLength)) {  // the name is a token
                UnsafeMutableRawPointer(record).storeBytes(of: UInt32(truncatingIfNeeded: colon) | Self.plainFlag, as: UInt32.self)
            } else {
                // RFC 9110 5.5: a CR within a value (never a plain one) is replaced by a space
                // (NUL libcurl refuses), so that no reader of it, a cassette's too, meets a line end.
                var cr = memchr(record + 8 + colon, 0x0D, valueLength)
                while let at = cr {
                    at.storeBytes(of: 0x20, as: UInt8.self)
                    cr = memchr(at + 1, 0x0D, valueLength - (UnsafeRawPointer(at) + 1 - UnsafeRawPointer(record + 8 + colon)))
                }
            }
            block.header.lastRecord = block.count
            block.count += 8 + colon + valueLength
            block.records += 1

            if colon == 14, memchr(record + 8 + colon, Int32(UInt8(ascii: ",")), valueLength) != nil,
               memcmp(record + 8, "content-length", 14) == 0,
               let listed = Self.conflictingListedLengths(UnsafeBufferPointer(start: record + 8 + colon, count: valueLength)) {
                return listed
            }
            let all = UnsafeBufferPointer(start: block.bytes, count: block.count)
            let name = UnsafeBufferPointer(start: record + 8, count: colon)
            guard block.records > Self.scannedFields else {
                // A short section (nearly every one): the earlier fields, scanned in passing.
                var offset = 0
                while offset < recordStart {
                    let earlier = Record(all, at: offset)
                    if earlier.name.count == colon, memcmp(earlier.name.baseAddress!, name.baseAddress!, colon) == 0 {
                        return repeated(earlier, by: record, colon: colon, valueLength: valueLength, in: block)
                    }
                    offset = earlier.end
                }
                return nil
            }
            guard let earlier = Self.indexedRecord(named: name, before: recordStart, in: all, of: block) else { return nil }
            return repeated(earlier, by: record, colon: colon, valueLength: valueLength, in: block)
        }

        /// Notes that the record at `record` repeats the name of `earlier`; why the response
        /// fails when they are two differing Content-Length fields.
        private func repeated(_ earlier: Record, by record: UnsafeMutablePointer<UInt8>, colon: Int, valueLength: Int,
                              in block: Block) -> String? {
            block.hasRepeats = true
            guard colon == 14, memcmp(record + 8, "content-length", 14) == 0 else { return nil }
            let value = UnsafeBufferPointer(start: record + 8 + colon, count: valueLength)
            if !Self.same(earlier.value, value) {
                return "the response has conflicting Content-Length headers (\(String(decoding: earlier.value, as: UTF8.self)), \(String(decoding: value, as: UTF8.self)))"
            }
            return nil
        }

        /// The first record named `name` among those before `end`, for a section longer
        /// than `scannedFields`: a look-up in `firstByName` (built on first use), so that
        /// tens of thousands of fields do not cost their square; a scan on a hash collision.
        @inline(never)
        private static func indexedRecord(named name: UnsafeBufferPointer<UInt8>, before end: Int,
                                          in all: UnsafeBufferPointer<UInt8>, of block: Block) -> Record? {
            func scan() -> Record? {
                var offset = 0
                while offset < end {
                    let earlier = Record(all, at: offset)
                    if Self.same(earlier.name, name) { return earlier }
                    offset = earlier.end
                }
                return nil
            }
            if block.header.firstByName == nil {  // a new section, or a block moved by `reserve`
                var index: [Int: Int] = [:]
                var offset = 0
                while offset < end {
                    let earlier = Record(all, at: offset)
                    let key = Self.hash(earlier.name)
                    if index[key] == nil { index[key] = offset }
                    offset = earlier.end
                }
                block.header.firstByName = index
            }
            let key = Self.hash(name)
            guard let offset = block.header.firstByName![key] else {
                block.header.firstByName![key] = end
                return nil
            }
            let first = Record(all, at: offset)
            return Self.same(first.name, name) ? first : scan()
        }

        /// Whether two byte runs are the same (a length and a memcmp: the generic
        /// `elementsEqual` costs a call per byte).
        @inline(__always)
        private static func same(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
            a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        }

        private static func hash(_ name: UnsafeBufferPointer<UInt8>) -> Int {
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(name))
            return hasher.finalize()
        }

        /// Why a Content-Length value that lists lengths (`3, 5`) is refused: RFC 9110
        /// 5.3 makes a list the same as repeated fields, and RFC 9112 6.3 makes differing
        /// lengths an error. Equal ones (`3, 3`) are one length.
        private static func conflictingListedLengths(_ value: UnsafeBufferPointer<UInt8>) -> String? {
            let lengths = String(decoding: value, as: UTF8.self).split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingSpaces }
            guard Set(lengths).count == 1 else {
                let shown = String(decoding: value.prefix(64), as: UTF8.self)
                return "the response has conflicting Content-Length values (\(shown.escapedForMessage))"
            }
            return nil
        }

        /// `forEachField`, with whether each field is plain: a name of RFC 9110 `tchar`s
        /// and a value of printable ASCII without `"` or `\`, which a JSON writer may copy
        /// between quotes as they are. Decided once, as the field arrives, so that writing
        /// a result document does not look at each byte again. (A repeated name's joined
        /// value is reported as not plain: the writer then checks it.)
        func forEachField(marking body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, Bool) -> Void) {
            guard hasRepeats else {
                guard let block else { return }
                let all = UnsafeBufferPointer(start: block.bytes, count: block.count)
                var offset = 0
                while offset < all.count {
                    let record = Record(all, at: offset)
                    body(record.name, record.value, record.isPlain)
                    offset = record.end
                }
                return
            }
            forEachField { name, value in body(name, value, false) }
        }

        /// Each record's name and value bytes, in order (repeats not joined).
        func forEachRecord(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
            guard let block else { return }
            let all = UnsafeBufferPointer(start: block.bytes, count: block.count)
            var offset = 0
            while offset < all.count {
                let record = Record(all, at: offset)
                body(record.name, record.value)
                offset = record.end
            }
        }

        /// The top bit of a record's name length: the field is plain.
        private static let plainFlag: UInt32 = 1 << 31

        /// Lower-cases a name of at least eight bytes into `out` eight bytes at a time
        /// (the last eight overlapping, lower-casing being idempotent) when every byte is
        /// a letter, a digit or `-` (a token, as nearly every name is); else returns false
        /// and the caller goes byte by byte.
        private static func lowercaseSimpleName(from name: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>,
                                                count: Int) -> Bool {
            let source = UnsafeRawPointer(name), target = UnsafeMutableRawPointer(out)
            var i = 0
            while true {
                let offset = min(i, count - 8)
                guard let lower = JSONWriter.lowercasedTokenWord(source.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                else { return false }
                target.storeBytes(of: lower, toByteOffset: offset, as: UInt64.self)
                if offset == count - 8 { return true }
                i += 8
            }
        }

        /// An obsolete line folding (RFC 9112 5.2): the line continues the value of the
        /// field before it, which a user agent reads with the fold replaced by a space.
        /// A fold before any field of the response is left out.
        private mutating func continueLastValue(_ base: UnsafePointer<UInt8>, end: Int) {
            guard let old = block, old.records > 0 else { return }
            var start = 0
            while start < end, base[start] == 0x20 || base[start] == 0x09 { start += 1 }
            var stop = end
            while stop > start, base[stop - 1] == 0x20 || base[stop - 1] == 0x09 { stop -= 1 }
            guard stop > start else { return }
            // Records follow one another, so the last one ends the block: its value grows in place.
            let last = old.header.lastRecord
            let valueLength = Record(UnsafeBufferPointer(start: old.bytes, count: old.count), at: last).value.count
            let space = valueLength > 0 ? 1 : 0
            let block = reserve(space + stop - start)  // may move the records to a larger block
            if space == 1 { block.bytes[block.count] = 0x20 }
            (block.bytes + block.count + space).update(from: base + start, count: stop - start)
            block.count += space + stop - start
            let header = UnsafeMutableRawPointer(block.bytes + last)
            header.storeBytes(of: UInt32(truncatingIfNeeded: valueLength + space + stop - start), toByteOffset: 4, as: UInt32.self)
            let record = Record(UnsafeBufferPointer(start: block.bytes, count: block.count), at: last)
            if record.isPlain, !JSONWriter.isPlain(record.value) {
                header.storeBytes(of: UInt32(truncatingIfNeeded: record.name.count), as: UInt32.self)
            }
        }

        private struct Record {
            let name: UnsafeBufferPointer<UInt8>
            let value: UnsafeBufferPointer<UInt8>
            let end: Int
            let isPlain: Bool

            init(_ all: UnsafeBufferPointer<UInt8>, at offset: Int) {
                let raw = UnsafeRawPointer(all.baseAddress! + offset)
                let nameWord = raw.loadUnaligned(as: UInt32.self)
                isPlain = nameWord & ReceivedHeaders.plainFlag != 0
                let nameLength = Int(nameWord & ~ReceivedHeaders.plainFlag)
                let valueLength = Int(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                name = UnsafeBufferPointer(start: all.baseAddress! + offset + 8, count: nameLength)
                value = UnsafeBufferPointer(start: all.baseAddress! + offset + 8 + nameLength, count: valueLength)
                end = offset + 8 + nameLength + valueLength
            }
        }
    }
}
