import Testing
@testable import Netlayer

@Suite struct RepeatCacheTests {
    private func value(_ cache: RepeatCache<Int>, _ key: String) -> Int? {
        Array(key.utf8).withUnsafeBufferPointer { cache.value(for: $0) }
    }

    /// Looks `key` up and, on a miss, tells the cache, offering `made`; counts the makes.
    private func use(_ cache: RepeatCache<Int>, _ key: String, _ made: Int, makes: inout Int) -> Int? {
        if let found = value(cache, key) { return found }
        var calls = 0
        Array(key.utf8).withUnsafeBufferPointer { bytes in
            cache.missed(bytes) { calls += 1; return made }
        }
        makes += calls
        return nil
    }

    @Test func keepsAValueTheSecondTimeItsKeyComes() {
        let cache = RepeatCache<Int>(slots: 8)
        var makes = 0
        #expect(use(cache, "GET /a", 1, makes: &makes) == nil)
        #expect(makes == 0)  // first sight: noted, nothing made
        #expect(use(cache, "GET /a", 1, makes: &makes) == nil)
        #expect(makes == 1)  // second sight: made and kept
        #expect(use(cache, "GET /a", 99, makes: &makes) == 1)
        #expect(makes == 1)
        #expect(value(cache, "GET /b") == nil)
        #expect(value(cache, "GET /a ") == nil)  // only the exact bytes
    }

    @Test func keysThatNeverRepeatDoNotPushOutAKeptValue() {
        let cache = RepeatCache<Int>(slots: 1)  // every key shares the one slot
        var makes = 0
        _ = use(cache, "kept", 7, makes: &makes)
        _ = use(cache, "kept", 7, makes: &makes)
        for i in 0..<100 { _ = use(cache, "once \(i)", i, makes: &makes) }
        #expect(makes == 1)
        #expect(value(cache, "kept") == 7)
        // A key that does repeat takes the slot over.
        _ = use(cache, "again", 8, makes: &makes)
        _ = use(cache, "again", 8, makes: &makes)
        #expect(value(cache, "again") == 8)
        #expect(value(cache, "kept") == nil)
    }

    @Test func lookingUpAndMakingOnRepeatIsOneCall() {
        let cache = RepeatCache<Int>(slots: 8)
        var makes = 0
        func use(_ key: String, _ made: Int) -> Int? {
            Array(key.utf8).withUnsafeBufferPointer { bytes in cache.value(for: bytes) { makes += 1; return made } }
        }
        #expect(use("GET /a", 1) == nil)   // first sight: noted
        #expect(use("GET /a", 1) == 1)     // second: made, kept and used at once
        #expect(use("GET /a", 99) == 1)    // then kept
        #expect(makes == 1)
    }

    @Test func longKeysAndNilValuesAreNotKept() {
        let cache = RepeatCache<Int>(slots: 4, maxKeyBytes: 8)
        var makes = 0
        for _ in 0..<3 { _ = use(cache, "123456789", 1, makes: &makes) }
        #expect(makes == 0)
        #expect(value(cache, "123456789") == nil)
        Array("short".utf8).withUnsafeBufferPointer { bytes in
            cache.missed(bytes) { nil }
            cache.missed(bytes) { nil }
        }
        #expect(value(cache, "short") == nil)
    }
}
