import FoundationEssentials
import NetlayerJSON

/// What every request of a service starts from, checked once when the service is
/// made: the base URL, and the config's headers, query and options. A class: every
/// request reads it, and a reference is one retain where the fields are a dozen.
package final class RequestDefaults: Sendable {
    let base: BaseURL?
    let headers: HTTPHeaders
    let query: JSONObject
    let options: RequestOptions
    /// How URLs are read: the transport's parser.
    let parser: any URLParsing

    /// - Parameter recordsSentHeaders: sets `RequestOptions.recordsSentHeaders`, for a
    ///   logger that shows the lines sent.
    package init(_ config: any NetworkConfigurable, parser: any URLParsing,
                 recordsSentHeaders: Bool = false) throws(NetworkError) {
        self.parser = parser
        base = config.baseURL.isEmpty ? nil : try BaseURL(config.baseURL, parser: parser)
        var headers = config.headers
        try headers.validateOnce()
        self.headers = headers
        query = config.queryParameters
        _ = try HTTPRequest.QueryEncoding.pairs(from: query, context: "config query")
        var options = config.requestOptions
        if recordsSentHeaders { options.recordsSentHeaders = true }
        try HTTPRequest.validate(options)
        self.options = options
    }
}
