import FoundationEssentials
import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

extension ConfigDocument {
    /// The parts of the client this config describes. Log events go to `log`, or to
    /// standard error when it is nil.
    package func clientParts(log: (@Sendable (LogEvent) -> Void)? = nil) -> NetlayerClient.Parts {
        let cassette = self.cassette?.clientMode(redaction: CassetteRedaction(headers: redactedHeaders,
                                                                              queryNames: redactedQuery))
        var parts = NetlayerClient.Parts(config: network, makeTransport: NetlayerClient.Parts.curlTransport(
            maxConcurrent: maxConcurrent, cookies: cookies, stubRules: stubRules, cassette: cassette))
        parts.attachment = ConfigAttachment(endpoints: endpoints, openAPI: openAPI)
        parts.errorResolver = RuleBasedErrorResolver(rules: errorRules)
        parts.secretQueryNames = redactedQuery
        parts.logger = NetworkLogger(level: logLevel, redactedHeaders: redactedHeaders, redactedQuery: redactedQuery,
                                     sink: log)
        if let entries = cacheEntries {
            let credentials = redactedHeaders  // secrets by the config's own word
            let bytes = cacheBytes
            parts.makeCache = { ResponseCache(maxEntries: entries, maxBytes: bytes, credentialHeaders: credentials) }
        }
        return parts
    }
}

extension NetlayerClient {
    /// A client as a config document describes it: the same JSON C, Python and the
    /// CLI give `nl_client_new`.
    ///
    /// - Parameter onLog: receives the config's `log` events; nil writes them to
    ///   standard error.
    /// - Parameter makeJSONDecoder: makes the `JSONDecoder` for endpoints whose
    ///   `JSONResponseDecoder` names none (dates, key strategy).
    public convenience init(config: ConfigDocument, makeJSONDecoder: (@Sendable () -> JSONDecoder)? = nil,
                            onLog: (@Sendable (LogEvent) -> Void)? = nil) throws(NetworkError) {
        var parts = config.clientParts(log: onLog)
        parts.makeJSONDecoder = makeJSONDecoder
        try self.init(parts)
    }

    /// A client for the API at `baseURL`, with the config document's defaults.
    ///
    /// ```swift
    /// let client = try NetlayerClient(baseURL: "https://api.example.com/v3/")
    /// let user: User = try await client.send(.get("user")).value
    /// ```
    public convenience init(baseURL: String, headers: HTTPHeaders = [:],
                            makeJSONDecoder: (@Sendable () -> JSONDecoder)? = nil) throws(NetworkError) {
        var config = ConfigDocument()
        config.network.baseURL = baseURL
        config.network.headers = headers
        try self.init(config: config, makeJSONDecoder: makeJSONDecoder)
    }
}
