import CCurl
import NetlayerCore
import NetlayerJSON

/// libcurl's URL parser (`CURLU`), for reading and changing the parts of a URL: the
/// one way redirects, ADAPT replies and the stub transport take a URL apart.
package final class CurlURL {
    private let handle: OpaquePointer

    /// nil when `url` does not parse (or memory ran out).
    init?(_ url: String, flags: UInt32 = 0) {
        guard let handle = curl_url() else { return nil }
        self.handle = handle
        guard set(CURLUPART_URL, url, flags: flags) else { return nil }
    }

    deinit { curl_url_cleanup(handle) }

    /// Sets `part` (nil removes it; a URL resolves against the current one).
    @discardableResult
    func set(_ part: CURLUPart, _ value: String?, flags: UInt32 = 0) -> Bool {
        curl_url_set(handle, part, value, flags) == CURLUE_OK
    }

    func part(_ what: CURLUPart, flags: UInt32 = 0) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, what, &out, flags) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }

    /// "scheme://host:port" with the default port filled in, lower case.
    var origin: String? {
        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST) else { return nil }
        let port = part(CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)) ?? ""
        return "\(scheme.lowercased())://\(host.lowercased()):\(port)"
    }
}
