import Glibc

/// Values made from byte strings that come again: what a client keeps for the
/// endpoint documents and the URLs it is asked for over and over.
///
/// Direct-mapped: a key's hash picks its one slot. A value is kept the second time
/// its key comes to that slot (the slot notes the hash of the last key it saw), so
/// keys that never repeat cost one hash each and allocate nothing, and cannot push
/// out a value that keeps being used until they repeat themselves. Keys longer than
/// `maxKeyBytes` are never kept. Thread-safe; the lock is held only to read or write
/// a slot.
public final class RepeatCache<Value: Sendable>: Sendable {
    /// A class, so that reading a slot under the lock copies one reference.
    private final class Entry: Sendable {
        let hash: UInt64
        let key: [UInt8]
        let value: Value

        init(hash: UInt64, key: [UInt8], value: Value) {
            self.hash = hash
            self.key = key
            self.value = value
        }
    }

    private struct Slot {
        var entry: Entry?
        /// The hash of the last key that missed here and is not (yet) kept.
        var candidate: UInt64 = 0
    }

    private let slots: Locked<[Slot]>
    private let mask: UInt64
    public let maxKeyBytes: Int

    /// - Parameter slots: rounded up to a power of two.
    public init(slots: Int = 64, maxKeyBytes: Int = 1024) {
        var count = 1
        while count < slots { count <<= 1 }
        self.slots = Locked(Array(repeating: Slot(), count: count))
        mask = UInt64(count - 1)
        self.maxKeyBytes = maxKeyBytes
    }

    /// The value kept for exactly these bytes, if any.
    public func value(for key: UnsafeBufferPointer<UInt8>) -> Value? {
        guard let hash = hash(ofKey: key) else { return nil }
        return kept(key, hash: hash)
    }

    /// The value kept for these bytes; else, as `missed`, the value `make` returns
    /// when this is the key's second time (used at once and kept), or nil.
    public func value(for key: UnsafeBufferPointer<UInt8>, orOnRepeat make: () -> Value?) -> Value? {
        guard let hash = hash(ofKey: key) else { return nil }
        return kept(key, hash: hash) ?? admit(key, hash: hash, make: make)
    }

    /// Tells the cache that `key` missed. The second time in a row its slot sees it,
    /// `make` runs and what it returns is kept for the times after (nil: nothing).
    public func missed(_ key: UnsafeBufferPointer<UInt8>, make: () -> Value?) {
        guard let hash = hash(ofKey: key) else { return }
        _ = admit(key, hash: hash, make: make)
    }

    /// The key's hash, or nil for a key the cache never keeps.
    private func hash(ofKey key: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard key.count <= maxKeyBytes, key.baseAddress != nil else { return nil }
        return Self.hash(key)
    }

    private func kept(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Value? {
        let entry = slots.withLock { $0[slot(of: hash)].entry }
        guard let entry, entry.hash == hash, entry.key.count == key.count,
              entry.key.withUnsafeBufferPointer({ memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 })
        else { return nil }
        return entry.value
    }

    /// Notes a miss; on the key's second time in a row, makes and keeps its value.
    private func admit(_ key: UnsafeBufferPointer<UInt8>, hash: UInt64, make: () -> Value?) -> Value? {
        let index = slot(of: hash)
        let seenBefore = slots.withLock { slots in
            if slots[index].candidate == hash { return true }
            slots[index].candidate = hash
            return false
        }
        guard seenBefore, let value = make() else { return nil }
        let entry = Entry(hash: hash, key: Array(key), value: value)
        let replaced = slots.withLock { slots in
            defer { slots[index] = Slot(entry: entry) }
            return slots[index].entry
        }
        _ = replaced  // released here, outside the lock
        return value
    }

    /// FNV-1a, 64 bits: a few instructions per byte, and keys are short.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    private func slot(of hash: UInt64) -> Int { Int(truncatingIfNeeded: (hash ^ (hash >> 32)) & mask) }
}
