import CCurl
import Glibc

/// `curl_global_init` exactly once, before any thread of ours touches libcurl.
enum CurlGlobal {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    static func ensureInitialized() throws(NetworkError) {
        guard initialized else { throw .generic("curl_global_init failed", curlCode: 2) }
    }

    /// The header line libcurl writes for `CURLOPT_ACCEPT_ENCODING ""` (every content
    /// encoding it can decode, in its order), or nil when it can decode none. Transfers
    /// send it as a header of their own and keep the option set: libcurl then still
    /// decodes the response, and skips formatting the line with its printf (~3k
    /// instructions of a small request with libcurl 7.88).
    nonisolated(unsafe) static let acceptEncodingHeader: UnsafePointer<CChar>? = {  // read-only once built
        guard let info = nl_version_info()?.pointee else { return nil }
        let features = info.features
        var names: [String] = []
        if features & CURL_VERSION_LIBZ != 0 { names += ["deflate", "gzip"] }
        if features & CURL_VERSION_BROTLI != 0 { names.append("br") }
        if features & CURL_VERSION_ZSTD != 0 { names.append("zstd") }
        guard !names.isEmpty else { return nil }
        return UnsafePointer(strdup("Accept-Encoding: " + names.joined(separator: ", ")))
    }()
}
