extension NetlayerClient {
    /// Sends the config's named endpoint `name`, as `nl_call` does: `params` fill its
    /// path's `{placeholders}`, and `overlay` (an endpoint document) merges over it.
    /// The body is decoded as the response's `Content-Type` says, unless the named
    /// endpoint names a decoder.
    ///
    /// ```swift
    /// let movie = try await client.call("getMovie", params: ["id": 7]).value
    /// ```
    public func call(_ name: String, params: JSONObject = [:],
                     overlay: JSONObject = [:]) async throws(DataTransferError) -> DataResponse<JSON> {
        try await send(try namedEndpoint(name, params: params, overlay: overlay))
    }

    /// Sends the named endpoint `name` and decodes its JSON body into `T` (at the
    /// endpoint's `response.keyPath` when it has one).
    public func call<T: Decodable & Sendable>(_ name: String, params: JSONObject = [:], overlay: JSONObject = [:],
                                              as _: T.Type) async throws(DataTransferError) -> DataResponse<T> {
        let endpoint = try namedEndpoint(name, params: params, overlay: overlay)
        let keyPath = (endpoint.responseDecoder as? JSONResponseDecoder)?.keyPath
        return try await send(endpoint.decoding(as: T.self, with: JSONResponseDecoder(keyPath: keyPath)))
    }

    /// The names of the config's named endpoints.
    public var endpointNames: [String] { namedEndpoints.map(\.key) }

    /// The config's named endpoint `name`, as its document.
    package func namedEndpoint(_ name: String) throws(NetworkError) -> JSON {
        guard let named = namedEndpoints[name] else {
            throw .invalidRequest("no endpoint named '\(name.escapedForMessage)' in the config's endpoints")
        }
        return named
    }

    private func namedEndpoint(_ name: String, params: JSONObject,
                               overlay: JSONObject) throws(DataTransferError) -> Endpoint<JSON> {
        do throws(NetworkError) {
            let named = try namedEndpoint(name)
            var overlay = overlay
            if !params.isEmpty { overlay["params"] = .object(params) }
            return try EndpointDocument(EndpointDocument.merged(named: named, overlay: .object(overlay))).endpoint
        } catch {
            throw .networkFailure(error)
        }
    }
}
