import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

extension OpenAPIDocument {
    /// Endpoint keys an operation's call may not set: the document decides them.
    private static let fixedKeys: Set<String> = ["path", "method", "isFullPath"]

    /// The endpoint document that calls `operation` with the call's `overlay`:
    /// `params` by parameter name, `body` as the request body, any other endpoint key
    /// merged as for a named endpoint (`headers`, `query` and `response` member by
    /// member). Every argument is checked against the operation before anything is
    /// sent: a missing or unknown parameter, a value its schema refuses, or a body
    /// its schema refuses is `invalidRequest` naming the parameter or the JSON
    /// pointer of the property at fault.
    ///
    /// - Parameter hasBaseURL: whether the config has a `baseURL`; without one, an
    ///   absolute `servers[0]` is the base.
    package func endpointDocument(for operation: OpenAPIOperation, overlay: JSON, credentials: OpenAPICredentials,
                                  hasBaseURL: Bool) throws(NetworkError) -> JSON {
        let call = try DocumentReader(overlay, context: "call of operation '\(SchemaViolation.quoted(operation.name))'")
        let what = "operation '\(SchemaViolation.quoted(operation.name))'"
        for key in Self.fixedKeys where call.value(key) != nil {
            throw .invalidRequest("\(what): call key '\(key)' is not allowed, the openapi document decides the operation's path and method")
        }
        // The operation's or its path item's servers override the document's.
        let (serverURL, serverPath, serverIsAbsolute) = operation.server
            ?? (self.serverURL, self.serverPath, self.serverIsAbsolute)
        let params = try call.object("params") ?? JSONObject()
        // A parameter is unique by name and location (OpenAPI's Operation `parameters`):
        // one whose name another location shares is addressed as "query:id", "path:id".
        let qualified = { (parameter: OpenAPIParameter) in "\(parameter.location.rawValue):\(parameter.name)" }
        for param in params where !operation.parameters.contains(where: { $0.name == param.key || qualified($0) == param.key }) {
            var message = "\(what) has no parameter '\(SchemaViolation.quoted(param.key))'"
            if let near = KeySuggestion.closest(to: param.key, among: operation.parameters.map(\.name)) {
                message += " (did you mean '\(near)'?)"
            }
            throw .invalidRequest(message)
        }

        var path = operation.path, query: [(String, String)] = [], headers = JSONObject(), cookies: [(String, String)] = []
        var joinedMembers: [(name: String, text: String)] = []  // written already: see joinedFormMember
        for parameter in operation.parameters {
            let shared = operation.parameters.contains { $0.name == parameter.name && $0.location != parameter.location }
            if shared, params[parameter.name] != nil {
                let places = operation.parameters.filter { $0.name == parameter.name }.map(qualified)
                throw .invalidRequest("\(what): parameter '\(SchemaViolation.quoted(parameter.name))' is in more than one place; "
                                      + "name it " + places.map { "'\(SchemaViolation.quoted($0))'" }.joined(separator: " or "))
            }
            guard let value = shared ? params[qualified(parameter)] : params[parameter.name], !value.isNull else {
                if parameter.required {
                    throw .invalidRequest("\(what): missing required \(parameter.location.rawValue) parameter '\(SchemaViolation.quoted(parameter.name))'")
                }
                continue
            }
            if let violation = validator.firstViolation(of: value, against: parameter.schema) {
                let place = violation.pointer.isEmpty ? "" : " at '\(violation.shownPointer)'"
                throw .invalidRequest("\(what): parameter '\(SchemaViolation.quoted(parameter.name))'\(place) \(violation.message)")
            }
            // A parameter described by `content` is sent as its JSON text.
            let sent = parameter.contentType == nil ? value : .string(String(decoding: JSONWriter.serialize(value), as: UTF8.self))
            switch parameter.location {
            case .path:
                let text = try ParameterSerializer.pathText(name: parameter.name, value: sent, style: parameter.parsedStyle,
                                                            explode: parameter.explode)
                if text.isEmpty || text == "." || text == ".." {
                    throw .invalidRequest("\(what): path parameter '\(SchemaViolation.quoted(parameter.name))' cannot be '\(text)', which changes the route")
                }
                path = path.replacing("{\(parameter.name)}", with: text)
            case .query:
                if let text = try ParameterSerializer.joinedFormMember(name: parameter.name, value: sent, style: parameter.parsedStyle,
                                                                       explode: parameter.explode) {
                    joinedMembers.append((parameter.name, text))
                } else {
                    query += try ParameterSerializer.queryPairs(name: parameter.name, value: sent, style: parameter.parsedStyle,
                                                                explode: parameter.explode)
                }
            case .header:
                let text = try ParameterSerializer.headerText(name: parameter.name, value: sent, explode: parameter.explode)
                do {
                    try HTTPHeaders.validate(name: parameter.name, value: text)
                } catch {
                    throw .invalidRequest("\(what): header parameter '\(parameter.name.escapedForMessage)': \(DataTransferError.networkFailure(error).message)")
                }
                headers[parameter.name] = .string(text)
            case .cookie:
                cookies += try ParameterSerializer.cookiePairs(name: parameter.name, value: sent, explode: parameter.explode)
            }
        }

        // A `?` or `#` of the document's path key is part of the path: encoded, it cannot
        // start a query or a fragment. Parameter values are percent-encoded already.
        path = Self.escapingQueryAndFragment(path)
        var document = JSONObject()
        document["method"] = .string(operation.method)
        if hasBaseURL || !serverIsAbsolute {
            let base = serverIsAbsolute ? "" : serverPath
            let joined = (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
            document["path"] = .string(String(joined.drop { $0 == "/" }))
        } else {
            document["path"] = .string((serverURL.hasSuffix("/") ? String(serverURL.dropLast()) : serverURL) + path)
            document["isFullPath"] = .bool(true)
        }
        try applySecurity(of: operation, credentials: credentials, headers: &headers, query: &query, cookies: &cookies)
        if !cookies.isEmpty {
            headers["Cookie"] = .string(cookies.map { "\($0.0)=\($0.1)" }.joined(separator: "; "))
        }
        if !query.isEmpty { document["query"] = .object(Self.queryObject(query)) }
        // A caller's `query` key replaces a parameter of the same name, as it replaces
        // those in `query`; a caller's `encodedQuery` replaces these, as keys do.
        let replaced = call.value("query")?.objectValue
        let written = joinedMembers.filter { replaced?[$0.name] == nil }.map(\.text)
        if !written.isEmpty { document["encodedQuery"] = .string(written.joined(separator: "&")) }
        if !headers.isEmpty { document["headers"] = .object(headers) }
        try addBody(call, operation: operation, to: &document)

        for member in call.object where member.key != "params" && member.key != "body" && member.key != "bodyEncoding" {
            EndpointDocument.merge(member, into: &document)
        }
        return .object(document)
    }

    /// The body keys: `body` checked against the schema of the chosen media type and
    /// encoded as that type; `uploadFrom` or `multipart` given by the caller are sent
    /// as they are, with the operation's media type.
    private func addBody(_ call: DocumentReader, operation: OpenAPIOperation,
                         to document: inout JSONObject) throws(NetworkError) {
        let what = "operation '\(SchemaViolation.quoted(operation.name))'"
        let body = call.value("body")
        let rawBody = call.value("uploadFrom") != nil || call.value("multipart") != nil
        guard let requestBody = operation.requestBody else {
            if body != nil || rawBody { throw .invalidRequest("\(what) takes no request body") }
            return
        }
        let index = try requestBody.mediaType(for: try call.string("bodyEncoding"), operation: operation.name)
        guard let body else {
            if rawBody {
                if call.value("multipart") != nil { document["bodyEncoding"] = .string("multipart") }
                else { document["headers"] = Self.merged(document["headers"], ["Content-Type": .string(requestBody.contentTypes[index])]) }
                return
            }
            if requestBody.required { throw .invalidRequest("\(what): missing required body") }
            return
        }
        if rawBody { throw .invalidRequest("\(what): 'body' excludes 'uploadFrom' and 'multipart'") }
        // A file part of a multipart body stands for a binary string in its schema.
        var checked = body
        if OpenAPIRequestBody.encoding(of: requestBody.contentTypes[index]) == "multipart", case .object(var fields) = body {
            for field in fields where OpenAPIRequestBody.isFilePart(field.value) { fields[field.key] = .string("") }
            checked = .object(fields)
        }
        if let violation = validator.firstViolation(of: checked, against: requestBody.schemas[index]) {
            let place = violation.pointer.isEmpty ? "body" : "body at '\(violation.shownPointer)'"
            throw .invalidRequest("\(what): \(place) \(violation.message)")
        }
        let keys = try requestBody.documentKeys(for: body, mediaType: index, references: references, operation: operation.name)
        for key in keys {
            document[key.key] = key.key == "headers" ? Self.merged(document["headers"], key.value.objectValue ?? [:]) : key.value
        }
    }

    /// Fills in the first security requirement the credentials satisfy entirely. An
    /// operation whose requirements none of them meet is sent without: the server's
    /// 401 says more than a guess, and the caller may pass its own headers.
    private func applySecurity(of operation: OpenAPIOperation, credentials: OpenAPICredentials, headers: inout JSONObject,
                               query: inout [(String, String)], cookies: inout [(String, String)]) throws(NetworkError) {
        guard let chosen = operation.security.first(where: { requirement in
            !requirement.isEmpty && requirement.allSatisfy { credentials.secrets[$0] != nil }
        }) else { return }
        for name in chosen {
            guard let scheme = securitySchemes[name], let secret = credentials.secrets[name] else { continue }
            switch (scheme.kind, secret) {
            case (.apiKey(let keyName, .header), .text(let key)): headers[keyName] = .string(key)
            case (.apiKey(let keyName, .query), .text(let key)): query.append((keyName, key))
            case (.apiKey(let keyName, .cookie), .text(let key)):
                cookies += try ParameterSerializer.cookiePairs(name: keyName, value: .string(key), explode: true)
            // Checked as the config's `auth` is: a bearer token of printable ASCII without
            // spaces, a user name without ':'.
            case (.basic, .basic(let user, let password)):
                let auth = Authentication.basic(user: user, password: password)
                try auth.validate(key: "credentials key '\(name)'")
                headers["Authorization"] = .string(auth.headerValue ?? "")
            case (.bearer, .text(let token)):
                let auth = Authentication.bearer(token: token)
                try auth.validate(key: "credentials key '\(name)'")
                headers["Authorization"] = .string(auth.headerValue ?? "")
            default: continue
            }
        }
    }

    /// `path` with `?` as `%3F` and `#` as `%23`.
    private static func escapingQueryAndFragment(_ path: String) -> String {
        guard path.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return path }
        return path.replacing("?", with: "%3F").replacing("#", with: "%23")
    }

    /// Query pairs as an endpoint document's `query`: a name given more than once
    /// becomes an array, which repeats the name on the wire in the same order.
    private static func queryObject(_ pairs: [(String, String)]) -> JSONObject {
        var object = JSONObject()
        for (name, value) in pairs {
            switch object[name] {
            case nil: object[name] = .string(value)
            case .array(var values)?:
                values.append(.string(value))
                object[name] = .array(values)
            case let first?: object[name] = .array([first, .string(value)])
            }
        }
        return object
    }

    private static func merged(_ existing: JSON?, _ add: JSONObject) -> JSON {
        var object = existing?.objectValue ?? JSONObject()
        for member in add { object[member.key] = member.value }
        return .object(object)
    }
}
