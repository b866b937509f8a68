import NetlayerCore
import NetlayerJSON

/// Recorded exchanges: what a recording client keeps of each request its transport
/// completed, with secrets redacted, and what a replay client answers from. The
/// Documents layer reads and writes them as cassette files (`CassetteDocument`).
public struct Cassette: Sendable {
    /// One request and what came of it.
    public struct Exchange: Sendable {
        /// The request as sent: method, URL, headers and in-memory body.
        public var request: HTTPRequest
        /// The response (status, headers, body, HTTP version), or the transport's error.
        public var result: Result<HTTPResponse, NetworkError>

        public init(request: HTTPRequest, result: Result<HTTPResponse, NetworkError>) {
            self.request = request
            self.result = result
        }
    }

    /// What stands in for a secret in a cassette; as a query value or URL user-info of
    /// a recorded request it matches any value on replay.
    public static let redacted = "REDACTED"

    /// In the order the transport completed them.
    public var exchanges: [Exchange]

    public init(exchanges: [Exchange] = []) { self.exchanges = exchanges }
}
