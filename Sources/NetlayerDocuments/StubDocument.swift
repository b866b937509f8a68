import FoundationEssentials
import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// The config's `stub` key: the rules a stub transport answers from.
package enum StubDocument {
    static func rules(_ value: JSON) throws(NetworkError) -> [StubSessionManager.Rule] {
        guard case .array(let items) = value else {
            throw .invalidRequest("config key 'stub' must be an array of rules, not \(value.typeName)")
        }
        var rules: [StubSessionManager.Rule] = []
        for (i, item) in items.enumerated() {
            let doc = try DocumentReader(item, context: "config key 'stub' rule \(i)")
            try doc.checkKeys(known: ["method", "path", "status", "headers", "body", "bodyBase64", "delay", "error"])
            guard let path = try doc.string("path"), !path.isEmpty else {
                throw .invalidRequest("config key 'stub' rule \(i) needs 'path'")
            }
            guard path.utf8.count <= StubPathPattern.maxBytes else {
                throw .invalidRequest("config key 'stub' rule \(i) key 'path' has \(path.utf8.count) bytes, more than the \(StubPathPattern.maxBytes) a pattern may have")
            }
            var rule = StubSessionManager.Rule(path: path)
            if let name = try doc.string("method") {
                guard let method = HTTPMethod(named: name) else {
                    throw .invalidRequest("config key 'stub' rule \(i) key 'method': '\(name.escapedForMessage)' is not a method token")
                }
                rule.method = method
            }
            rule.status = try doc.integer("status", in: 100...599) ?? 200
            var contentType: String?
            switch doc.value("body") {
            case nil: break
            case .string(let text)?:
                rule.body = Array(text.utf8)
                contentType = "text/plain; charset=utf-8"
            case let json?:
                rule.body = JSONWriter.serialize(json)
                contentType = "application/json"
            }
            if let text = try doc.string("bodyBase64") {
                guard doc.value("body") == nil, let bytes = Data(base64Encoded: text) else {
                    throw .invalidRequest("config key 'stub' rule \(i) key 'bodyBase64' must be base64, and without 'body'")
                }
                rule.body = [UInt8](bytes)
                contentType = "application/octet-stream"
            }
            var headers = HTTPHeaders()
            if let given = try doc.headers("headers") {
                for field in given.separateFields { headers.add(name: field.name.lowercased(), value: field.value) }
            }
            if let contentType, headers["content-type"] == nil { headers.add(name: "content-type", value: contentType) }
            rule.headers = headers
            if let delay = doc.value("delay") {
                guard let d = delay.doubleValue, d >= 0, d <= 3600 else {
                    throw .invalidRequest("config key 'stub' rule \(i) key 'delay' must be seconds from 0 to 3600")
                }
                rule.delay = d
            }
            if let error = try doc.reader("error") {
                try error.checkKeys(known: ["kind", "message"])
                let name = try error.string("kind") ?? ""
                let message = try error.string("message") ?? "stub: \(name)"
                guard let kind = ErrorKind(rawValue: name), let failure = NetworkError(kind: kind, message: message) else {
                    throw .invalidRequest("config key 'stub' rule \(i) key 'error': kind '\(name.escapedForMessage)' is not one a transport fails with")
                }
                rule.error = failure
            }
            rules.append(rule)
        }
        return rules
    }
}
