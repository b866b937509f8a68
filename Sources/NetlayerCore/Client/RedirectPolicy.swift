import NetlayerJSON


extension RequestAttempts {
    /// Follows redirects in Netlayer rather than in libcurl, so the rules every client
    /// must keep are in one place (reliability notes, rows 1-3):
    /// - the request's credentials (`RequestCredentials`: credential headers whoever set
    ///   them, digest) are dropped when the scheme, host or port changes; the jar's cookies
    ///   are libcurl's to add, by their own rules, on every hop;
    /// - a 303, and a 301 or 302 answering a POST, become a GET without the body and its
    ///   content headers; 307 and 308 repeat the request as it was;
    /// - only http and https targets are followed, at most `maxRedirects` times.
    package enum RedirectPolicy {
        enum Step {
            case done
            case follow(HTTPRequest)
            case fail(NetworkError)
        }

        static let contentHeaders = ["Content-Type", "Content-Length", "Content-Encoding", "Content-Language",
                                     "Content-Location", "Transfer-Encoding", "Digest"]

        static func next(after result: Result<HTTPResponse, NetworkError>, request: HTTPRequest,
                         redirects: Int, parser: @autoclosure () -> any URLParsing) -> Step {
            guard case .success(let response) = result, isRedirect(response.statusCode), request.options.followRedirects,
                  var location = response.headers["location"], !location.isEmpty
            else { return .done }
            if location.contains(","), case let values = response.headers.values(named: "location"), values.count > 1 {
                // RFC 9110 10.2.2: one URI reference. Repeated, they were joined into one URL
                // no server meant: the same one twice is that one; differing ones are refused,
                // as Chromium does (ERR_RESPONSE_HEADERS_MULTIPLE_LOCATION).
                guard Set(values).count == 1 else {
                    return .fail(.protocolViolation("the redirect has several differing Location fields", curlCode: 8))
                }
                location = values[0]
            }
            guard redirects < request.options.maxRedirects else {
                return .fail(.generic("too many redirects (maxRedirects is \(request.options.maxRedirects))",
                                      curlCode: 47))  // CURLE_TOO_MANY_REDIRECTS
            }
            let parser = parser()  // asked for only when there is a redirect to follow
            // A reference that is only a fragment keeps the path and query (RFC 3986
            // 5.2.2), which libcurl before 8.8 drops (curl/curl#13394): resolved as the
            // request's own URL with that fragment.
            let reference = location.first == "#"
                ? String(request.url.prefix(while: { $0 != "#" })) + location : location
            guard let target = parser.resolve(reference, against: request.url) else {
                return .fail(.protocolViolation("the redirect Location cannot be parsed as a URL",
                                                curlCode: 3))  // CURLE_URL_MALFORMAT
            }
            guard target.scheme == "http" || target.scheme == "https" else {
                return .fail(.protocolViolation("redirect to a '\(target.scheme)' URL refused: only http and https are followed",
                                                curlCode: 1))  // CURLE_UNSUPPORTED_PROTOCOL
            }
            var next = request
            if let origin = parser.parse(request.url)?.origin, origin != target.origin {
                next = RequestCredentials.strippingCredentials(from: request)
            }
            next.url = target.url
            let becomesGet = response.statusCode == 303 && request.method != .head
                || (response.statusCode == 301 || response.statusCode == 302) && request.method == .post
            if becomesGet {
                next.method = .get
                next.body = nil
                next.transfer.multipart = nil
                next.transfer.uploadFrom = nil
                for name in contentHeaders { next.headers[name] = nil }
            } else if let why = next.transfer.whyBodyIsNotRepeatable() {
                return .fail(.io("the \(response.statusCode) redirect repeats the request, but \(why)"))
            }
            return .follow(next)
        }

        /// The statuses a redirect is followed for (not 300 and 304, which carry no target to go to).
        package static func isRedirect(_ status: Int) -> Bool {
            switch status {
            case 301, 302, 303, 307, 308: return true
            default: return false
            }
        }
    }
}
