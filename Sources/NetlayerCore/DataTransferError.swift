import NetlayerJSON

/// A failure of a `DataTransferService` request: a network failure, or a response
/// that could not be turned into the expected value.
public enum DataTransferError: Error, Sendable {
    /// There was no body where one was required.
    case noResponse
    /// The body did not decode, or a key path part was missing.
    case parsing(String)
    /// The request failed below decoding.
    case networkFailure(NetworkError)
    /// A `DataTransferErrorResolver` replaced the network failure.
    case resolvedNetworkFailure(any Error & Sendable)
}
