import Glibc
import Netlayer

extension CString {
    /// A result document on its way across the ABI: the writer that wrote it, whose
    /// malloc'ed buffer becomes the caller's C string without a copy (`nl_request`), or
    /// bytes made elsewhere (a failure found before the request ran).
    enum OutgoingDocument: ~Copyable {
        case written(JSONWriter)
        case bytes([UInt8])

        /// A malloc'ed NUL-terminated C string for the caller to `nl_free`.
        consuming func cString() -> UnsafeMutablePointer<CChar>? {
            switch consume self {
            case .written(let writer): return writer.takeCString()
            case .bytes(let bytes): return CString.make(bytes)
            }
        }

        /// The calling thread's lent buffer holding it (`ThreadResultBuffer`).
        consuming func lend() -> UnsafePointer<CChar>? {
            switch consume self {
            case .written(let writer): return writer.withBytes { ThreadResultBuffer.lend($0) }
            case .bytes(let bytes): return bytes.withUnsafeBufferPointer { ThreadResultBuffer.lend($0) }
            }
        }
    }
}
