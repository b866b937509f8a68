import CCurl

/// The connection cache, DNS cache and TLS session cache of one client, shared by
/// its event loop and by blocking requests on callers' threads, so every request of
/// a client draws on one pool of connections.
final class CurlShare: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let locks: UnsafeMutableRawPointer

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
}
