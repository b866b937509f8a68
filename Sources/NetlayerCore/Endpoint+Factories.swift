import NetlayerJSON

/// Short forms in the spirit of kean/Get's `Request`, for `NetlayerClient.send`:
///
/// ```swift
/// let user: User = try await client.send(.get("user")).value
/// let created: Movie = try await client.send(.post("movies", body: newMovie)).value
/// ```
extension Endpoint {
    /// A request with `method` to `path` under the base URL, with an `Encodable` body
    /// sent as JSON. A path that is a full URL is refused (`urlGeneration`), so a path
    /// built from input cannot leave the base URL; set `isFullPath` to send one.
    public static func make(_ method: HTTPMethod, _ path: String, query: JSONObject = [:],
                            body: (any Encodable & Sendable)? = nil, headers: HTTPHeaders = [:],
                            decoder: any ResponseDecoder = JSONResponseDecoder()) -> Endpoint {
        Endpoint(path: path, method: method, headerParameters: headers,
                 queryParameters: query, bodyParametersEncodable: body, responseDecoder: decoder)
    }

    public static func get(_ path: String, query: JSONObject = [:], headers: HTTPHeaders = [:],
                           decoder: any ResponseDecoder = JSONResponseDecoder()) -> Endpoint {
        make(.get, path, query: query, headers: headers, decoder: decoder)
    }

    public static func post(_ path: String, query: JSONObject = [:], body: (any Encodable & Sendable)? = nil,
                            headers: HTTPHeaders = [:], decoder: any ResponseDecoder = JSONResponseDecoder()) -> Endpoint {
        make(.post, path, query: query, body: body, headers: headers, decoder: decoder)
    }

    public static func put(_ path: String, query: JSONObject = [:], body: (any Encodable & Sendable)? = nil,
                           headers: HTTPHeaders = [:], decoder: any ResponseDecoder = JSONResponseDecoder()) -> Endpoint {
        make(.put, path, query: query, body: body, headers: headers, decoder: decoder)
    }

    public static func patch(_ path: String, query: JSONObject = [:], body: (any Encodable & Sendable)? = nil,
                             headers: HTTPHeaders = [:], decoder: any ResponseDecoder = JSONResponseDecoder()) -> Endpoint {
        make(.patch, path, query: query, body: body, headers: headers, decoder: decoder)
    }

    public static func delete(_ path: String, query: JSONObject = [:], headers: HTTPHeaders = [:],
                              decoder: any ResponseDecoder = JSONResponseDecoder()) -> Endpoint {
        make(.delete, path, query: query, headers: headers, decoder: decoder)
    }

    /// The same request decoded into another type by `decoder`.
    public func decoding<Other>(as _: Other.Type = Other.self, with decoder: any ResponseDecoder) -> Endpoint<Other> {
        var copy = Endpoint<Other>(path: path, isFullPath: isFullPath, method: method, headerParameters: headerParameters,
                                   queryParametersEncodable: queryParametersEncodable, queryParameters: queryParameters,
                                   bodyParametersEncodable: bodyParametersEncodable, bodyParameters: bodyParameters,
                                   bodyEncoding: bodyEncoding, responseDecoder: decoder, timeout: timeout,
                                   acceptableStatus: acceptableStatus, configureOptions: configureOptions,
                                   transfer: transfer)
        copy.bodyData = bodyData
        copy.xmlRoot = xmlRoot
        copy.encodedQuery = encodedQuery
        return copy
    }
}
