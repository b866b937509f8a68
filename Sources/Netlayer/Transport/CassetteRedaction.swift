/// What a recording keeps out of its cassette, and the redacted copy of an exchange
/// it keeps instead. A cassette is meant to be committed next to the tests that
/// replay it, so nothing secret may reach it: the values of secret headers (request
/// and response side, Set-Cookie included), URL user-info and the values of secret
/// query parameters become `Cassette.redacted`, and so does every occurrence of
/// those secrets in other header values, bodies and error messages (servers echo
/// them back).
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
    /// which says nothing about the server.
    func exchange(_ request: HTTPRequest, _ result: Result<HTTPResponse, NetworkError>) -> Cassette.Exchange? {
        if case .failure(let error) = result, error.isCancelled { return nil }
        let secrets = Redaction.secrets(of: request, redacting: headers, queryNames: queryNames)
        var kept = HTTPRequest(method: request.method, url: text(request.url, secrets),
                               headers: fields(request.headers, secrets))
        kept.body = request.body.map { bytes($0, secrets) }
        switch result {
        case .success(let response):
            let body = bytes(response.body, secrets)
            var headers = fields(response.headers, secrets)
            if body.count != response.body.count, headers["content-length"] != nil {
                headers["content-length"] = String(body.count)  // the body kept is the body replayed
            }
            var answer = HTTPResponse(statusCode: response.statusCode, headers: headers, body: body,
                                      effectiveURL: kept.url)
            answer.bodyBytes = Int64(body.count)
            answer.httpVersion = response.httpVersion
            return Cassette.Exchange(request: kept, result: .success(answer))
        case .failure(let error):
            let kind = DataTransferError.networkFailure(error).kind
            let message = text(Self.message(of: error), secrets)
            guard let failure = NetworkError(kind: kind, message: message) else { return nil }
            return Cassette.Exchange(request: kept, result: .failure(failure))
        }
    }

    /// The fields with secret values replaced; a repeated name keeps each value as a
    /// field of its own (each Set-Cookie).
    private func fields(_ given: HTTPHeaders, _ secrets: [String]) -> HTTPHeaders {
        var out = HTTPHeaders()
        var seen = Set<String>()
        for field in given.fields {
            let name = field.name.lowercased()
            guard seen.insert(name).inserted else { continue }
            for value in given.values(named: field.name) {
                out.add(name: field.name, value: headers.contains(name) ? Cassette.redacted : text(value, secrets))
            }
        }
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
    static func message(of error: NetworkError) -> String {
        switch error {
        case .notConnected(let m), .timedOut(let m), .tls(let m), .urlGeneration(let m), .invalidRequest(let m),
             .tooLarge(let m), .io(let m), .cancelledBecause(let m), .protocolViolation(let m, _), .generic(let m, _):
            return m
        case .error, .cancelled:
            return DataTransferError.networkFailure(error).message
        }
    }
}
