import NetlayerCore
import NetlayerCurl
import NetlayerFeatures
import NetlayerDocuments
import NetlayerJSON

/// An endpoint plus a transform of its decoded value (iOS-Generic-Datasource's
/// `Resource<T, Q>`): decode `T`, hand back `Q`.
///
/// ```swift
/// let titles = Resource(Endpoint<MoviesPage>(path: "movies")) { page in page.results.map(\.title) }
/// let list: [String] = try await service.request(titles)
/// ```
public struct Resource<T: Decodable & Sendable, Q>: Sendable {
    public var endpoint: Endpoint<T>
    public var transform: @Sendable (T) throws -> Q

    public init(_ endpoint: Endpoint<T>, transform: @escaping @Sendable (T) throws -> Q) {
        self.endpoint = endpoint
        self.transform = transform
    }
}

extension DataTransferService {
    /// Sends the resource's endpoint and transforms the decoded value; an error
    /// thrown by the transform is `parsing`.
    public func request<T, Q: Sendable>(_ resource: Resource<T, Q>) async throws(DataTransferError) -> Q {
        let value: T = try await request(with: resource.endpoint)
        do {
            return try resource.transform(value)
        } catch let error as DataTransferError {
            throw error
        } catch {
            throw .parsing("the transform of \(T.self) failed: \(error)")
        }
    }
}
