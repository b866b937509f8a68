import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

extension CurlSessionManager {
    /// `curl_global_init` exactly once, before any thread of ours touches libcurl.
    package enum CurlGlobal {
        private static let initialized: Bool = {
            curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
        }()

        static func ensureInitialized() throws(NetworkError) {
            guard initialized else { throw .generic("curl_global_init failed", curlCode: 2) }
        }

        /// Whether an environment variable libcurl reads for a proxy was set when first
        /// asked (libcurl would read them on every transfer; Netlayer asks once). Without
        /// one, transfers set "no proxy" outright. With a proxy in play the user agent goes
        /// in `CURLOPT_USERAGENT`, the only way libcurl puts it in a proxy's CONNECT
        /// request; else it is a header of the request's own, which spares libcurl
        /// formatting it with its printf (~2k instructions with 7.88).
        static let environmentNamesProxy: Bool = {
            ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"].contains { name in
                guard let value = getenv(name) else { return false }
                return value.pointee != 0
            }
        }()

        /// `User-Agent: ` and the default user agent, made once.
        nonisolated(unsafe) static let defaultUserAgentHeader: UnsafePointer<CChar>? =  // read-only
            UnsafePointer(strdup("User-Agent: " + RequestOptions.defaultUserAgent))

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

        /// Whether libcurl was built with HTTP/3.
        static var hasHTTP3: Bool {
            guard let info = nl_version_info() else { return false }
            return info.pointee.features & (1 << 22) != 0  // CURL_VERSION_HTTP3, a macro Swift cannot import
        }
    }
}
