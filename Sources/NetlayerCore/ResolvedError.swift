import NetlayerJSON

/// A network failure an error resolver recognised and named: kind `resolved` in
/// result documents, keeping the response of the original failure.
public struct ResolvedError: Error, Sendable, CustomStringConvertible {
    /// The application's code for the error ("unauthorized"), if the resolver gave one.
    public var code: String?
    public var message: String
    public var underlying: NetworkError

    public init(code: String?, message: String, underlying: NetworkError) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }
}
