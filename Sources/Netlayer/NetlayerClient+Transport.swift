import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

extension NetlayerClient.Parts {
    /// What makes a client's transport: libcurl's (`CurlSessionManager`), or a stub or
    /// a cassette in its place, which still use it for its threads. In a child of
    /// `fork()` the new transport's cookie jar starts as a copy of the parent's and has
    /// no file (the parent writes it), and a recording client records nothing (the
    /// parent's cassette is the parent's to save).
    package static func curlTransport(maxConcurrent: Int, cookies: CookieJar, stubRules: [StubSessionManager.Rule]?,
                                      cassette: CassetteMode?)
        -> @Sendable ((any NetworkSessionManager)?) throws(NetworkError) -> any NetworkSessionManager {
        { parent throws(NetworkError) in
            let session: CurlSessionManager
            if let inherited = parent?.forkSource as? CurlSessionManager {  // a class cast: see forkSource
                session = try CurlSessionManager(maxConcurrent: maxConcurrent, copyingCookiesOf: inherited)
            } else {
                session = try CurlSessionManager(maxConcurrent: maxConcurrent, cookies: cookies)
            }
            switch cassette {
            case .record(let redaction, let save)?:
                return parent == nil ? RecordingSessionManager(over: session, redaction: redaction, save: save) : session
            case .replay(let cassette, let redactedQuery)?:
                return ReplaySessionManager(cassette: cassette, redactedQuery: redactedQuery, loop: session)
            case nil:
                return stubRules.map { StubSessionManager(rules: $0, loop: session) } ?? session
            }
        }
    }
}

extension NetlayerClient.Parts {
    /// The parts of a client over libcurl (`CurlSessionManager`) with `config`, its own
    /// cookie jar and at most 64 asynchronous transfers in flight.
    public init(config: any NetworkConfigurable) {
        self.init(config: config, makeTransport: Self.curlTransport(maxConcurrent: 64, cookies: CookieJar(),
                                                                    stubRules: nil, cassette: nil))
    }
}
