/// One redirect a request followed on its way to its response: the status of the
/// redirect and the URL that answered with it (requests' `Response.history`).
public struct RedirectHop: Sendable, Hashable {
    /// The redirect's status: 301, 302, 303, 307 or 308.
    public var status: Int
    /// The URL of the request that got the redirect.
    public var url: String

    public init(status: Int, url: String) {
        self.status = status
        self.url = url
    }
}
