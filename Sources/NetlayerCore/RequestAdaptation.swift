import NetlayerJSON

/// What an adapter (the C ABI's ADAPT hook) may change in a request before an
/// attempt: what request signing (AWS SigV4, HMAC schemes) needs. Each part is
/// checked here, so every adapter gets the same rules.
public struct RequestAdaptation: Sendable {
    /// Merged over the request's headers.
    public var headers: HTTPHeaders?
    /// A new absolute http(s) URL; another origin only with `allowsOtherOrigin`.
    public var url: String?
    /// Replaces the URL's query (after `url`), encoded as every query is.
    public var query: JSONObject?
    /// Replaces the body's bytes (not for GET or HEAD).
    public var body: [UInt8]?

    public init(headers: HTTPHeaders? = nil, url: String? = nil, query: JSONObject? = nil, body: [UInt8]? = nil) {
        self.headers = headers
        self.url = url
        self.query = query
        self.body = body
    }

    /// `request` with the changes, or `invalidRequest` naming what `who` got wrong.
    public func apply(to request: HTTPRequest, allowsOtherOrigin: Bool, who: String,
                      parser: any URLParsing) throws(NetworkError) -> HTTPRequest {
        var adapted = request
        if let url {
            let parsed = parser.parse(url)
            guard let scheme = parsed?.scheme, scheme == "http" || scheme == "https", let origin = parsed?.origin else {
                throw .invalidRequest("\(who) key 'url': '\(url.escapedForMessage)' is not an absolute http or https URL")
            }
            if url.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw .invalidRequest("\(who) key 'url' contains a control character")
            }
            let movesOrigin = origin != parser.parse(request.url)?.origin
            if !allowsOtherOrigin, movesOrigin {
                throw .invalidRequest("\(who) key 'url' changes the origin to \(origin); the config's adaptMayChangeOrigin allows that")
            }
            adapted.url = url
            // A .netrc password belongs to the host it was read for: the new host gets
            // its own entry, or none (a reply's own Authorization still wins, below).
            if movesOrigin, let auth = request.options.auth, case .netrc = auth {
                adapted.headers["Authorization"] = try auth.authorization(for: url, parser: parser)
            }
        }
        if let query {
            let pairs = try HTTPRequest.QueryEncoding.pairs(from: query, context: "\(who) key 'query'")
            adapted.url = try Self.replacingQuery(of: adapted.url, with: HTTPRequest.QueryEncoding.encode(pairs), who: who,
                                                  parser: parser)
        }
        if let headers {
            do {
                try headers.validate()
            } catch {
                throw .invalidRequest("\(who) key 'headers': \(DataTransferError.networkFailure(error).message)")
            }
            adapted.headers = adapted.headers.merging(headers)
        }
        if let body {
            if request.method == .get || request.method == .head {
                throw .invalidRequest("\(who) key 'body': a \(request.method.rawValue) request cannot carry a body")
            }
            if request.transfer.multipart != nil || request.transfer.uploadFrom != nil {
                throw .invalidRequest("\(who) key 'body': the request sends multipart or uploadFrom, not a body")
            }
            adapted.body = body
        }
        return adapted
    }

    /// `url` with its query replaced by `query` (none when empty): the query and
    /// fragment `parser` finds are cut, and the new query joined.
    private static func replacingQuery(of url: String, with query: String, who: String,
                                       parser: any URLParsing) throws(NetworkError) -> String {
        guard parser.parse(url) != nil else {
            throw .invalidRequest("\(who) key 'query' cannot be set on '\(url.escapedForMessage)'")
        }
        let base = url.prefix { $0 != "?" && $0 != "#" }
        return query.isEmpty ? String(base) : "\(base)?\(query)"
    }
}
