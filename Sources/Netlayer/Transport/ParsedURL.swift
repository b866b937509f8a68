import CCurl

/// libcurl's parsed form of a URL (a `CURLU` handle) for `CURLOPT_CURLU`.
///
/// Given one, libcurl copies it instead of parsing the URL text and writing it out
/// again: about 12k of the ~50k instructions libcurl spends on a small request.
/// libcurl only reads the handle (`curl_url_dup` per transfer), so one may serve
/// transfers on several threads at once; each transfer keeps a reference until it ends.
final class ParsedURL: @unchecked Sendable {
    let handle: OpaquePointer

    /// nil when libcurl would refuse the URL: the transfer then passes the text alone
    /// and libcurl reports the error as usual.
    init?(_ url: String) {
        guard let handle = url.withCString({ nl_url_parse($0) }) else { return nil }
        self.handle = handle
    }

    deinit { curl_url_cleanup(handle) }
}
