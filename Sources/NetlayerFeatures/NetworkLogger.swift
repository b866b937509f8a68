import Glibc
import NetlayerCore
import NetlayerJSON

/// The structured logger: request, response and error events at `error`, `info` or
/// `debug` level, with sensitive header values and URL user-info redacted in every
/// event, and bodies scrubbed of every credential the request carried, seen or not
/// (`RequestCredentials`), and of secret fields (`SecretFields`). At `debug` it adds the response body (first 4 KiB) and the request as a
/// runnable `curl` command. Events go to `sink`, or to stderr as JSON lines.
public struct NetworkLogger: NetworkErrorLogger, DataTransferErrorLogger {
    public var level: LogLevel
    /// Lower-case header names whose values never appear.
    public var redactedHeaders: Set<String>
    /// Query parameters whose values never appear, besides `Redaction.defaultQueryNames`
    /// (in `Redaction.normalized` form).
    public var redactedQuery: Set<String>
    public var sink: (@Sendable (LogEvent) -> Void)?

    public static let bodyLimit = 4096

    /// Whether any event is written: not at level `off`.
    public var isEnabled: Bool { level != .off }
    /// At `debug`, response and error events show the lines the transport sent.
    public var wantsSentHeaders: Bool { level >= .debug }

    public init(level: LogLevel = .off, redactedHeaders: Set<String> = Redaction.defaultHeaders,
                redactedQuery: Set<String> = [], sink: (@Sendable (LogEvent) -> Void)? = nil) {
        self.level = level
        self.redactedHeaders = Set(redactedHeaders.map { $0.lowercased() })
        self.redactedQuery = Set(redactedQuery.map { Redaction.normalized($0.utf8) })
        self.sink = sink
    }

    public func log(request: HTTPRequest, context: RequestContext) {
        if !request.options.tls.verify {
            warn("TLS certificate verification is off for \(Redaction.url(in: request.url, queryNames: redactedQuery)) (tls.verify: false)")
        }
        guard level >= .info else { return }
        var fields = base(context)
        fields["method"] = .string(request.method.rawValue)
        fields["url"] = .string(Redaction.url(in: request.url, queryNames: redactedQuery))
        fields["headers"] = .object(Redaction.headers(request.headers, redacting: redactedHeaders, queryNames: redactedQuery))
        if level >= .debug {
            if let body = request.body { fields["bodyBytes"] = .int(Int64(body.count)) }
            fields["curl"] = .string(curlCommand(for: request))
        }
        emit(.info, "request", fields)
    }

    public func log(response: HTTPResponse, request: HTTPRequest, context: RequestContext) {
        guard level >= .info else { return }
        var fields = base(context)
        fields["status"] = .int(Int64(response.statusCode))
        fields["headers"] = .object(Redaction.headers(response.headers, redacting: redactedHeaders, queryNames: redactedQuery))
        fields["elapsedMs"] = .double(response.totalMs)
        fields["bodyBytes"] = .int(Int64(response.body.count))
        if level >= .debug {
            fields["body"] = .string(scrubbedBody(response, of: request, context: context))
            if !response.sentHeaderLines.isEmpty { fields["sent"] = sentLines(of: response, request: request, context: context) }
        }
        emit(.info, "response", fields)
    }

    public func log(error: NetworkError, request: HTTPRequest, context: RequestContext) {
        guard level >= .error else { return }
        let failure = DataTransferError.networkFailure(error)
        var fields = base(context)
        fields["method"] = .string(request.method.rawValue)
        fields["url"] = .string(Redaction.url(in: request.url, queryNames: redactedQuery))
        fields["kind"] = .string(failure.kind.rawValue)
        fields["message"] = .string(Redaction.url(in: failure.message, queryNames: redactedQuery))
        fields["status"] = error.response.map { .int(Int64($0.statusCode)) } ?? .null
        if let response = error.response, level >= .debug {
            fields["body"] = .string(scrubbedBody(response, of: request, context: context))
            // A status error's response was logged with its lines just before.
            if !Self.isStatusError(error), !response.sentHeaderLines.isEmpty {
                fields["sent"] = sentLines(of: response, request: request, context: context)
            }
        }
        emit(.error, "error", fields)
    }

    public func log(error: DataTransferError) {
        guard level >= .error else { return }
        if case .networkFailure = error { return }  // already logged per attempt
        emit(.error, "error", ["kind": .string(error.kind.rawValue),
                               "message": .string(Redaction.url(in: error.message, queryNames: redactedQuery))])
    }

    /// A warning about a risky setting (such as TLS verification turned off).
    public func warn(_ message: String) {
        guard level >= .error else { return }
        emit(.error, "warning", ["message": .string(message)])
    }

    private func base(_ context: RequestContext) -> JSONObject {
        ["id": .int(Int64(truncatingIfNeeded: context.id)), "attempt": .int(Int64(context.attempt))]
    }

    private func emit(_ level: LogLevel, _ event: String, _ fields: JSONObject) {
        let record = LogEvent(level: level, event: event, fields: fields)
        if let sink { sink(record) } else { LogEvent.writeToStderr(record) }
    }

    /// The response body for a debug event: secret fields replaced, and every secret the
    /// request carried (its credentials, the jar's cookies, libcurl's digest answer,
    /// cookies the response set, secret fields of the request body) scrubbed.
    private func scrubbedBody(_ response: HTTPResponse, of request: HTTPRequest, context: RequestContext) -> String {
        let body = SecretFields.redacting(response.body)
        var found = Redaction.secrets(of: request, redacting: redactedHeaders, queryNames: redactedQuery,
                                      cookies: context.cookies)
        found += body.values + RequestCredentials.secretValues(of: response)
        if let sent = request.body { found += SecretFields.redacting(sent).values }
        found += SecretFields.values(of: request.transfer.multipart)
        return Redaction.scrub(Self.bodyText(body.body), of: RequestCredentials.usable(found))
    }

    private static func isStatusError(_ failure: NetworkError) -> Bool {
        if case .error = failure { return true }
        return false
    }

    /// The lines the transport sent, redacted as the request's are: the values of
    /// secret headers (the jar's `Cookie`, a digest answer too), the user-info and secret
    /// query values of the request line's target, and every secret the request carried
    /// wherever another line repeats it.
    private func sentLines(of response: HTTPResponse, request: HTTPRequest, context: RequestContext) -> JSON {
        let secrets = RequestCredentials.usable(
            Redaction.secrets(of: request, redacting: redactedHeaders, queryNames: redactedQuery, cookies: context.cookies)
                + response.sentCredentials)
        return .array(response.sentHeaderLines.map { line in
            // A header line whose name is secret shows none of its value; any other
            // line (a request line too: its name would hold a space) as URLs and
            // secrets are redacted everywhere.
            if let colon = line.firstIndex(of: ":"), !line[..<colon].contains(" ") {
                let name = line[..<colon].lowercased()
                if redactedHeaders.contains(name) || RequestCredentials.alwaysSecretHeaders.contains(name) {
                    return .string("\(line[..<colon]): \(Redaction.marker)")
                }
            }
            return .string(Redaction.scrub(Redaction.url(in: line, queryNames: redactedQuery), of: secrets))
        })
    }

    private static func bodyText(_ body: [UInt8]) -> String {
        let prefix = body.prefix(bodyLimit)
        let text = String(decoding: prefix, as: UTF8.self)
        return body.count > bodyLimit ? text + "…(\(body.count - bodyLimit) more bytes)" : text
    }

    /// The request as a shell command, secrets redacted.
    public func curlCommand(for request: HTTPRequest) -> String {
        var parts = ["curl"]
        if request.method == .head {
            parts.append("--head")
        } else if request.method != .get {
            parts += ["-X", request.method.rawValue]
        }
        parts.append(Self.quote(Redaction.url(in: request.url, queryNames: redactedQuery)))
        for field in request.headers {
            let value = redactedHeaders.contains(field.name.lowercased()) ? Redaction.marker : field.value
            parts += ["-H", Self.quote("\(field.name): \(value)")]
        }
        if let body = request.body {
            let fields = SecretFields.redacting(body)
            let secrets = RequestCredentials.usable(
                Redaction.secrets(of: request, redacting: redactedHeaders, queryNames: redactedQuery) + fields.values)
            let text = Redaction.scrub(String(decoding: fields.body.prefix(Self.bodyLimit), as: UTF8.self), of: secrets)
            parts += ["--data-binary", Self.quote(text)]
        }
        return parts.joined(separator: " ")
    }

    private static func quote(_ s: String) -> String {
        "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
