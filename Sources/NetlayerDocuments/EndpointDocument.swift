import NetlayerCore
import NetlayerFeatures
import NetlayerJSON


/// An endpoint document (`nl_request`, batch elements, named endpoints and overlays)
/// read into a core `Endpoint<JSON>`: the one reader of endpoint JSON for C, Python,
/// the CLI and Swift. The keys are those of `docs/documents.md`.
///
/// ```swift
/// let doc = try EndpointDocument(json: #"{"path": "movies", "query": {"page": 2}}"#)
/// let page = try await client.send(doc.endpoint)
/// ```
public struct EndpointDocument: Sendable {
    /// The endpoint the document describes; its decoder follows the response
    /// (`AutoResponseDecoder`) unless the document names one.
    public var endpoint: Endpoint<JSON>
    /// `"progress": true`: the caller wants progress reports.
    public var wantsProgress = false

    /// The keys an endpoint document may hold, as bits: one pass over the members finds
    /// unknown keys and which keys to read (most documents hold one or two of them).
    private struct Keys: OptionSet {
        let rawValue: UInt32
        static let path = Keys(rawValue: 1 << 0), isFullPath = Keys(rawValue: 1 << 1), method = Keys(rawValue: 1 << 2)
        static let headers = Keys(rawValue: 1 << 3), query = Keys(rawValue: 1 << 4), body = Keys(rawValue: 1 << 5)
        static let bodyEncoding = Keys(rawValue: 1 << 6), response = Keys(rawValue: 1 << 7)
        static let timeout = Keys(rawValue: 1 << 8), acceptableStatus = Keys(rawValue: 1 << 9)
        static let retry = Keys(rawValue: 1 << 10), deadline = Keys(rawValue: 1 << 11)
        static let multipart = Keys(rawValue: 1 << 12), uploadFrom = Keys(rawValue: 1 << 13)
        static let downloadTo = Keys(rawValue: 1 << 14), xmlRoot = Keys(rawValue: 1 << 15)
        static let progress = Keys(rawValue: 1 << 16), stream = Keys(rawValue: 1 << 17)
        static let useCache = Keys(rawValue: 1 << 18), params = Keys(rawValue: 1 << 19)
        static let auth = Keys(rawValue: 1 << 20), encodedQuery = Keys(rawValue: 1 << 21)
        static let maxStreamItemBytes = Keys(rawValue: 1 << 24)
        static let maxResponseBytes = Keys(rawValue: 1 << 22), maxDownloadBytes = Keys(rawValue: 1 << 23)

        init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Every name `init(name:)` knows, for suggestions.
        static let names = ["path", "isFullPath", "method", "headers", "query", "body", "bodyEncoding", "response",
                            "timeout", "acceptableStatus", "retry", "deadline", "multipart", "uploadFrom", "downloadTo",
                            "xmlRoot", "progress", "stream", "useCache", "params", "auth", "maxStreamItemBytes",
                            "maxResponseBytes", "maxDownloadBytes", "encodedQuery"]

        init?(name: String) {
            // By length first: comparing two different short strings takes the slow
            // path of String ==, and this runs for every key of every request.
            let key: Keys? = switch name.utf8.count {
            case 4:
                switch name {
                case "path": .path
                case "body": .body
                case "auth": .auth
                default: nil
                }
            case 5:
                switch name {
                case "query": .query
                case "retry": .retry
                default: nil
                }
            case 6:
                switch name {
                case "method": .method
                case "stream": .stream
                case "params": .params
                default: nil
                }
            case 7:
                switch name {
                case "headers": .headers
                case "timeout": .timeout
                case "xmlRoot": .xmlRoot
                default: nil
                }
            case 8:
                switch name {
                case "response": .response
                case "deadline": .deadline
                case "progress": .progress
                case "useCache": .useCache
                default: nil
                }
            case 9: name == "multipart" ? .multipart : nil
            case 10:
                switch name {
                case "isFullPath": .isFullPath
                case "uploadFrom": .uploadFrom
                case "downloadTo": .downloadTo
                default: nil
                }
            case 12:
                switch name {
                case "bodyEncoding": .bodyEncoding
                case "encodedQuery": .encodedQuery
                default: nil
                }
            case 16:
                switch name {
                case "acceptableStatus": .acceptableStatus
                case "maxResponseBytes": .maxResponseBytes
                case "maxDownloadBytes": .maxDownloadBytes
                default: nil
                }
            case 18: name == "maxStreamItemBytes" ? .maxStreamItemBytes : nil
            default: nil
            }
            guard let key else { return nil }
            self = key
        }
    }

    /// The non-null keys of `doc`; an unknown key is an error that names it.
    private static func keys(of doc: DocumentReader, allowParams: Bool) throws(NetworkError) -> Keys {
        var keys: Keys = []
        for member in doc.object {
            guard let key = Keys(name: member.key), key != .params || allowParams else {
                throw doc.unknownKey(member.key, known: Keys.names.filter { $0 != "params" || allowParams })
            }
            if !member.value.isNull { keys.insert(key) }
        }
        return keys
    }

    /// Reads `json`; an unknown key or a value of the wrong type is `invalidRequest`
    /// naming the key.
    public init(_ json: JSON) throws(NetworkError) {
        try self.init(json, context: "endpoint")
    }

    /// Reads the JSON text `json`.
    public init(json: String) throws(NetworkError) {
        try self.init(try JSON.parseDocument(json, what: "endpoint document"))
    }

    package init(_ json: JSON, context: String, allowParams: Bool = false) throws(NetworkError) {
        let doc = try DocumentReader(json, context: context)
        let keys = try Self.keys(of: doc, allowParams: allowParams)
        endpoint = Endpoint<JSON>(path: keys.contains(.path) ? try doc.string("path") ?? "" : "",
                                  responseDecoder: AutoResponseDecoder())
        if keys.contains(.isFullPath), let full = try doc.bool("isFullPath") { endpoint.isFullPath = full }
        if keys.contains(.method), let method = try doc.string("method") {
            guard let m = HTTPMethod(named: method) else {
                throw .invalidRequest("\(context) key 'method': '\(method.escapedForMessage)' is not an HTTP method token (letters, digits and !#$%&'*+-.^_`|~)")
            }
            endpoint.method = m
        }
        if keys.contains(.headers), let headers = try doc.requestHeaders("headers") { endpoint.headerParameters = headers }
        // Checked where the request is built, when its query pairs are made (once).
        if keys.contains(.query), let query = try doc.object("query") { endpoint.queryParameters = query }
        if keys.contains(.encodedQuery), let query = try doc.string("encodedQuery") { endpoint.encodedQuery = query }
        if keys.contains(.body), let body = doc.value("body") { endpoint.bodyParameters = body }
        if keys.contains(.bodyEncoding), let encoding = try doc.string("bodyEncoding") {
            if encoding == "multipart" {
                guard doc.value("multipart") != nil else {
                    throw .invalidRequest("\(context) key 'bodyEncoding': 'multipart' needs the 'multipart' key")
                }
            } else {
                guard let e = BodyEncoding(rawValue: encoding) else {
                    throw .invalidRequest("\(context) key 'bodyEncoding': '\(encoding.escapedForMessage)' is not one of json, form, text, xml, base64, multipart")
                }
                endpoint.bodyEncoding = e
            }
        }
        if keys.contains(.xmlRoot), let root = try doc.string("xmlRoot") { endpoint.xmlRoot = root }
        if keys.contains(.multipart), let parts = doc.value("multipart") { endpoint.transfer.multipart = try Self.multipart(parts, context: context) }
        if keys.contains(.uploadFrom) { endpoint.transfer.uploadFrom = try doc.filePath("uploadFrom") }
        if keys.contains(.downloadTo) { endpoint.transfer.downloadTo = try doc.filePath("downloadTo") }
        wantsProgress = keys.contains(.progress) ? try doc.bool("progress") ?? false : false
        if keys.contains(.useCache) { endpoint.transfer.useCache = try doc.bool("useCache") ?? false }
        if keys.contains(.stream), let mode = try doc.string("stream") {
            guard let m = StreamMode(rawValue: mode) else {
                throw .invalidRequest("\(context) key 'stream': '\(mode.escapedForMessage)' is not one of sse, lines, chunks")
            }
            endpoint.transfer.stream = m
        }
        if keys.contains(.response), let response = try doc.reader("response") {
            try response.checkKeys(known: ["decoder", "keyPath"])
            let keyPath = try response.string("keyPath")
            switch try response.string("decoder") ?? (keyPath == nil ? "auto" : "json") {
            case "auto": endpoint.responseDecoder = AutoResponseDecoder()
            case "json": endpoint.responseDecoder = JSONResponseDecoder(keyPath: keyPath)
            case "text": endpoint.responseDecoder = StringResponseDecoder()
            case "base64": endpoint.responseDecoder = Base64ResponseDecoder()
            case "none": endpoint.responseDecoder = EmptyResponseDecoder()
            case let other:
                throw .invalidRequest("\(context) key 'response': decoder '\(other.escapedForMessage)' is not one of auto, json, text, base64, none")
            }
            if keyPath != nil, !(endpoint.responseDecoder is JSONResponseDecoder) {
                throw .invalidRequest("\(context) key 'response': keyPath needs the json decoder")
            }
        }
        if keys.contains(.timeout), let t = try doc.seconds("timeout") { endpoint.timeout = t }
        if keys.contains(.acceptableStatus), let a = try doc.acceptableStatus("acceptableStatus") { endpoint.acceptableStatus = a }
        // Retry keys apply over the config's policy, key by key, when the request is built.
        let retry = keys.contains(.retry) ? try doc.retryOverrides("retry") : nil
        let deadline = keys.contains(.deadline) ? try doc.seconds("deadline") : nil
        // `{}` turns the config's authentication off for this endpoint.
        let auth: Authentication?? = keys.contains(.auth) ? .some(try doc.authentication("auth")) : .none
        let itemLimit = keys.contains(.maxStreamItemBytes)
            ? try doc.integer("maxStreamItemBytes", in: 1...Int(Int64.max)) : nil
        let bytes = 0...Int(Int64.max)
        let maxResponse = keys.contains(.maxResponseBytes) ? try doc.integer("maxResponseBytes", in: bytes) : nil
        let maxDownload = keys.contains(.maxDownloadBytes) ? try doc.integer("maxDownloadBytes", in: bytes) : nil
        if retry != nil || deadline != nil || auth != nil || itemLimit != nil || maxResponse != nil || maxDownload != nil {
            endpoint.configureOptions = { options in
                retry?.apply(to: &options.retry)
                if let deadline { options.deadline = deadline }
                if let auth { options.auth = auth }
                if let itemLimit { options.maxStreamItemBytes = itemLimit }
                if let maxResponse { options.maxResponseBytes = maxResponse }
                if let maxDownload { options.maxDownloadBytes = maxDownload }
            }
        }
    }

    private static func multipart(_ value: JSON, context: String) throws(NetworkError) -> [MultipartPart] {
        guard case .array(let items) = value, !items.isEmpty else {
            throw .invalidRequest("\(context) key 'multipart' must be a non-empty array of parts")
        }
        var parts: [MultipartPart] = []
        for (i, item) in items.enumerated() {
            let part = try DocumentReader(item, context: "\(context) key 'multipart' part \(i)")
            try part.checkKeys(known: multipartPartKeys)
            guard let name = try part.string("name") else {
                throw .invalidRequest("\(part.context) needs 'name'")
            }
            let sources = ["text", "file", "base64"].filter { part.value($0) != nil }
            guard sources.count == 1 else {
                throw .invalidRequest("\(part.context) needs exactly one of 'text', 'file', 'base64'")
            }
            let content: MultipartPart.Content
            if let text = try part.string("text") {
                content = .text(text)
            } else if let file = try part.filePath("file") {
                content = .file(path: file)
            } else {
                let encoded = try part.string("base64") ?? ""
                guard let bytes = Base64.decode(encoded) else {
                    throw .invalidRequest("\(part.context) key 'base64' is not valid base64")
                }
                content = .data(bytes)
            }
            parts.append(MultipartPart(name: name, content: content, filename: try part.string("filename"),
                                       contentType: try part.string("contentType")))
        }
        return parts
    }

    /// The keys of a `multipart` part.
    package static let multipartPartKeys: Set<String> = ["name", "text", "file", "base64", "filename", "contentType"]

    /// Merges one overlay key over a named endpoint (or an OpenAPI operation's
    /// document): it replaces, except the objects `headers`, `query` and `response`,
    /// whose members merge (a header replacing the one of its name in any case).
    package static func merge(_ member: JSONObject.Element, into merged: inout JSONObject) {
        if ["headers", "query", "response"].contains(member.key),
           case .object(let add) = member.value, case .object(var existing)? = merged[member.key] {
            for m in add {
                if member.key == "headers", let same = existing.keys.first(where: { $0 != m.key && $0.caseInsensitiveEquals(m.key) }) {
                    existing[same] = nil
                }
                existing[m.key] = m.value
            }
            merged[member.key] = .object(existing)
        } else {
            merged[member.key] = member.value
        }
    }

    /// The named endpoint `base` with `overlay` merged over it: overlay keys replace,
    /// except the objects `headers`, `query` and `response`, whose members merge.
    /// `params` fills the path's placeholders.
    package static func merged(named base: JSON, overlay: JSON) throws(NetworkError) -> JSON {
        guard case .object(var merged) = base else { throw .invalidRequest("named endpoint is not an object") }
        let overlayDoc = try DocumentReader(overlay, context: "overlay")
        var params = JSONObject()
        for member in overlayDoc.object {
            if member.key == "params" {
                if member.value.isNull { continue }
                guard case .object(let p) = member.value else {
                    throw .invalidRequest("overlay key 'params' must be an object, not \(member.value.typeName)")
                }
                params = p
                continue
            }
            merge(member, into: &merged)
        }
        let path = merged["path"]?.stringValue ?? ""
        merged["path"] = .string(try PathTemplate.render(path, params: params))
        return .object(merged)
    }
}
