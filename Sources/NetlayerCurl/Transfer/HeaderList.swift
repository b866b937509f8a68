import CCurl
import NetlayerCore
import NetlayerJSON

extension CurlTransfer {
    /// What a transfer's `CURLOPT_HTTPHEADER` list is made of: the request's own headers
    /// and the ones the transport adds. Two transfers with equal keys send the same list,
    /// so a pooled handle keeps the list it built (`CurlTransfer.EasyHandle.headerList(for:build:)`)
    /// instead of building and freeing one per request.
    package struct HeaderList: Equatable {
        let headers: HTTPHeaders
        /// "Expect:" (no 100-continue round trip), for a request that sends a body.
        let suppressesExpect: Bool
        /// The User-Agent sent as a header (nil: none, or libcurl's option sends it).
        let userAgent: String?
        /// The Accept-Encoding libcurl would send for compression, as a header.
        let acceptsEncodings: Bool
        /// "Content-Type:" (none), for a POST that names no type: libcurl would send
        /// `application/x-www-form-urlencoded` for it, body or not. Every body Netlayer
        /// builds has a type; a POST without one, as requests and httpie send it, has none.
        let removesContentType: Bool

        init(_ request: HTTPRequest, userAgentAsOption: Bool) {
            // One pass over the fields for the names that matter here, each compared only
            // when its length matches (this runs for every request).
            var (cookie, expect, userAgentSet, acceptEncoding, contentType) = (false, false, false, false, false)
            for field in request.headers.fields {
                switch field.name.utf8.count {
                case 6: if field.name.caseInsensitiveEquals("Cookie") { cookie = true } else if field.name.caseInsensitiveEquals("Expect") { expect = true }
                case 10: if field.name.caseInsensitiveEquals("User-Agent") { userAgentSet = true }
                case 12: if field.name.caseInsensitiveEquals("Content-Type") { contentType = true }
                case 15: if field.name.caseInsensitiveEquals("Accept-Encoding") { acceptEncoding = true }
                default: break
                }
            }
            var headers = request.headers
            // A request's own cookies go through CURLOPT_COOKIE (CurlTransfer), which libcurl
            // writes into the one Cookie line it sends with the jar's (RFC 6265 section 5.4);
            // as a header line of their own they would make a second Cookie line.
            if cookie { headers["Cookie"] = nil }
            self.headers = headers
            suppressesExpect = !expect
                && (request.body != nil || request.transfer.uploadFrom != nil || request.transfer.multipart != nil)
            userAgent = userAgentAsOption || userAgentSet ? nil : request.options.userAgent
            acceptsEncodings = request.options.compression && !acceptEncoding
            // (A multipart body's type is libcurl's, with its boundary.)
            removesContentType = request.method == .post && request.transfer.multipart == nil && !contentType
        }

        /// A new libcurl list of these headers; the caller frees it with `curl_slist_free_all`.
        func build() -> UnsafeMutablePointer<curl_slist>? {
            var list: UnsafeMutablePointer<curl_slist>?
            var line: [UInt8] = []
            for field in headers {
                // "Name;" is libcurl's way to send a header with an empty value; "Name:" with
                // only whitespace would remove the header instead.
                line.removeAll(keepingCapacity: true)
                line.append(contentsOf: field.name.utf8)
                let value = HTTPHeaders.wireValue(field.value)
                if value.isEmpty {
                    line.append(UInt8(ascii: ";"))
                } else {
                    line.append(UInt8(ascii: ":"))
                    line.append(UInt8(ascii: " "))
                    line.append(contentsOf: value)
                }
                line.append(0)
                list = line.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { curl_slist_append(list, $0.baseAddress) } }
            }
            if suppressesExpect {
                list = curl_slist_append(list, "Expect:")
            }
            if removesContentType {
                list = curl_slist_append(list, "Content-Type:")
            }
            if let userAgent {
                // As a header, libcurl skips formatting it (see CurlSessionManager.CurlGlobal.defaultUserAgentHeader).
                if userAgent == RequestOptions.defaultUserAgent, let line = CurlSessionManager.CurlGlobal.defaultUserAgentHeader {
                    list = curl_slist_append(list, line)
                } else {
                    list = curl_slist_append(list, "User-Agent: \(userAgent)")
                }
            }
            if acceptsEncodings, let line = CurlSessionManager.CurlGlobal.acceptEncodingHeader {
                list = curl_slist_append(list, line)  // what libcurl would send (see acceptEncodingHeader)
            }
            return list
        }
    }
}
