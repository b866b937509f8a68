/// The HTTP methods an endpoint may use.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case get = "GET"
    case head = "HEAD"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
    case options = "OPTIONS"
}

/// The seeds' name for `HTTPMethod`.
public typealias HTTPMethodType = HTTPMethod
