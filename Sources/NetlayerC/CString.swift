import Glibc

/// C strings crossing the ABI: borrowed inputs read as bytes, outputs malloc'ed
/// for the caller to release with `nl_free`.
enum CString {
    /// A malloc'ed NUL-terminated copy of `bytes`; nil only when memory is exhausted.
    static func make(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        guard let out = malloc(bytes.count + 1)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if !bytes.isEmpty { bytes.withUnsafeBufferPointer { out.update(from: $0.baseAddress!, count: bytes.count) } }
        out[bytes.count] = 0
        return UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
    }

    /// The bytes of a borrowed C string (no UTF-8 check: the JSON parser does it
    /// and reports the byte offset).
    static func bytes(_ p: UnsafePointer<CChar>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p))
    }

    /// Calls `body` with a NUL-terminated copy of `bytes` that lives only for the call
    /// (on the stack when small).
    static func withTemporary(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> Void) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { text in
            bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(text).copyMemory(from: $0) }
            text[bytes.count] = 0
            body(text.baseAddress!)
        }
    }
}
