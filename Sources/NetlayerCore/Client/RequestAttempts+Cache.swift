import NetlayerJSON

/// The response cache's part in a request's attempts: answering from it, refreshing
/// and revalidating what it holds, storing what came back.
extension RequestAttempts {
    /// `original` as the cache sees it once `sent` went out: its method and URL are the
    /// key; the fields a stored response's `Vary` selects, and the request's cache
    /// directives, are those sent, a hook's included (RFC 9111 section 4.1).
    private func cacheRequest(_ sent: HTTPRequest) -> HTTPRequest {
        var request = original
        request.headers = sent.headers
        return request
    }

    var cache: (any ResponseCaching)? {
        guard environment.hasCache, let cache = environment.cache, original.transfer.useCache,
              cache.isCacheable(original) else { return nil }
        return cache
    }

    /// The answer of a cached response (a status error when its status is not
    /// acceptable), and the request that refreshes it in the background when it is a
    /// stale one the cache may still answer with; or nil (noting validators of a stale
    /// entry to send).
    func cachedAnswer(sentWith request: HTTPRequest) -> (Result<HTTPResponse, NetworkError>, RequestAttempts?)? {
        guard let cache else { return nil }
        let lookup = cache.lookup(cacheRequest(request), credentials: sentCredentials
                                    ?? RequestCredentials(of: request, cookies: environment.cookies))
        if var response = lookup.fresh {
            if response.body.count > original.options.maxResponseBytes {
                return nil  // more than this request takes: the network answers it (or refuses it as too large)
            }
            response.fromCache = true
            var refresh: RequestAttempts?
            if let stale = lookup.background {
                // A request of its own that no one waits for: its answer goes to the cache only.
                refresh = RequestAttempts(environment: environment, request: original, id: environment.newID(),
                                          completion: nil)
                refresh?.revalidation = (stale.validators, stale.cached)
            }
            guard original.options.acceptableStatus.contains(response.statusCode) else {
                return (.failure(.error(statusCode: response.statusCode, response: response)), refresh)
            }
            return (.success(response), refresh)
        }
        if let stale = lookup.revalidation { revalidation = (stale.validators, stale.cached) }
        return nil
    }

    /// Stores what may be cached, turns a 304 into the cached response, answers an
    /// error with a stale response where `stale-if-error` allows, and lets an unsafe
    /// request invalidate what the cache holds for the URLs it changed. `hop` is the
    /// request that got `result` (another URL after a redirect).
    func throughCache(_ result: consuming Result<HTTPResponse, NetworkError>,
                              hop: HTTPRequest) -> Result<HTTPResponse, NetworkError> {
        guard environment.hasCache else { return result }  // a client without a cache
        guard let cache else {
            if let cache = environment.cache, !original.method.isSafe, case .success(let response) = result {
                cache.invalidate(after: response, to: original, finalURL: hop.url,
                                 urlParser: environment.sessionManager.urlParser)
            }
            return result
        }
        // The original's URL and method are the key; the credentials are those it was sent with.
        let credentials = sentCredentials ?? RequestCredentials(of: original, cookies: environment.cookies)
        switch result {
        case .success(let response):
            if [500, 502, 503, 504].contains(response.statusCode),
               let stale = cache.staleIfError(cacheRequest(hop), credentials: credentials) {
                return .success(stale)
            }
            // Reached through a redirect: the redirect, not this response, answered the URL;
            // and the hops may have changed the credentials (a sign-in that sets a
            // cookie and redirects back), which the key would then not show.
            guard hop.url == original.url, response.redirects.isEmpty else { return result }
            if response.statusCode == 304, let cached = revalidation?.cached {
                return .success(cache.revalidated(response, cached: cached, for: cacheRequest(hop), credentials: credentials))
            }
            cache.store(response, for: cacheRequest(hop), credentials: credentials)
        case .failure(let error):
            if error.isOriginFailure, let stale = cache.staleIfError(cacheRequest(hop), credentials: credentials) {
                return .success(stale)
            }
        }
        return result
    }
}
