import NetlayerJSON

/// A failure below decoding: building the request, the transport, or an HTTP status
/// outside the acceptable ones. The seeds' `NetworkError`, with the cases libcurl can
/// tell apart.
public enum NetworkError: Error, Sendable {
    /// The server answered with a status outside `acceptableStatus`; the response is kept.
    case error(statusCode: Int, response: HTTPResponse)
    /// DNS failure, connection refused, network unreachable.
    case notConnected(String)
    /// The connect timeout or the per-attempt timeout passed.
    case timedOut(String)
    /// Certificate or handshake failure, or a pinned key mismatch.
    case tls(String)
    /// The request was cancelled by the caller, a hook, or the client shutting down.
    case cancelled
    /// The request was cancelled for a reason worth telling: a hook's own message,
    /// or a signal that interrupted a blocking call.
    case cancelledBecause(String)
    /// A URL could not be built from the base URL, path and query.
    case urlGeneration(String)
    /// The request description itself is malformed (bad header, method, option).
    case invalidRequest(String)
    /// The body passed `maxResponseBytes` or `maxDownloadBytes` (or the headers their bound).
    case tooLarge(String)
    /// The server broke HTTP: bad status line, truncated body, bad chunking.
    case protocolViolation(String, curlCode: Int)
    /// A local file could not be read or written.
    case io(String)
    /// Anything else, with libcurl's code.
    case generic(String, curlCode: Int)

    /// The response that came with the error, if the server answered.
    public var response: HTTPResponse? {
        if case .error(_, let response) = self { return response }
        return nil
    }

    /// Whether the origin could not be reached or gave no usable answer (no connection,
    /// a timeout, a TLS failure, a broken reply): what a gateway would answer with a
    /// 502 or 504, so what RFC 5861's `stale-if-error` covers.
    public var isOriginFailure: Bool {
        switch self {
        case .notConnected, .timedOut, .tls, .protocolViolation: return true
        default: return false
        }
    }

    /// Whether the request was cancelled (the seeds' `isNotFoundError`-style helper).
    public var isCancelled: Bool {
        switch self {
        case .cancelled, .cancelledBecause: return true
        default: return false
        }
    }
}

extension NetworkError {
    /// The error a hook or callback asks for by the contract's name of its kind
    /// (`nl_reply_fail`); nil for `status` and `resolved`, which only a response or
    /// an error resolver can cause, and for names the contract does not have.
    public init?(kind: ErrorKind, message: String) {
        switch kind {
        case .invalidRequest: self = .invalidRequest(message)
        case .urlGeneration: self = .urlGeneration(message)
        case .notConnected: self = .notConnected(message)
        case .timeout: self = .timedOut(message)
        case .tls: self = .tls(message)
        case .cancelled: self = .cancelledBecause(message)
        case .noResponse, .parsing, .status, .resolved: return nil
        case .tooLarge: self = .tooLarge(message)
        case .io: self = .io(message)
        case .protocol: self = .protocolViolation(message, curlCode: 0)
        case .generic: self = .generic(message, curlCode: 0)
        }
    }
}
