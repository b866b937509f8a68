import NetlayerCore
import NetlayerDocuments
import NetlayerJSON

extension NetlayerClient {
    /// Sends the config's named endpoint `name` — one of its `endpoints`, else an
    /// operation of its `openapi` document — as `nl_call` does. For a named endpoint,
    /// `params` fill its path's `{placeholders}`; for an operation, they are its
    /// parameters (path, query, header, cookie), checked against the document before
    /// anything is sent, and `overlay["body"]` is its request body. `overlay` (an
    /// endpoint document) merges over the rest. The body is decoded as the response's
    /// `Content-Type` says, unless the named endpoint names a decoder.
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
}
