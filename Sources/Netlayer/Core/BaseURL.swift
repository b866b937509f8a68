import CCurl

/// A parsed `baseURL`: checked once by libcurl's URL parser, then reused for every
/// request, so joining a path never re-parses (and never changes) the host.
package struct BaseURL: Sendable, Hashable {
    /// "scheme://authority", exactly as libcurl normalised it.
    package let origin: String
    /// The base path, without a trailing slash ("" for the root).
    package let path: String
    /// The base URL's own query, kept ahead of configured parameters.
    package let query: String?

    /// Parses an absolute http(s) URL.
    /// - Throws: `urlGeneration` when it is not one.
    package init(_ text: String, role: String = "baseURL") throws(NetworkError) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw .invalidRequest("\(role) contains a control character")
        }
        guard let handle = curl_url() else { throw .generic("out of memory", curlCode: 27) }
        defer { curl_url_cleanup(handle) }
        let rc = curl_url_set(handle, CURLUPART_URL, text, 0)
        guard rc == CURLUE_OK else {
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' is not a valid absolute URL (\(String(cString: curl_url_strerror(rc))))")
        }
        let scheme = Self.part(handle, CURLUPART_SCHEME)?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw .urlGeneration("\(role) scheme '\(scheme)' is not http or https")
        }
        guard let host = Self.part(handle, CURLUPART_HOST), !host.isEmpty else {
            throw .urlGeneration("\(role) '\(text.escapedForMessage)' has no host")
        }
        var authority = host
        if let user = Self.part(handle, CURLUPART_USER) {
            let password = Self.part(handle, CURLUPART_PASSWORD).map { ":" + $0 } ?? ""
            authority = "\(user)\(password)@\(host)"
        }
        if let port = Self.part(handle, CURLUPART_PORT) { authority += ":" + port }
        origin = "\(scheme)://\(authority)"
        var basePath = Self.part(handle, CURLUPART_PATH) ?? ""
        while basePath.hasSuffix("/") { basePath.removeLast() }
        path = basePath
        query = Self.part(handle, CURLUPART_QUERY).flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func part(_ handle: OpaquePointer, _ what: CURLUPart) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, what, &out, 0) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }
}
