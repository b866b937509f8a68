import CCurl
import NetlayerCore
import NetlayerJSON

/// libcurl's URL parser (`CURLU`) as a client's `URLParsing`: the parser that reads
/// every URL libcurl sends.
public struct CurlURLParser: URLParsing {
    public init() {}

    public func parse(_ url: String) -> ParsedURL? {
        CurlURL(url).flatMap(Self.parts)
    }

    public func resolve(_ reference: String, against base: String) -> ParsedURL? {
        guard let parsed = CurlURL(base),
              parsed.set(CURLUPART_URL, reference, flags: UInt32(CURLU_NON_SUPPORT_SCHEME)) else { return nil }
        return Self.parts(parsed)
    }

    public func reason(refusing url: String) -> String? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        let rc = curl_url_set(handle, CURLUPART_URL, url, 0)
        return rc == CURLUE_OK ? nil : String(cString: curl_url_strerror(rc))
    }

    private static func parts(_ parsed: CurlURL) -> ParsedURL? {
        guard let url = parsed.part(CURLUPART_URL), let scheme = parsed.part(CURLUPART_SCHEME) else { return nil }
        return ParsedURL(url: url, scheme: scheme.lowercased(), user: parsed.part(CURLUPART_USER),
                         password: parsed.part(CURLUPART_PASSWORD), host: parsed.part(CURLUPART_HOST) ?? "",
                         port: parsed.part(CURLUPART_PORT),
                         effectivePort: parsed.part(CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)),
                         path: parsed.part(CURLUPART_PATH) ?? "/", query: parsed.part(CURLUPART_QUERY))
    }
}

extension NetworkSessionManager {
    /// libcurl's parser, for transports that do not name one.
    public var urlParser: any URLParsing { CurlURLParser() }
}
