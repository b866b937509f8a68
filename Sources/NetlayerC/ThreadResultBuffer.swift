import Glibc

/// Result documents lent to the calling thread by `nl_request_borrowed` and
/// `nl_call_borrowed`: one malloc'ed buffer per thread, reused call after call and
/// freed when the thread exits, so a caller that copies the document at once (a
/// binding, a loop) makes no `nl_free` call per request.
enum ThreadResultBuffer {
    /// Kept between calls up to this size; a larger document's buffer is given back
    /// on the next call that needs no more than `shrinkBelow`.
    private static let retainedCapacity = 64 * 1024
    private static let shrinkBelow = 16 * 1024
    private static let minimumCapacity = 4096

    /// The buffer's layout: its capacity, then the NUL-terminated document.
    private struct Header {
        var capacity: Int
    }

    /// nil when the process has no thread-specific key left (PTHREAD_KEYS_MAX).
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        // A thread's buffer goes with the thread; the destructor runs only for a non-NULL value.
        return pthread_key_create(&key) { free($0) } == 0 ? key : nil
    }()

    /// The calling thread's buffer holding `bytes` and a NUL, valid until the thread's
    /// next call here or its exit; nil only when memory (or thread-specific storage)
    /// is exhausted.
    static func lend(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafePointer<CChar>? {
        guard let key else { return nil }
        let needed = bytes.count + 1
        var block = pthread_getspecific(key)
        let capacity = block?.load(as: Header.self).capacity ?? 0
        if needed > capacity || (capacity > retainedCapacity && needed <= shrinkBelow) {
            let newCapacity = max(needed, minimumCapacity)
            if let resized = realloc(block, MemoryLayout<Header>.stride + newCapacity) {
                resized.storeBytes(of: Header(capacity: newCapacity), as: Header.self)
                pthread_setspecific(key, resized)
                block = resized
            } else if needed > capacity {
                return nil
            }  // else a failed shrink: the large buffer still serves
        }
        guard let block else { return nil }
        let text = block.advanced(by: MemoryLayout<Header>.stride).assumingMemoryBound(to: UInt8.self)
        if let base = bytes.baseAddress { text.update(from: base, count: bytes.count) }
        text[bytes.count] = 0
        return UnsafePointer(UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self))
    }
}
