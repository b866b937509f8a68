import CCurl
import Glibc
import NetlayerCore

/// What a finished transfer comes to: a response, or the error that names what went wrong.
extension CurlTransfer {
    /// The error for an option libcurl refused while `request` was set up. libcurl
    /// refuses a URL past its 8 MB input limit as a bad argument: that one is named
    /// as the head too large to send (`oversizedHead`), as a smaller oversized one is.
    static func rejected(_ rc: CURLcode, request: HTTPRequest) -> NetworkError {
        if rc == CURLE_BAD_FUNCTION_ARGUMENT, let oversized = oversizedHead(of: request) { return oversized }
        return .invalidRequest("libcurl rejected an option: \(String(cString: curl_easy_strerror(rc)))")
    }

    /// How results name libcurl's `CURLINFO_HTTP_VERSION`.
    private static func versionName(_ version: Int) -> String? {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return nil
        }
    }

    /// The C string as a String, without a new one when it equals `known` (the
    /// effective URL of a transfer that was not redirected is the request's own).
    private static func string(_ text: UnsafePointer<CChar>, reusing known: String) -> String {
        var known = known
        let same = known.withUTF8 { utf8 in
            strlen(text) == utf8.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, text, utf8.count) == 0)
        }
        return same ? known : String(cString: text)
    }

    /// libcurl builds a request's line and header fields in a buffer of 1 MiB and
    /// reports one that does not fit as memory running out, as it reports response
    /// headers over its limit. Counted only then, so no request pays for it: the error
    /// naming what is too large when the URL and header fields come near 1 MiB.
    static func oversizedHead(of request: HTTPRequest) -> NetworkError? {
        var size = request.url.utf8.count
        request.headers.withEachFieldUTF8 { name, value in size += name.count + value.count + 4 }
        guard size > 1_000_000 else { return nil }
        return .invalidRequest("the request's URL and header fields are \(size) bytes; libcurl sends at most 1 MiB of them "
                               + "(servers take far less: nginx 8 KiB a line): make the query or the header values smaller")
    }

    /// Maps the finished transfer to a response or an error.
    func result(code: CURLcode) -> Result<HTTPResponse, NetworkError> {
        guard let easy else { return .failure(.generic("transfer never started", curlCode: -1)) }
        cookieOverride?.finish(easy)
        if setCookieLines > 0 { share.cookiesChanged(added: setCookieLines) }
        let sink = self.sink!
        if code == CURLE_WRITE_ERROR, let headerViolation {
            return .failure(.protocolViolation(headerViolation, curlCode: Int(code.rawValue)))
        }
        if code == CURLE_WRITE_ERROR, let failure = sink.failure { return .failure(failure) }
        if code == CURLE_WRITE_ERROR, let writeTimeout { return .failure(writeTimeout) }
        if code == CURLE_ABORTED_BY_CALLBACK, let silenceFailure { return .failure(silenceFailure) }
        if code == CURLE_READ_ERROR || code == CURLE_ABORTED_BY_CALLBACK, let uploadFailure { return .failure(uploadFailure) }
        if code == CURLE_ABORTED_BY_CALLBACK || code == CURLE_WRITE_ERROR,
           isCancelRequested || cancelledByHandler || sink.cancelledByHandler {
            return .failure(.cancelled)
        }
        if code == CURLE_OUT_OF_MEMORY, headers.isEmpty, let oversized = Self.oversizedHead(of: request) {
            return .failure(oversized)
        }
        if code == CURLE_WRITE_ERROR, !sink.exceededLimit {
            // None of this transfer's reasons to stop a body (those are above): libcurl's
            // decoder of the Content-Encoding refused what the server sent (bytes after
            // the end of a gzip stream), which it reports as a failed write.
            let detail = handle?.errorDetail ?? ""
            return .failure(.protocolViolation("the response body does not decode as its Content-Encoding says"
                                               + (detail.isEmpty ? "" : " (\(detail))"), curlCode: Int(code.rawValue)))
        }
        if code == CURLE_BAD_FUNCTION_ARGUMENT, headers.sectionEnded, sink.failure == nil {
            // libcurl 7.88 files each trailer line with its header API, which refuses a
            // line without a colon with this code (a header section's such line is
            // CURLE_WEIRD_SERVER_REPLY, `protocol`).
            return .failure(.protocolViolation("the response's trailer section has a line that is not a field (no colon)",
                                               curlCode: Int(code.rawValue)))
        }
        if code != CURLE_OK {
            var osErrno = 0
            nl_curl_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
            return .failure(CurlErrorMapping.error(for: code, detail: handle?.errorDetail ?? "",
                                                   osErrno: Int32(truncatingIfNeeded: osErrno),
                                                   unixSocket: request.options.transport.unixSocket,
                                                   exceededLimit: sink.exceededLimit, limit: sink.limitDescription))
        }
        if !headers.sectionEnded {
            // libcurl 7.88 ends a transfer whose server closed the connection in the
            // middle of the header section as a success, with the fields so far.
            return .failure(.protocolViolation("the server closed the connection before the end of the response headers",
                                               curlCode: Int(CURLE_PARTIAL_FILE.rawValue)))
        }
        var status = 0
        nl_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        reportFinalProgress(easy)
        let downloaded: String?
        do {
            downloaded = try sink.complete(statusIsAcceptable: request.options.acceptableStatus.contains(status))
        } catch {
            return .failure(error)
        }
        var totalMicros: curl_off_t = 0
        nl_curl_getinfo_off(easy, CURLINFO_TOTAL_TIME_T, &totalMicros)
        var effective: UnsafeMutableRawPointer?
        nl_curl_getinfo_ptr(easy, CURLINFO_EFFECTIVE_URL, &effective)
        let effectiveURL = effective.map { Self.string($0.assumingMemoryBound(to: CChar.self), reusing: request.url) }
            ?? request.url
        var response = HTTPResponse(statusCode: status, headers: HTTPHeaders(received: headers), body: sink.body,
                                    totalMs: Double(totalMicros) / 1000, effectiveURL: effectiveURL)
        response.downloadedFile = downloaded
        response.timing = Self.timing(easy)
        var version = 0
        nl_curl_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        response.httpVersion = Self.versionName(version)
        response.bodyBytes = sink.bytes
        response.sentCredentials = sentCredentials
        if !sentHeaderBytes.isEmpty {
            response.sentHeaderLines = sentHeaderBytes.split(separator: 0x0A).compactMap { line in
                let text = String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
                return text.isEmpty ? nil : text
            }
        }
        if request.transfer.stream != nil { response.streamEvents = sink.events }
        return .success(response)
    }
}
