import NetlayerJSON

/// Maps a network failure to the error the caller sees (the seeds'
/// `DataTransferErrorResolver`). Returning the error unchanged keeps it a network failure.
public protocol DataTransferErrorResolver: Sendable {
    func resolve(error: NetworkError) -> any Error & Sendable
}

/// Keeps every network failure as it is.
public struct DefaultDataTransferErrorResolver: DataTransferErrorResolver {
    public init() {}
    public func resolve(error: NetworkError) -> any Error & Sendable { error }
}
