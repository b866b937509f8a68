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
/// Direct-mapped: a document's hash picks its one slot, and a newer document with
/// the same slot replaces the older. A miss costs one hash of the document.
final class PreparedRequestCache: Sendable {
    /// Documents longer than this are built each time (and not kept alive here).
    static let maxDocumentBytes = 1024
    static let slotCount = 64

    private struct Entry {
        let hash: UInt64
        let document: [UInt8]
        let request: HTTPRequest
        let decoder: any ResponseDecoder
    }

    private let slots = Locked<[Entry?]>(Array(repeating: nil, count: PreparedRequestCache.slotCount))

    /// The request built earlier from exactly these bytes, if it is still here.
    func request(for document: UnsafeBufferPointer<UInt8>) -> (HTTPRequest, any ResponseDecoder)? {
        guard document.count <= Self.maxDocumentBytes, let base = document.baseAddress else { return nil }
        let hash = Self.hash(document)
        let entry = slots.withLock { $0[Self.slot(of: hash)] }
        guard let entry, entry.hash == hash, entry.document.count == document.count,
              entry.document.withUnsafeBufferPointer({ memcmp($0.baseAddress!, base, document.count) == 0 })
        else { return nil }
        return (entry.request, entry.decoder)
    }

    /// Keeps the request built from `document` (a small one) for the next time it comes.
    func remember(_ document: UnsafeBufferPointer<UInt8>, request: HTTPRequest, decoder: any ResponseDecoder) {
        guard document.count <= Self.maxDocumentBytes, document.baseAddress != nil else { return }
        let hash = Self.hash(document)
        let entry = Entry(hash: hash, document: Array(document), request: request, decoder: decoder)
        let replaced = slots.withLock { slots in
            defer { slots[Self.slot(of: hash)] = entry }
            return slots[Self.slot(of: hash)]
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
