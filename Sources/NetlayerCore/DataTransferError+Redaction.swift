import NetlayerJSON

extension DataTransferError {
    /// The same error with the values of the query parameters `names` (besides
    /// `Redaction.defaultQueryNames`, which `message` always hides) replaced in every
    /// text it carries: a client redacts its config's secret query names here, once,
    /// for every language that reads the error.
    public func redactingQuery(_ names: Set<String>) -> DataTransferError {
        guard !names.isEmpty else { return self }
        let hide = { (text: String) in Redaction.query(in: text, names: names) }
        switch self {
        case .noResponse: return self
        case .parsing(let why): return .parsing(hide(why))
        case .networkFailure(let error): return .networkFailure(error.mappingMessage(hide))
        case .resolvedNetworkFailure(let error):
            guard var resolved = error as? ResolvedError else { return self }
            resolved.message = hide(resolved.message)
            return .resolvedNetworkFailure(resolved)
        }
    }
}

extension DataTransferError {
    /// The same error with every occurrence of `secrets` replaced in a resolved
    /// message (one a resolver read from the server's body, which may echo them).
    public func scrubbing(_ secrets: [String]) -> DataTransferError {
        guard case .resolvedNetworkFailure(let error) = self, var resolved = error as? ResolvedError,
              !secrets.isEmpty else { return self }
        resolved.message = Redaction.scrub(resolved.message, of: RequestCredentials.usable(secrets))
        return .resolvedNetworkFailure(resolved)
    }
}

extension NetworkError {
    /// The same error with `transform` applied to its message.
    func mappingMessage(_ transform: (String) -> String) -> NetworkError {
        switch self {
        case .error, .cancelled: return self
        case .notConnected(let m): return .notConnected(transform(m))
        case .timedOut(let m): return .timedOut(transform(m))
        case .tls(let m): return .tls(transform(m))
        case .cancelledBecause(let m): return .cancelledBecause(transform(m))
        case .urlGeneration(let m): return .urlGeneration(transform(m))
        case .invalidRequest(let m): return .invalidRequest(transform(m))
        case .tooLarge(let m): return .tooLarge(transform(m))
        case .io(let m): return .io(transform(m))
        case .protocolViolation(let m, let code): return .protocolViolation(transform(m), curlCode: code)
        case .generic(let m, let code): return .generic(transform(m), curlCode: code)
        }
    }
}
