import Dispatch
import Netlayer
import Testing

/// `HTTPRequest` and `HTTPResponse` keep their fields in shared copy-on-write boxes;
/// to their users they must stay plain values: a copy never sees the other's changes,
/// and a copy read on other threads while the original changes reads what it held.
@Suite struct ValueSemanticsTests {
    private func response() -> HTTPResponse {
        var response = HTTPResponse(statusCode: 200, headers: ["content-type": "application/json"],
                                    body: Array("{\"a\":1}".utf8), totalMs: 1.5, effectiveURL: "http://127.0.0.1/a")
        response.timing.firstByteMs = 1.25
        response.httpVersion = "1.1"
        return response
    }

    @Test func aCopiedResponseKeepsItsFieldsWhenTheOtherChanges() {
        let original = response()
        var copy = original
        copy.statusCode = 404
        copy.headers["content-type"] = "text/plain"
        copy.body.append(contentsOf: Array(" more".utf8))
        copy.totalMs = 9
        copy.timing.redirectMs = 3
        copy.effectiveURL = "http://127.0.0.1/b"
        copy.downloadedFile = "/tmp/x"
        copy.bodyBytes = 12
        copy.streamEvents = 2
        copy.fromCache = true
        copy.httpVersion = "2"

        #expect(original.statusCode == 200)
        #expect(original.headers["Content-Type"] == "application/json")
        #expect(original.body == Array("{\"a\":1}".utf8))
        #expect(original.totalMs == 1.5)
        #expect(original.timing.redirectMs == 0 && original.timing.firstByteMs == 1.25)
        #expect(original.effectiveURL == "http://127.0.0.1/a")
        #expect(original.downloadedFile == nil && original.bodyBytes == 0 && original.streamEvents == nil)
        #expect(!original.fromCache && original.httpVersion == "1.1")

        #expect(copy.statusCode == 404 && copy.headers["content-type"] == "text/plain")
        #expect(copy.body == Array("{\"a\":1} more".utf8) && copy.timing.redirectMs == 3)
        #expect(copy.timing.firstByteMs == 1.25 && copy.fromCache && copy.httpVersion == "2")
    }

    @Test func anUnsharedResponseChangesInPlace() {
        var response = response()
        for _ in 0..<1000 { response.body.append(0x20) }
        #expect(response.body.count == 1007)
        #expect(response.headers["content-type"] == "application/json")
    }

    @Test func aCopyReadOnOtherThreadsSeesWhatItHeldWhileTheOriginalChanges() {
        var original = response()
        let shared = original
        let group = DispatchGroup()
        let mismatches = Locked(0)
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<2000 where shared.statusCode != 200 || shared.body.count != 7 {
                    mismatches.withLock { $0 += 1 }
                }
            }
        }
        for i in 0..<2000 {
            original.statusCode = 300 + i % 100
            original.body.append(UInt8(i & 0x7F))
        }
        group.wait()
        #expect(mismatches.withLock { $0 } == 0)
        #expect(original.body.count == 2007 && shared.body.count == 7)
    }

    @Test func aCopiedRequestKeepsItsFieldsWhenTheOtherChanges() {
        let original = HTTPRequest(method: .post, url: "http://127.0.0.1/a", headers: ["X-A": "1"], body: [1, 2])
        var copy = original
        copy.method = .put
        copy.url = "http://127.0.0.1/b"
        copy.headers["X-A"] = "2"
        copy.body = nil
        copy.options.timeout = 3
        #expect(original.method == .post && original.url == "http://127.0.0.1/a")
        #expect(original.headers["X-A"] == "1" && original.body == [1, 2] && original.options.timeout == RequestOptions().timeout)
        #expect(copy.method == .put && copy.headers["x-a"] == "2" && copy.body == nil && copy.options.timeout == 3)
    }
}

/// A counter threads share in these tests.
private final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = DispatchSemaphore(value: 1)
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.wait()
        defer { lock.signal() }
        return body(&value)
    }
}
