import NetlayerJSON

/// The contract's error kinds: the `error.kind` of a result document and the
/// exception class in Python. Cases are only ever added, never renamed.
public enum ErrorKind: String, Sendable, CaseIterable {
    case invalidRequest = "invalid_request"
    case urlGeneration = "url_generation"
    case notConnected = "not_connected"
    case timeout
    case tls
    case cancelled
    case status
    case noResponse = "no_response"
    case parsing
    case resolved
    case tooLarge = "too_large"
    case io
    case `protocol`
    case generic
}

extension DataTransferError {
    /// The one mapping from Swift errors to the contract's kinds.
    public var kind: ErrorKind {
        switch self {
        case .noResponse: return .noResponse
        case .parsing: return .parsing
        case .resolvedNetworkFailure: return .resolved
        case .networkFailure(let error):
            switch error {
            case .error: return .status
            case .notConnected: return .notConnected
            case .timedOut: return .timeout
            case .tls: return .tls
            case .cancelled, .cancelledBecause: return .cancelled
            case .urlGeneration: return .urlGeneration
            case .invalidRequest: return .invalidRequest
            case .tooLarge: return .tooLarge
            case .protocolViolation: return .protocol
            case .io: return .io
            case .generic: return .generic
            }
        }
    }

    /// A one-line human description; never contains header values, and URL
    /// user-info and secret query values (`Redaction.defaultQueryNames`) are redacted.
    public var message: String { Redaction.url(in: rawMessage) }

    private var rawMessage: String {
        switch self {
        case .noResponse: return "the response has no body"
        case .parsing(let why): return why
        case .resolvedNetworkFailure(let error): return (error as? ResolvedError)?.message ?? String(describing: error)
        case .networkFailure(let error):
            switch error {
            case .error(let code, _): return "HTTP \(code) \(HTTPStatus.reasonPhrase(code))"
            case .cancelled: return "the request was cancelled"
            case .notConnected(let m), .timedOut(let m), .tls(let m), .urlGeneration(let m),
                 .invalidRequest(let m), .tooLarge(let m), .io(let m), .cancelledBecause(let m):
                return m
            case .protocolViolation(let m, _), .generic(let m, _):
                return m
            }
        }
    }

    /// libcurl's result code, when the failure came from libcurl.
    public var curlCode: Int? {
        switch self {
        case .networkFailure(.protocolViolation(_, let code)), .networkFailure(.generic(_, let code)):
            return code == 0 ? nil : code  // 0 (CURLE_OK): the error was not libcurl's (a hook's)
        default:
            return nil
        }
    }

    /// The HTTP response that came with the error, if any.
    public var response: HTTPResponse? {
        switch self {
        case .networkFailure(let error): return error.response
        case .resolvedNetworkFailure(let error): return (error as? ResolvedError)?.underlying.response
        default: return nil
        }
    }

    /// The resolver's code for a resolved error.
    public var code: String? {
        if case .resolvedNetworkFailure(let error) = self { return (error as? ResolvedError)?.code }
        return nil
    }
}

extension DataTransferError: CustomStringConvertible {
    public var description: String { "\(kind.rawValue): \(message)" }
}
