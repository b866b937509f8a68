import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// A WebSocket document (`nl_websocket_open`): the endpoint keys that describe the
/// opening request (`path`, `isFullPath`, `query`, `encodedQuery`, `headers`, `auth`, `timeout`),
/// read by `EndpointDocument` as for any request, and the WebSocket's own keys.
/// A `ws://` or `wss://` URL (with `isFullPath`) is opened over `http://` or `https://`.
public struct WebSocketDocument: Sendable {
    public var endpoint: Endpoint<JSON>
    public var options: WebSocketOptions

    /// The endpoint keys a WebSocket's opening request takes.
    static let endpointKeys: Set<String> = ["path", "isFullPath", "query", "encodedQuery", "headers", "auth", "timeout"]
    static let ownKeys: Set<String> = ["protocols", "maxMessageBytes", "maxQueuedBytes", "idleTimeout", "closeTimeout",
                                       "compression", "fragmentBytes", "pingInterval"]

    /// Reads `json`; an unknown key or a value of the wrong type is `invalidRequest`
    /// naming the key.
    public init(_ json: JSON) throws(NetworkError) {
        let doc = try DocumentReader(json, context: "websocket")
        try doc.checkKeys(known: Self.endpointKeys.union(Self.ownKeys))
        var request = JSONObject()
        // A full ws(s) URL becomes the http(s) URL libcurl connects to; without
        // isFullPath the path stays as written, so that a message quotes it as given.
        let isFullPath = doc.value("isFullPath") == .bool(true)
        for member in doc.object where Self.endpointKeys.contains(member.key) {
            var value = member.value
            if member.key == "path", isFullPath, case .string(let path) = value { value = .string(WebSocketOptions.httpURL(path)) }
            request[member.key] = value
        }
        endpoint = try EndpointDocument(.object(request), context: "websocket").endpoint
        do {
            try WebSocketOptions.checkHandshakeHeaders(endpoint.headerParameters)
        } catch {
            throw .invalidRequest("websocket key 'headers': \(DataTransferError.networkFailure(error).message)")
        }
        options = WebSocketOptions()
        if let protocols = doc.value("protocols") {
            guard case .array(let names) = protocols else {
                throw .invalidRequest("websocket key 'protocols' must be an array of strings, not \(protocols.typeName)")
            }
            options.protocols = try names.enumerated().map { index, name throws(NetworkError) -> String in
                guard case .string(let text) = name else {
                    throw .invalidRequest("websocket key 'protocols'[\(index)] must be a string, not \(name.typeName)")
                }
                return text
            }
        }
        let positive = 1...Int(Int64.max)
        if let limit = try doc.integer("maxMessageBytes", in: positive) { options.maxMessageBytes = limit }
        if let limit = try doc.integer("maxQueuedBytes", in: positive) { options.maxQueuedBytes = limit }
        if let idle = try doc.seconds("idleTimeout") { options.idleTimeout = idle }
        if let interval = try doc.seconds("pingInterval") { options.pingInterval = interval }
        if let wait = try doc.seconds("closeTimeout") { options.closeTimeout = wait }
        if let compression = try doc.bool("compression") { options.compression = compression }
        if let size = try doc.integer("fragmentBytes", in: 1...WebSocketOptions.maxFragmentBytes) { options.fragmentBytes = size }
        try options.validate()
    }

    /// Reads the JSON text `json`.
    public init(json: String) throws(NetworkError) {
        try self.init(try JSON.parseDocument(json, what: "websocket document"))
    }
}
