import NetlayerCore
import NetlayerJSON

/// Resolves HTTP status failures by rules: the first rule whose statuses match names
/// the error with a code and a message, the message optionally read from the JSON
/// error body at a key path. Other failures pass through unchanged.
public struct RuleBasedErrorResolver: DataTransferErrorResolver {
    public struct Rule: Sendable {
        public var status: AcceptableStatus
        public var code: String?
        public var message: String?
        /// Where the message sits in a JSON error body ("error.message"); `message`
        /// is the fallback when the body has none there.
        public var messageKeyPath: String?

        public init(status: AcceptableStatus, code: String? = nil, message: String? = nil, messageKeyPath: String? = nil) {
            self.status = status
            self.code = code
            self.message = message
            self.messageKeyPath = messageKeyPath
        }
    }

    public var rules: [Rule]

    public init(rules: [Rule]) { self.rules = rules }

    public func resolve(error: NetworkError) -> any Error & Sendable {
        guard case .error(let status, let response) = error,
              let rule = rules.first(where: { $0.status.contains(status) })
        else { return error }
        var message = rule.message
        if let keyPath = rule.messageKeyPath,
           let body = try? JSONParser.parse(response.body),
           let value = try? body.value(atKeyPath: keyPath), !value.isNull {
            message = value.stringValue ?? String(decoding: JSONWriter.serialize(value), as: UTF8.self)
        }
        return ResolvedError(code: rule.code, message: message ?? "HTTP \(status) \(HTTPStatus.reasonPhrase(status))",
                             underlying: error)
    }
}
