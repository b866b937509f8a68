import NetlayerJSON

extension NetlayerClient {
    /// What sending a request came to, every attempt included.
    public struct NetworkOutcome: Sendable {
        public var result: Result<HTTPResponse, NetworkError>
        /// How many attempts were made (1 when there was no retry).
        public var attempts: Int
        /// The request's id, as in log events and the C ABI's async ids.
        public var id: UInt64

        public init(result: Result<HTTPResponse, NetworkError>, attempts: Int, id: UInt64) {
            self.result = result
            self.attempts = attempts
            self.id = id
        }
    }
}

/// `NetlayerClient.NetworkOutcome` by the name it is known by.
public typealias NetworkOutcome = NetlayerClient.NetworkOutcome
