import NetlayerCore
import NetlayerFeatures
import NetlayerJSON


/// A client config document (what `nl_client_new` takes) read into core types: the
/// one reader of config JSON for C, Python, the CLI and Swift. The keys are those of
/// `docs/documents.md`.
///
/// ```swift
/// let client = try NetlayerClient(config: ConfigDocument(json: #"{"baseURL": "https://api.example.com/"}"#))
/// ```
public struct ConfigDocument: Sendable {
    package var network = NetworkConfig()
    package var maxConcurrent = 64
    package var cookies = CookieJar()
    package var adaptMayChangeOrigin = false
    package var stubRules: [StubSessionManager.Rule]?
    /// Record into a cassette file, or replay one.
    package var cassette: CassetteDocument?
    /// Named endpoints, kept as documents so `nl_call` can merge an overlay first.
    package var endpoints = JSONObject()
    /// The `openapi` document, its credentials and settings.
    package var openAPI: OpenAPIConfig?
    package var errorRules: [RuleBasedErrorResolver.Rule] = []
    /// `log.level`, else `NETLAYER_LOG`, else off.
    package var logLevel = LogLevel.environmentDefault
    package var redactedHeaders = Redaction.defaultHeaders
    /// Query parameters whose values are secrets, besides the well-known names.
    package var redactedQuery: Set<String> = []
    package var tlsVerifyOff = false
    /// Entries of the response cache; nil when the cache is off.
    package var cacheEntries: Int?
    package var cacheBytes = 64 * 1024 * 1024

    static let knownKeys: Set<String> = [
        "baseURL", "headers", "query", "timeout", "connectTimeout", "acceptableStatus", "followRedirects",
        "maxRedirects", "maxResponseBytes", "maxConcurrent", "compression", "userAgent", "proxy", "tls", "auth", "cookies", "endpoints",
        "retry", "deadline", "errorResolver", "log", "cache",
        "maxStreamItemBytes", "maxDownloadBytes", "httpVersion", "unixSocket", "resolve", "interface", "adaptMayChangeOrigin", "stub",
        "cassette", "openapi",
    ]
    static let unsupportedKeys: Set<String> = []

    /// The empty config: every key at its default.
    public init() {}

    /// Reads `json`; an unknown key or a value of the wrong type is `invalidRequest`
    /// naming the key.
    public init(_ json: JSON) throws(NetworkError) {
        let doc = try DocumentReader(json, context: "config")
        try doc.checkKeys(known: Self.knownKeys, unsupported: Self.unsupportedKeys)

        if let base = try doc.string("baseURL") {
            network.baseURL = base
        }
        if let headers = try doc.requestHeaders("headers") { network.headers = headers }
        if let query = try doc.query("query") { network.queryParameters = query }

        var options = RequestOptions()
        if let t = try doc.seconds("timeout") { options.timeout = t }
        if let t = try doc.seconds("connectTimeout") { options.connectTimeout = t }
        if let a = try doc.acceptableStatus("acceptableStatus") { options.acceptableStatus = a }
        if let f = try doc.bool("followRedirects") { options.followRedirects = f }
        if let m = try doc.integer("maxRedirects", in: 0...1000) { options.maxRedirects = m }
        if let m = try doc.integer("maxResponseBytes", in: 0...Int(Int64.max)) { options.maxResponseBytes = m }
        if let m = try doc.integer("maxStreamItemBytes", in: 1...Int(Int64.max)) { options.maxStreamItemBytes = m }
        if let m = try doc.integer("maxDownloadBytes", in: 0...Int(Int64.max)) { options.maxDownloadBytes = m }
        if let c = try doc.bool("compression") { options.compression = c }
        if let ua = try doc.string("userAgent") {
            do {
                try HTTPHeaders.validate(name: "User-Agent", value: ua)
            } catch {
                throw .invalidRequest("config key 'userAgent': \(DataTransferError.networkFailure(error).message)")
            }
            options.userAgent = ua
        }
        if let proxy = try doc.string("proxy") { options.proxy = proxy }
        if let tls = try doc.reader("tls") {
            try tls.checkKeys(known: ["verify", "caFile", "pinnedPublicKey", "certFile", "keyFile", "keyPassword"])
            if let v = try tls.bool("verify") { options.tls.verify = v }
            if let f = try tls.filePath("caFile") { options.tls.caFile = f }
            if let p = try tls.string("pinnedPublicKey") { options.tls.pinnedPublicKey = p }
            if let c = try tls.filePath("certFile") { options.tls.certFile = c }
            if let k = try tls.filePath("keyFile") { options.tls.keyFile = k }
            if let p = try tls.string("keyPassword") { options.tls.keyPassword = p }
            try options.tls.validate()
        }
        options.auth = try doc.authentication("auth")
        adaptMayChangeOrigin = try doc.bool("adaptMayChangeOrigin") ?? false
        if let stub = doc.value("stub") { stubRules = try StubDocument.rules(stub) }
        if let cassette = doc.value("cassette") {
            guard stubRules == nil else {
                throw .invalidRequest("config keys 'cassette' and 'stub' exclude each other: a client answers from one or the other")
            }
            self.cassette = try CassetteDocument(cassette)
        }
        if let version = try doc.string("httpVersion") {
            guard let v = TransportChoices.HTTPVersion(rawValue: version) else {
                throw .invalidRequest("config key 'httpVersion': '\(version.escapedForMessage)' is not one of 1.1, 2, 2-prior-knowledge, 3")
            }
            options.transport.httpVersion = v
        }
        options.transport.unixSocket = try doc.filePath("unixSocket")
        options.transport.interface = try doc.string("interface")
        if let entries = doc.value("resolve") {
            guard case .array(let items) = entries, let names = Optional(items.compactMap(\.stringValue)),
                  names.count == items.count else {
                throw .invalidRequest("config key 'resolve' must be an array of HOST:PORT:ADDRESS strings")
            }
            options.transport.resolve = names
        }
        do {
            try options.transport.validate()
        } catch {
            throw .invalidRequest("config key \(DataTransferError.networkFailure(error).message)")
        }
        if let retry = try doc.retry("retry", over: options.retry) { options.retry = retry }
        if let d = try doc.seconds("deadline") { options.deadline = d }
        network.requestOptions = options
        if let m = try doc.integer("maxConcurrent", in: 1...100_000) { maxConcurrent = m }
        switch doc.value("cookies") {
        case nil: break
        case .bool(let on)?: cookies.enabled = on
        case .object?:
            let jar = try doc.reader("cookies")!
            try jar.checkKeys(known: ["enabled", "file", "save", "keepSessionCookies"])
            cookies.enabled = try jar.bool("enabled") ?? true
            cookies.file = try jar.filePath("file")
            cookies.save = try jar.bool("save") ?? true
            cookies.keepSessionCookies = try jar.bool("keepSessionCookies") ?? false
            if cookies.file?.isEmpty == true { throw .invalidRequest("config key 'cookies': file must be a path") }
        case let other?:
            throw .invalidRequest("config key 'cookies' must be true, false or an object, not \(other.typeName)")
        }
        if let cache = try doc.reader("cache") {
            try cache.checkKeys(known: ["enabled", "maxEntries", "maxBytes"])
            let entries = try cache.integer("maxEntries", in: 1...1_000_000) ?? 256
            let bytes = try cache.integer("maxBytes", in: 1...(1 << 40)) ?? 64 * 1024 * 1024
            if try cache.bool("enabled") ?? false { cacheEntries = entries; cacheBytes = bytes }
        }
        if let rules = doc.value("errorResolver") { errorRules = try Self.errorRules(rules) }
        if let log = try doc.reader("log") {
            try log.checkKeys(known: ["level", "redact", "redactQuery"])
            if let name = try log.string("level") {
                guard let level = LogLevel(name: name) else {
                    throw .invalidRequest("config key 'log': level '\(name.escapedForMessage)' is not one of off, error, info, debug")
                }
                logLevel = level
            }
            if let redact = log.value("redact") {
                guard case .array(let names) = redact, names.allSatisfy({ $0.stringValue != nil }) else {
                    throw .invalidRequest("config key 'log': redact must be an array of header names")
                }
                // A name that is not a token (RFC 9110 section 5.1) names no header: it
                // would redact nothing, silently.
                for name in names.compactMap(\.stringValue)
                where name.isEmpty || !name.utf8.allSatisfy(isHTTPTokenByte) {
                    throw .invalidRequest("config key 'log': redact entry '\(name.escapedForMessage)' is not a header name (a token of RFC 9110 section 5.1)")
                }
                // The defaults always stay redacted; the list adds to them.
                redactedHeaders.formUnion(names.compactMap { $0.stringValue?.lowercased() })
            }
            if let redact = log.value("redactQuery") {
                guard case .array(let names) = redact, names.allSatisfy({ $0.stringValue != nil }) else {
                    throw .invalidRequest("config key 'log': redactQuery must be an array of query parameter names")
                }
                redactedQuery = Set(names.compactMap { $0.stringValue.map { Redaction.normalized($0.utf8) } })
            }
        }

        if let openAPI = doc.value("openapi") {
            let config = try OpenAPIConfig(openAPI)
            // An API key is a secret wherever it goes, like Authorization.
            redactedHeaders.formUnion(config.secretNames.headers)
            redactedQuery.formUnion(config.secretNames.query)
            self.openAPI = config
        }
        // Headers the config marks secret stay with their origin, like Authorization.
        network.requestOptions.secretHeaders = redactedHeaders.subtracting(["set-cookie"])
        if !options.tls.verify { tlsVerifyOff = true }
        if let endpoints = try doc.object("endpoints") {
            for member in endpoints {
                // Validated now so a broken named endpoint fails nl_client_new.
                let named = try EndpointDocument(member.value, context: "named endpoint '\(member.key)'",
                                                 allowParams: false)
                do {
                    try PathTemplate.checkSyntax(named.endpoint.path)
                } catch {
                    throw .invalidRequest("named endpoint '\(member.key)' key 'path': \(DataTransferError.networkFailure(error).message)")
                }
            }
            self.endpoints = endpoints
        }
    }

    /// Reads the JSON text `json`.
    public init(json: String) throws(NetworkError) {
        try self.init(try JSON.parseDocument(json, what: "config"))
    }

    /// Reads the JSON file at `path`.
    public init(contentsOfFile path: String) throws(NetworkError) {
        try self.init(try JSON.parseDocument(try DocumentFile.read(path), what: "config file '\(path.escapedForMessage)'"))
    }

    private static func errorRules(_ value: JSON) throws(NetworkError) -> [RuleBasedErrorResolver.Rule] {
        guard case .array(let items) = value else {
            throw .invalidRequest("config key 'errorResolver' must be an array of rules, not \(value.typeName)")
        }
        var rules: [RuleBasedErrorResolver.Rule] = []
        for (i, item) in items.enumerated() {
            let rule = try DocumentReader(item, context: "config key 'errorResolver' rule \(i)")
            try rule.checkKeys(known: ["status", "code", "message", "messageKeyPath"])
            guard let status = try rule.acceptableStatus("status") else {
                throw .invalidRequest("config key 'errorResolver' rule \(i) needs 'status'")
            }
            rules.append(RuleBasedErrorResolver.Rule(status: status, code: try rule.string("code"),
                                                     message: try rule.string("message"),
                                                     messageKeyPath: try rule.string("messageKeyPath")))
        }
        return rules
    }
}
