import Netlayer

/// The requests a client built from the endpoint documents it is sent again and
/// again, by the documents' exact bytes — what Python's `re` does for compiled
/// patterns.
///
/// A request is a function of its document and the client's config, and a client's
/// config never changes; an API client sends the same few documents again and again
/// (a poll, a health check, a resource read by a fixed path), and parsing one and
/// building its request is a tenth of a small request's cost. Only requests without
/// per-request closures are kept (progress and stream events are wired to the
/// request's id; the caller checks), and only of small documents. See `RepeatCache`
/// for what is kept when.
struct PreparedRequestCache: Sendable {
    struct Prepared: Sendable {
        let request: HTTPRequest
        let decoder: any ResponseDecoder
    }

    private let cache = RepeatCache<Prepared>(slots: 64, maxKeyBytes: 1024)

    /// The request built earlier from exactly these bytes, if it was kept.
    func request(for document: UnsafeBufferPointer<UInt8>) -> (HTTPRequest, any ResponseDecoder)? {
        guard let prepared = cache.value(for: document) else { return nil }
        return (prepared.request, prepared.decoder)
    }

    /// Notes that `request` was built from `document`; kept if the document comes again.
    func remember(_ document: UnsafeBufferPointer<UInt8>, request: HTTPRequest, decoder: any ResponseDecoder) {
        cache.missed(document) { Prepared(request: request, decoder: decoder) }
    }
}
