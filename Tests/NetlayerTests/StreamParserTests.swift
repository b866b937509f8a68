@testable import Netlayer
@testable import NetlayerCurl
import Testing

/// The event-stream parser against exact byte streams, in the manner of the
/// web-platform-tests `eventsource/format-*` cases, each delivered whole, one byte per
/// write, and cut after every CR.
@Suite struct StreamParserTests {
    /// (event, data, lastEventId, retry) of each dispatched event.
    private typealias Seen = [String]

    private func events(_ stream: [UInt8], _ mode: StreamMode = .sse, split: [Int]) -> Seen {
        var parser = StreamParser(mode: mode)
        var out: [StreamEvent] = []
        var start = 0
        for cut in split + [stream.count] where cut >= start && cut <= stream.count {
            stream[start..<cut].withUnsafeBytes { out += parser.feed($0) }
            start = cut
        }
        out += parser.finish()
        return out.map { event in
            switch event {
            case .serverSent(let name, let data, let id, let retry): return "\(name)|\(data)|\(id)|\(retry.map(String.init) ?? "-")"
            case .line(let line): return "line|\(line)"
            case .chunk(let bytes): return "chunk|\(bytes.count)"
            }
        }
    }

    /// The same events whether the stream comes whole, a byte at a time, or cut after
    /// every CR (so CRLF is split across writes).
    private func check(_ text: String, _ expected: Seen, mode: StreamMode = .sse) {
        let stream = Array(text.utf8)
        let whole = events(stream, mode, split: [])
        let bytes = events(stream, mode, split: Array(0..<stream.count))
        let afterCR = events(stream, mode, split: stream.indices.filter { stream[$0] == 0x0D }.map { $0 + 1 })
        #expect(whole == expected, "whole: \(text.debugDescription)")
        #expect(bytes == expected, "byte by byte: \(text.debugDescription)")
        #expect(afterCR == expected, "cut after CR: \(text.debugDescription)")
    }

    @Test func fieldsEventsAndLineEnds() {
        check("data: a\n\n", ["message|a||-"])
        check("data:a\r\ndata: b\r\r", ["message|a\nb||-"])
        check("event: tick\ndata: x\nid: 7\n\ndata: y\n\n", ["tick|x|7|-", "message|y|7|-"])
        check(": comment\ndata\n\n", ["message|||-"])  // a field without colon: the empty value
        check("data:  two spaces\n\n", ["message| two spaces||-"])  // only one space is removed
        check("unknown: x\ndata: y\n\n", ["message|y||-"])
        check("data: x\nevent: only\n\n\n\n", ["only|x||-"])  // blank lines without data dispatch nothing
    }

    /// A CR ends its line as it arrives: an event a server ends with "\r\r" and then
    /// goes quiet is dispatched at once, not when the next byte comes (and lost if it
    /// never does); an LF at the start of the next read completes the CRLF.
    @Test func aCROnItsOwnEndsTheLineWithoutWaitingForTheNextRead() {
        var parser = StreamParser(mode: .sse)
        var seen = Array("data: one\r\r".utf8).withUnsafeBytes { parser.feed($0) }
        #expect(seen.count == 1)
        seen = Array("\ndata: two\r".utf8).withUnsafeBytes { parser.feed($0) }  // "\n": the rest of "\r\n"
        #expect(seen.isEmpty)
        seen = Array("\n\r\n".utf8).withUnsafeBytes { parser.feed($0) }
        #expect(seen.count == 1)
        var lines = StreamParser(mode: .lines)
        #expect(Array("l1\r".utf8).withUnsafeBytes { lines.feed($0) }.count == 1)
        #expect(Array("\nl2\n".utf8).withUnsafeBytes { lines.feed($0) }.count == 1)
    }

    @Test func anEventNotEndedByABlankLineIsDiscarded() {
        check("data: a\n\ndata: b", ["message|a||-"])
        check("data: a\n\ndata: b\n", ["message|a||-"])
        check("data: a\n\nevent: x\ndata: b\r", ["message|a||-"])
    }

    @Test func retryCountsOnlyWhenAllASCIIDigits() {
        check("retry: 1500\ndata: a\n\n", ["message|a||1500"])
        check("retry: +5\ndata: a\n\n", ["message|a||-"])
        check("retry: -0\ndata: a\n\n", ["message|a||-"])
        check("retry: 5x\ndata: a\n\n", ["message|a||-"])
        check("retry:\ndata: a\n\n", ["message|a||-"])
        check("retry: 10\nretry: 1a\ndata: a\n\n", ["message|a||10"])
    }

    @Test func idWithNULIsIgnoredAndIdPersists() {
        check("id: 1\ndata: a\n\nid: 2\u{0}\ndata: b\n\ndata: c\n\n", ["message|a|1|-", "message|b|1|-", "message|c|1|-"])
        check("id: 1\ndata: a\n\nid\ndata: b\n\n", ["message|a|1|-", "message|b||-"])
    }

    @Test func bytesNotCharactersAfterTheColon() {
        // U+0301 COMBINING ACUTE ACCENT right after the colon: as Characters it would
        // merge with ":" and the field would be lost.
        check("data:\u{301}x\n\n", ["message|\u{301}x||-"])
        check("event:\u{301}\ndata: y\n\n", ["\u{301}|y||-"])
        check("\u{FEFF}data: bom\n\n", ["message|bom||-"])  // one leading BOM is ignored
        check("\u{FEFF}\u{FEFF}data: x\n\n", [])  // a second one is part of the field name
    }

    @Test func linesModeKeepsTheLastUnterminatedLine() {
        check("a\nb\r\nc\rd", ["line|a", "line|b", "line|c", "line|d"], mode: .lines)
        check("a\r", ["line|a"], mode: .lines)
        check("a\n\nb", ["line|a", "line|", "line|b"], mode: .lines)
    }

    @Test func aLongLineArrivingInPiecesIsScannedOnce() {
        var parser = StreamParser(mode: .lines)
        let piece = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        var seen = 0
        for _ in 0..<256 { piece.withUnsafeBytes { seen += parser.feed($0).count } }
        [UInt8(ascii: "\n")].withUnsafeBytes { seen += parser.feed($0).count }
        #expect(seen == 1)
    }

    @Test func aLineOrEventPastTheLimitStopsTheParser() {
        func feed(_ text: String, _ mode: StreamMode, limit: Int) -> (Seen, Bool) {
            var parser = StreamParser(mode: mode, maxItemBytes: limit)
            var out: [StreamEvent] = []
            for byte in Array(text.utf8) { [byte].withUnsafeBytes { out += parser.feed($0) } }
            out += parser.finish()
            return (out.map { "\($0)" }, parser.tooLarge)
        }
        #expect(feed("abcd\nabcde\n", .lines, limit: 4).1 == true)
        #expect(feed("abcd\nabcde\n", .lines, limit: 4).0 == ["line(\"abcd\")"])
        #expect(feed("abcd\nabcd", .lines, limit: 4).1 == false)
        #expect(feed("abcdefgh", .lines, limit: 4).1 == true)  // never ended: bounded all the same
        // Lines of 11 bytes; the data "abcde\nfghij" holds 11, with "\nk" 13.
        #expect(feed("data: abcde\ndata: fghij\n\ndata: k\n\n", .sse, limit: 12).1 == false)
        #expect(feed("data: abcde\ndata: fghij\ndata: k\n\n", .sse, limit: 12).1 == true)
        #expect(feed(": a long comment\n", .sse, limit: 12).1 == true)
    }
}
