import CCurl

/// The DNS cache and TLS session cache of one client, shared by its event loop and
/// by blocking requests on callers' threads. Connections are not shared (see the
/// shim): the loop keeps its pool, and each pooled blocking handle its connection.
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
