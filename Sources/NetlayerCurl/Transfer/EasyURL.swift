import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

extension CurlTransfer {
    /// How a pooled easy handle is given its transfer's URL.
    ///
    /// Given a URL string (`CURLOPT_URL`), libcurl parses all of it for every transfer,
    /// about a tenth of a small request's instructions. Most requests of a client go to
    /// the origin of the one before, so a URL whose origin is that of the handle's last
    /// one goes to libcurl as a `CURLU` (`CURLOPT_CURLU`): the origin parsed once, the
    /// path and query set as parts, which libcurl takes as they are; the string goes
    /// along as the transfer's name (libcurl 7.88 then uses the parts to connect and send,
    /// and the string as the effective URL, without parsing it or composing it again).
    ///
    /// Only URLs that libcurl's own parse would leave exactly as they are take that way:
    /// an http(s) URL whose path and query hold only printable ASCII without `%` (libcurl
    /// lower-cases the hex digits of a percent-encoded part it is given), `\`, `#` or a
    /// dot segment (which the parse removes). Any other URL is given as a string, as before.
    /// Used by the thread that configures the handle.
    final class EasyURL {
        /// The parsed origin of the last URL given as parts, with that URL's path and query.
        private var parsed: OpaquePointer?
        /// "scheme://authority" of `parsed`, as the URL wrote it.
        private var origin: [UInt8] = []
        /// `CURLOPT_CURLU` is set on the handle (else `CURLOPT_URL`).
        private var curluSet = false

        deinit { if let parsed { curl_url_cleanup(parsed) } }

        /// The handle was reset (`curl_easy_reset`): it holds neither option now.
        func handleWasReset() { curluSet = false }

        /// Sets `url` as the URL of the next transfer of `easy`.
        func set(_ url: String, on easy: UnsafeMutableRawPointer) -> CURLcode {
            var text = url
            let asParts = text.withUTF8 { bytes -> Bool in
                guard let (originEnd, queryStart) = Self.split(bytes) else { return false }
                return setParts(bytes, originEnd: originEnd, queryStart: queryStart)
            }
            if asParts {
                // With both set, libcurl connects and sends by the parts and names the
                // transfer by the string (its effective URL): it neither parses the string
                // nor writes the parts back into one. Both say the same URL.
                let rc = url.withCString { nl_curl_setopt_str(easy, CURLOPT_URL, $0) }
                if rc != CURLE_OK || curluSet { return rc }
                curluSet = true
                return nl_curl_setopt_ptr(easy, CURLOPT_CURLU, UnsafeMutableRawPointer(parsed))
            }
            if curluSet {
                curluSet = false
                let rc = nl_curl_setopt_ptr(easy, CURLOPT_CURLU, nil)
                if rc != CURLE_OK { return rc }
            }
            return url.withCString { nl_curl_setopt_str(easy, CURLOPT_URL, $0) }  // no copy of a native string
        }

        /// Where the authority ends and the query starts (or `bytes.count`), for a URL
        /// that may be given as parts; nil otherwise.
        private static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> (originEnd: Int, queryStart: Int)? {
            guard let base = bytes.baseAddress else { return nil }
            let n = bytes.count
            let schemeLength: Int
            if n > 12, memcmp(base, "https://", 8) == 0 {
                schemeLength = 5
            } else if n > 11, memcmp(base, "http://", 7) == 0 {
                schemeLength = 4
            } else {
                return nil
            }
            let classes = byteClass
            var i = schemeLength + 3
            while i < n, bytes[i] != UInt8(ascii: "/") {
                // A byte to parse, "?" before a path ("." is a host's), or an upper-case
                // letter, which the parse may write back in lower case
                let b = bytes[i]
                if classes[Int(b)] == 1 || b == UInt8(ascii: "?") || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) { return nil }
                i += 1
            }
            guard i < n, i > schemeLength + 3 else { return nil }
            let originEnd = i
            var queryStart = n
            while i < n {
                let b = bytes[i]
                switch classes[Int(b)] {
                case 0:
                    break
                case 2:
                    if queryStart == n {
                        if b == UInt8(ascii: "?") {
                            queryStart = i
                        } else if bytes[i - 1] == UInt8(ascii: "/") {
                            return nil  // "/." starts a dot segment (or a name such as ".well-known"): parsed
                        }
                    }
                default:
                    return nil
                }
                i += 1
            }
            return (originEnd, queryStart)
        }

        /// Per byte: 0 taken as it is, 1 left to libcurl's parse (a URL holding it goes as
        /// a string: controls, space, non-ASCII, `%`, `#`, `\`), 2 `?` and `.`, which the
        /// scan looks at.
        nonisolated(unsafe) private static let byteClass: UnsafePointer<UInt8> = {  // read-only once built
            let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
            for i in 0..<256 {
                let b = UInt8(i)
                let parsed = b <= 0x20 || b >= 0x7F || b == UInt8(ascii: "%") || b == UInt8(ascii: "#") || b == UInt8(ascii: "\\")
                table[i] = parsed ? 1 : b == UInt8(ascii: "?") || b == UInt8(ascii: ".") ? 2 : 0
            }
            return UnsafePointer(table)
        }()

        /// Puts the URL's origin (parsed when it changed), path and query in `parsed`.
        private func setParts(_ bytes: UnsafeBufferPointer<UInt8>, originEnd: Int, queryStart: Int) -> Bool {
            let flags = UInt32(CURLU_NON_SUPPORT_SCHEME | CURLU_GUESS_SCHEME)  // as libcurl parses a URL string
            let sameOrigin = origin.count == originEnd && origin.withUnsafeBufferPointer { memcmp($0.baseAddress!, bytes.baseAddress!, originEnd) == 0 }
            if parsed == nil || !sameOrigin {
                guard let handle = parsed ?? curl_url() else { return false }
                parsed = handle
                origin = []
                let ok = Self.withCString(bytes[..<originEnd], suffix: UInt8(ascii: "/")) {
                    curl_url_set(handle, CURLUPART_URL, $0, flags) == CURLUE_OK
                }
                guard ok else { return false }
                origin = Array(bytes[..<originEnd])
            }
            guard let parsed else { return false }
            let pathSet = Self.withCString(bytes[originEnd..<queryStart]) { curl_url_set(parsed, CURLUPART_PATH, $0, 0) == CURLUE_OK }
            let querySet = queryStart < bytes.count
                ? Self.withCString(bytes[(queryStart + 1)...]) { curl_url_set(parsed, CURLUPART_QUERY, $0, 0) == CURLUE_OK }
                : curl_url_set(parsed, CURLUPART_QUERY, nil, 0) == CURLUE_OK
            if !(pathSet && querySet) { origin = [] }  // parse again next time
            return pathSet && querySet
        }

        /// Calls `body` with `bytes` (and `suffix`) as a NUL-terminated C string on the stack.
        private static func withCString<R>(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, suffix: UInt8? = nil,
                                           _ body: (UnsafePointer<CChar>) -> R) -> R {
            let length = bytes.count + (suffix == nil ? 0 : 1)
            return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
                let base = buffer.baseAddress!
                UnsafeMutableRawPointer(base).copyMemory(from: bytes.base.baseAddress! + bytes.startIndex, byteCount: bytes.count)
                if let suffix { base[bytes.count] = CChar(bitPattern: suffix) }
                base[length] = 0
                return body(base)
            }
        }
    }
}
