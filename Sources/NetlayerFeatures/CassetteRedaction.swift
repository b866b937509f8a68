import NetlayerCore
import NetlayerJSON

/// What a recording keeps out of its cassette, and the redacted copy of an exchange
/// it keeps instead. A cassette is meant to be committed next to the tests that
/// replay it, so nothing secret may reach it: the values of secret headers (request
/// and response side, Set-Cookie included), URL user-info, the values of secret
/// query parameters and of secret body fields (`SecretFields`) become
/// `Cassette.redacted`, and so does every occurrence elsewhere (other header values,
/// bodies, error messages: servers echo them back) of those secrets and of the
/// credentials the request carried unseen (`RequestCredentials`: the jar's cookies,
/// a decoded basic password, libcurl's digest answer, cookies the response set).
public struct CassetteRedaction: Sendable {
    /// Lower-case names of the headers whose values are secrets.
    public var headers: Set<String>
    /// Query parameters whose values are secrets besides `Redaction.defaultQueryNames`
    /// (in `Redaction.normalized` form).
    public var queryNames: Set<String>

    public init(headers: Set<String> = Redaction.defaultHeaders, queryNames: Set<String> = []) {
        self.headers = Set(headers.map { $0.lowercased() })
        self.queryNames = Set(queryNames.map { Redaction.normalized($0.utf8) })
    }

    /// The exchange as a cassette keeps it; nil for a request the caller cancelled,
    /// which says nothing about the server. `jarCookies` are the cookies the jar may
    /// have added to the request (`CookieSource`), which the request does not show.
    func exchange(_ request: HTTPRequest, _ result: Result<HTTPResponse, NetworkError>,
                  jarCookies: [StoredCookie] = []) -> Cassette.Exchange? {
        if case .failure(let error) = result, error.isCancelled { return nil }
        var credentials = RequestCredentials(of: request)
        credentials.jarCookies = jarCookies
        for field in request.headers where headers.contains(field.name.lowercased()) {
            credentials.headers.append(HTTPHeaders.Field(name: field.name.lowercased(), value: field.value))
        }
        var found = credentials.secretValues(url: request.url, queryNames: queryNames)
        // Secret fields (an OAuth token request's password, a token response's tokens)
        // are replaced where they stand, and their values scrubbed wherever they echo.
        let sentBody = request.body.map { SecretFields.redacting($0, replacement: Cassette.redacted) }
        found += (sentBody?.values ?? []) + SecretFields.values(of: request.transfer.multipart)
        let secrets = RequestCredentials.usable(found)
        var kept = HTTPRequest(method: request.method, url: text(request.url, secrets),
                               headers: fields(request.headers, secrets))
        kept.body = sentBody.map { bytes($0.body, secrets) }
        // What the response brings (cookies it sets, libcurl's digest answer it may
        // echo, its own secret fields) is scrubbed from the response only: the request
        // went out before, and its URL is what a replay matches.
        var answerSecrets = secrets
        var answerBody: [UInt8] = []
        if case .success(let response) = result {
            let body = SecretFields.redacting(response.body, replacement: Cassette.redacted)
            answerSecrets = RequestCredentials.usable(found + body.values + RequestCredentials.secretValues(of: response))
            answerBody = body.body
        }
        switch result {
        case .success(let response):
            let body = bytes(answerBody, answerSecrets)
            var headers = fields(response.headers, answerSecrets)
            if body.count != response.body.count, headers["content-length"] != nil {
                headers["content-length"] = String(body.count)  // the body kept is the body replayed
            }
            var answered = HTTPResponse(statusCode: response.statusCode, headers: headers, body: body,
                                       effectiveURL: kept.url)
            answered.bodyBytes = Int64(body.count)
            answered.httpVersion = response.httpVersion
            return Cassette.Exchange(request: kept, result: .success(answered))
        case .failure(let error):
            let kind = DataTransferError.networkFailure(error).kind
            let message = text(Self.message(of: error), secrets)
            guard let failure = NetworkError(kind: kind, message: message) else { return nil }
            return Cassette.Exchange(request: kept, result: .failure(failure))
        }
    }

    /// The credentials `request` carries (its credential headers, as sent and decoded,
    /// and its URL's secrets): values a server may have handed out in an earlier
    /// exchange (a token a sign-in answered with), which `finish` scrubs from every
    /// exchange of the cassette.
    func credentialSecrets(of request: HTTPRequest) -> [String] {
        RequestCredentials.usable(RequestCredentials(of: request).secretValues(url: request.url, queryNames: queryNames))
    }

    /// `exchange` with `secrets` also replaced in its headers and bodies (not in its
    /// URL, which a replay matches).
    func scrubbing(_ exchange: Cassette.Exchange, of secrets: [String]) -> Cassette.Exchange {
        var out = exchange
        out.request.headers = fields(exchange.request.headers, secrets)
        out.request.body = exchange.request.body.map { bytes($0, secrets) }
        if case .success(var response) = exchange.result {
            let body = bytes(response.body, secrets)
            var headers = fields(response.headers, secrets)
            if body.count != response.body.count, headers["content-length"] != nil {
                headers["content-length"] = String(body.count)
            }
            response.headers = headers
            response.body = body
            response.bodyBytes = Int64(body.count)
            out.result = .success(response)
        }
        return out
    }

    /// The fields with secret values replaced; a repeated name keeps each value as a
    /// field of its own (each Set-Cookie).
    /// A value that is not UTF-8 (a response's may hold any byte from 0x80 up) is
    /// scrubbed as ISO-8859-1 text and keeps its bytes.
    private func fields(_ given: HTTPHeaders, _ secrets: [String]) -> HTTPHeaders {
        var lines: [(name: String, value: [UInt8])] = []
        var keepsBytes = false
        given.withEachSeparateFieldUTF8 { nameBytes, valueBytes in
            let name = String(decoding: nameBytes, as: UTF8.self)
            if headers.contains(name.lowercased()) {
                lines.append((name, Array(Cassette.redacted.utf8)))
            } else if let value = String(validating: valueBytes, as: UTF8.self) {
                lines.append((name, Array(text(value, secrets).utf8)))
            } else {
                keepsBytes = true
                let scrubbed = text(HTTPHeaders.text(ofValue: valueBytes).text, secrets).unicodeScalars
                lines.append((name, scrubbed.allSatisfy { $0.value <= 0xFF }
                                ? scrubbed.map { UInt8($0.value) } : Array(String(scrubbed).utf8)))
            }
        }
        if keepsBytes { return HTTPHeaders(receivedFields: lines) }
        var out = HTTPHeaders()
        for (name, value) in lines { out.add(name: name, value: String(decoding: value, as: UTF8.self)) }
        return out
    }

    /// A URL, header value or message with user-info, secret query values and the
    /// request's secrets replaced.
    private func text(_ text: String, _ secrets: [String]) -> String {
        let urls = Redaction.url(in: text, queryNames: queryNames, replacement: Cassette.redacted)
        return Redaction.scrub(urls, of: secrets, replacement: Cassette.redacted)
    }

    /// A body with the request's secrets replaced, compared as bytes (a body need not
    /// be text).
    private func bytes(_ body: [UInt8], _ secrets: [String]) -> [UInt8] {
        var out = body
        let marker = Array(Cassette.redacted.utf8)
        for secret in secrets {
            let needle = Array(secret.utf8)
            guard !needle.isEmpty, out.count >= needle.count, out.firstRange(of: needle) != nil else { continue }
            out = out.replacing(needle, with: marker)
        }
        return out
    }

    /// The error's own message, before the general redaction of `DataTransferError`
    /// (which writes another marker).
    package static func message(of error: NetworkError) -> String {
        switch error {
        case .notConnected(let m), .timedOut(let m), .tls(let m), .urlGeneration(let m), .invalidRequest(let m),
             .tooLarge(let m), .io(let m), .cancelledBecause(let m), .protocolViolation(let m, _), .generic(let m, _):
            return m
        case .error, .cancelled:
            return DataTransferError.networkFailure(error).message
        }
    }
}
