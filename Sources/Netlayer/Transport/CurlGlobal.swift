import CCurl

/// `curl_global_init` exactly once, before any thread of ours touches libcurl.
enum CurlGlobal {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    static func ensureInitialized() throws(NetworkError) {
        guard initialized else { throw .generic("curl_global_init failed", curlCode: 2) }
    }
}
