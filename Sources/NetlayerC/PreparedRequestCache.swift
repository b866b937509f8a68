import Glibc
import Netlayer

/// The requests a client built from the endpoint documents it saw last, by the
/// documents' exact bytes — what Python's `re` does for compiled patterns.
///
/// A request is a function of its document and the client's config, and a client's
/// config never changes; an API client sends the same few documents again and again
/// (a poll, a health check, a resource read by a fixed path), and parsing one and
/// building its request is a tenth of a small request's cost. Only documents whose
/// request carries no per-request closure are kept (progress and stream events are
/// wired to the request's id), and only small ones, so the cache stays small.
///
/// Direct-mapped: a document's hash picks its one slot. A request is kept the second
/// time its document comes (the slot notes the hash of the last one built), so a
/// stream of documents that never repeat costs a hash each and allocates nothing,
/// and cannot push out a request that keeps being used until it repeats itself.
final class PreparedRequestCache: Sendable {
    /// Documents longer than this are built each time (and not kept alive here).
    static let maxDocumentBytes = 1024
    static let slotCount = 64

    /// A class, so that reading a slot under the lock copies one reference.
    private final class Entry: Sendable {
        let hash: UInt64
        let document: [UInt8]
        let request: HTTPRequest
        let decoder: any ResponseDecoder

        init(hash: UInt64, document: [UInt8], request: HTTPRequest, decoder: any ResponseDecoder) {
            self.hash = hash
            self.document = document
            self.request = request
            self.decoder = decoder
        }
    }

    private struct Slot {
        var entry: Entry?
        /// The hash of the last document built here that is not (yet) kept.
        var candidate: UInt64 = 0
    }

    private let slots = Locked<[Slot]>(Array(repeating: Slot(), count: PreparedRequestCache.slotCount))

    /// The request built earlier from exactly these bytes, if it is still here.
    func request(for document: UnsafeBufferPointer<UInt8>) -> (HTTPRequest, any ResponseDecoder)? {
        guard document.count <= Self.maxDocumentBytes, let base = document.baseAddress else { return nil }
        let hash = Self.hash(document)
        let entry = slots.withLock { $0[Self.slot(of: hash)].entry }
        guard let entry, entry.hash == hash, entry.document.count == document.count,
              entry.document.withUnsafeBufferPointer({ memcmp($0.baseAddress!, base, document.count) == 0 })
        else { return nil }
        return (entry.request, entry.decoder)
    }

    /// Notes that a request was built from `document` (a small one); the second time
    /// in a row its slot sees it, the request is kept for the times after.
    func remember(_ document: UnsafeBufferPointer<UInt8>, request: HTTPRequest, decoder: any ResponseDecoder) {
        guard document.count <= Self.maxDocumentBytes, document.baseAddress != nil else { return }
        let hash = Self.hash(document)
        let index = Self.slot(of: hash)
        let seenBefore = slots.withLock { slots in
            if slots[index].candidate == hash { return true }
            slots[index].candidate = hash
            return false
        }
        guard seenBefore else { return }
        let entry = Entry(hash: hash, document: Array(document), request: request, decoder: decoder)
        let replaced = slots.withLock { slots in
            defer { slots[index] = Slot(entry: entry) }
            return slots[index].entry
        }
        _ = replaced  // released here, outside the lock
    }

    /// FNV-1a, 64 bits: a few instructions per byte, and documents are short.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    private static func slot(of hash: UInt64) -> Int { Int(truncatingIfNeeded: (hash ^ (hash >> 32)) & UInt64(slotCount - 1)) }
}
