import CCurl

/// The DNS cache and TLS session cache of one client, shared by its event loop and
/// by blocking requests on callers' threads, and the parsed form of the URLs it
/// requests again and again. Connections are not shared (see the shim): the loop
/// keeps its pool, and each pooled blocking handle its connection.
final class CurlShare: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let locks: UnsafeMutableRawPointer
    private let parsedURLs = RepeatCache<ParsedURL>(slots: 64, maxKeyBytes: 2048)

    init() throws(NetworkError) {
        try CurlGlobal.ensureInitialized()
        var locks: UnsafeMutableRawPointer?
        guard let handle = nl_share_create(&locks), let locks else {
            throw .generic("curl_share_init failed", curlCode: 27)
        }
        self.handle = handle
        self.locks = locks
    }

    deinit { nl_share_destroy(handle, locks) }

    /// The parsed form of `url` when it is one this client keeps requesting (from its
    /// second request on); nil otherwise, and libcurl parses the text.
    func parsedURL(for url: String) -> ParsedURL? {
        var url = url  // withUTF8 copies only a non-native string
        return url.withUTF8 { bytes in
            parsedURLs.value(for: bytes) { ParsedURL(String(decoding: bytes, as: UTF8.self)) }
        }
    }
}
