import NetlayerCore
import NetlayerCurl

extension Requestable {
    /// The request for this endpoint under `config` (the seeds' form), with URLs read
    /// by libcurl's parser.
    public func httpRequest(with config: any NetworkConfigurable) throws(NetworkError) -> HTTPRequest {
        try HTTPRequest.build(self, defaults: try RequestDefaults(config, parser: CurlURLParser()))
    }
}
