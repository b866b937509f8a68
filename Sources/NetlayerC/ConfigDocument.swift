import Netlayer

/// The config document of `nl_client_new`, translated into core types.
struct ConfigDocument {
    var network = NetworkConfig()
    var maxConcurrent = 64
    /// Named endpoints, kept as documents so `nl_call` can merge an overlay first.
    var endpoints = JSONObject()

    static let knownKeys: Set<String> = [
        "baseURL", "headers", "query", "timeout", "connectTimeout", "acceptableStatus", "followRedirects",
        "maxRedirects", "maxResponseBytes", "maxConcurrent", "compression", "userAgent", "proxy", "tls", "endpoints",
    ]
    static let unsupportedKeys: Set<String> = ["deadline", "retry", "cache", "errorResolver", "log"]

    init(_ json: JSON) throws(NetworkError) {
        let doc = try DocumentReader(json, context: "config")
        try doc.checkKeys(known: Self.knownKeys, unsupported: Self.unsupportedKeys)

        if let base = try doc.string("baseURL") {
            _ = try BaseURL(base)  // fail at creation, not on the first request
            network.baseURL = base
        }
        if let headers = try doc.headers("headers") { network.headers = headers }
        if let query = try doc.query("query") { network.queryParameters = query }

        var options = RequestOptions()
        if let t = try doc.seconds("timeout") { options.timeout = t }
        if let t = try doc.seconds("connectTimeout") { options.connectTimeout = t }
        if let a = try doc.acceptableStatus("acceptableStatus") { options.acceptableStatus = a }
        if let f = try doc.bool("followRedirects") { options.followRedirects = f }
        if let m = try doc.integer("maxRedirects", in: 0...1000) { options.maxRedirects = m }
        if let m = try doc.integer("maxResponseBytes", in: 0...Int(Int64.max)) { options.maxResponseBytes = m }
        if let c = try doc.bool("compression") { options.compression = c }
        if let ua = try doc.string("userAgent") {
            try HTTPHeaders.validate(name: "User-Agent", value: ua)
            options.userAgent = ua
        }
        if let proxy = try doc.string("proxy") { options.proxy = proxy }
        if let tls = try doc.reader("tls") {
            try tls.checkKeys(known: ["verify", "caFile", "pinnedPublicKey"])
            if let v = try tls.bool("verify") { options.tls.verify = v }
            if let f = try tls.string("caFile") { options.tls.caFile = f }
            if let p = try tls.string("pinnedPublicKey") { options.tls.pinnedPublicKey = p }
        }
        network.requestOptions = options
        if let m = try doc.integer("maxConcurrent", in: 1...100_000) { maxConcurrent = m }

        if let endpoints = try doc.object("endpoints") {
            for member in endpoints {
                // Validated now so a broken named endpoint fails nl_client_new.
                _ = try EndpointDocument(member.value, context: "config key 'endpoints': endpoint '\(member.key)'",
                                         allowParams: false)
            }
            self.endpoints = endpoints
        }
    }
}
