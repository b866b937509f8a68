import NetlayerCore
import NetlayerFeatures
import NetlayerJSON


/// Reads one JSON object of a document with typed accessors whose errors name the
/// key ("endpoint key 'timeout' must be a positive number, not a string").
/// A key set to null reads as absent: "use the default".
package struct DocumentReader {
    package let object: JSONObject
    /// Where the object sits, for messages: "config", "endpoint", "endpoint key 'response'".
    package let context: String

    package init(_ value: JSON, context: String) throws(NetworkError) {
        guard case .object(let object) = value else {
            throw .invalidRequest("\(context) must be a JSON object, not \(value.typeName)")
        }
        self.object = object
        self.context = context
    }

    /// Refuses keys outside `known`, and non-null keys in `unsupported` (part of the
    /// contract, not of this version), so a typo or an unsupported feature never
    /// passes silently.
    package func checkKeys(known: Set<String>, unsupported: Set<String> = []) throws(NetworkError) {
        for member in object {
            if unsupported.contains(member.key) {
                if member.value.isNull { continue }
                throw .invalidRequest("\(context) key '\(member.key)' is not supported by netlayer \(Netlayer.version) yet")
            }
            if !known.contains(member.key) { throw unknownKey(member.key, known: known) }
        }
    }

    /// The error for a key this kind of document does not have, suggesting the closest
    /// of the `known` keys ("unknown config key 'baseUrl' (did you mean 'baseURL'?)").
    package func unknownKey(_ key: String, known: some Sequence<String> = [String]()) -> NetworkError {
        let message = "unknown \(context) key '\(key.escapedForMessage)'"
        guard let suggestion = KeySuggestion.closest(to: key, among: known) else { return .invalidRequest(message) }
        return .invalidRequest("\(message) (did you mean '\(suggestion)'?)")
    }

    package func value(_ key: String) -> JSON? {
        guard let v = object[key], !v.isNull else { return nil }
        return v
    }

    private func fail(_ key: String, _ expected: String, _ got: JSON) -> NetworkError {
        .invalidRequest("\(context) key '\(key)' must be \(expected), not \(got.typeName)")
    }

    package func string(_ key: String) throws(NetworkError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw fail(key, "a string", v) }
        return s
    }

    /// A file path: a string without NUL, which would end the path where the system
    /// reads it and name another file than the one given (`a.txt\u0000.png`).
    package func filePath(_ key: String) throws(NetworkError) -> String? {
        guard let path = try string(key) else { return nil }
        if path.utf8.contains(0) {
            throw .invalidRequest("\(context) key '\(key)' holds a NUL byte (\\u0000), which no file path can hold")
        }
        return path
    }

    package func bool(_ key: String) throws(NetworkError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw fail(key, "true or false", v) }
        return b
    }

    /// Seconds: a positive, finite number.
    package func seconds(_ key: String) throws(NetworkError) -> Double? {
        guard let v = value(key) else { return nil }
        guard let d = v.doubleValue else { throw fail(key, "a positive number of seconds", v) }
        try HTTPRequest.checkSeconds(d, key: "\(context) key '\(key)'")
        return d
    }

    package func integer(_ key: String, in range: ClosedRange<Int>) throws(NetworkError) -> Int? {
        guard let v = value(key) else { return nil }
        guard let i = v.intValue else {
            // An integer too large for 64 bits (2^63) is out of range, not "a number".
            if let d = v.doubleValue, d.isFinite, d.rounded() == d {
                throw .invalidRequest("\(context) key '\(key)' must be between \(range.lowerBound) and \(range.upperBound), not \(Self.literal(of: v, d))")
            }
            throw fail(key, "an integer", v)
        }
        guard range.contains(i) else {
            throw .invalidRequest("\(context) key '\(key)' must be between \(range.lowerBound) and \(range.upperBound), not \(i)")
        }
        return i
    }

    /// A number as written (`.number` keeps its literal), for a message.
    private static func literal(of value: JSON, _ d: Double) -> String {
        if case .number(let text) = value { return text }
        return String(d)
    }

    package func object(_ key: String) throws(NetworkError) -> JSONObject? {
        guard let v = value(key) else { return nil }
        guard case .object(let o) = v else { throw fail(key, "an object", v) }
        return o
    }

    package func reader(_ key: String) throws(NetworkError) -> DocumentReader? {
        guard let v = value(key) else { return nil }
        return try DocumentReader(v, context: "\(context) key '\(key)'")
    }

    /// Header fields a request sends (config, endpoint, an ADAPT reply): an object of
    /// strings, each field checked by the core's one rule for them
    /// (`HTTPHeaders.validate(name:value:)`), which also refuses the fields the library
    /// sets itself (Host, Content-Length, Transfer-Encoding).
    package func requestHeaders(_ key: String) throws(NetworkError) -> HTTPHeaders? {
        guard var headers = try headerFields(key, check: HTTPHeaders.validate(name:value:)) else { return nil }
        headers.markValidated()
        return headers
    }

    /// Header fields of an answer the caller writes (a stub's response): an object of
    /// strings whose names and values HTTP can carry. Not for a request's headers
    /// (`requestHeaders`).
    package func headers(_ key: String) throws(NetworkError) -> HTTPHeaders? {
        try headerFields(key, check: HTTPHeaders.validateSyntax(name:value:))
    }

    private func headerFields(_ key: String,
                              check: (String, String) throws(NetworkError) -> Void) throws(NetworkError) -> HTTPHeaders? {
        guard let o = try object(key) else { return nil }
        // Servers take far fewer (Apache 100 by default); the bound keeps building and
        // merging them, which looks names up, linear in what a caller can send.
        guard o.count <= Self.maxHeaderFields else {
            throw .invalidRequest("\(context) key '\(key)' has \(o.count) fields; at most \(Self.maxHeaderFields) are sent")
        }
        var headers = HTTPHeaders()
        for member in o {
            guard case .string(let value) = member.value else {
                throw .invalidRequest("\(context) key '\(key)': header '\(member.key.escapedForMessage)' must be a string, not \(member.value.typeName)")
            }
            do {
                try check(member.key, value)
            } catch {
                throw .invalidRequest("\(context) key '\(key)': \(DataTransferError.networkFailure(error).message)")
            }
            let before = headers.count
            headers[member.key] = value
            if headers.count == before {  // replaced a field: the same name in another case
                throw .invalidRequest("\(context) key '\(key)': header '\(member.key.escapedForMessage)' is given twice (names compare without case)")
            }
        }
        return headers
    }

    /// The most header fields a document's `headers` may hold.
    package static let maxHeaderFields = 1000

    /// Query parameters: an object whose values the core's query encoding accepts.
    package func query(_ key: String) throws(NetworkError) -> JSONObject? {
        guard let o = try object(key) else { return nil }
        _ = try HTTPRequest.QueryEncoding.pairs(from: o, context: "\(context) key '\(key)'")
        return o
    }

    /// A `retry` object applied over `policy`: only the keys present change it.
    package func retry(_ key: String, over policy: RetryPolicy) throws(NetworkError) -> RetryPolicy? {
        guard let overrides = try retryOverrides(key) else { return nil }
        var policy = policy
        overrides.apply(to: &policy)
        return policy
    }

    /// The keys of a `retry` object, read and checked once; applied over whatever
    /// policy the config gives (`RetryOverrides.apply`).
    func retryOverrides(_ key: String) throws(NetworkError) -> RetryOverrides? {
        guard let doc = try reader(key) else { return nil }
        try doc.checkKeys(known: ["maxAttempts", "backoff", "maxBackoff", "onStatus", "methods"])
        var policy = RetryOverrides()
        if let n = try doc.integer("maxAttempts", in: 1...100) { policy.maxAttempts = n }
        if let v = doc.value("backoff") {
            guard let d = v.doubleValue, d >= 0, d <= 3600 else {
                throw .invalidRequest("\(doc.context) key 'backoff' must be a number of seconds from 0 to 3600")
            }
            policy.backoff = d
        }
        if let v = doc.value("maxBackoff") {
            guard let d = v.doubleValue, d >= 0, d <= 3600 else {
                throw .invalidRequest("\(doc.context) key 'maxBackoff' must be a number of seconds from 0 to 3600")
            }
            policy.maxBackoff = d
        }
        if let v = doc.value("onStatus") {
            guard case .array(let items) = v else { throw doc.fail("onStatus", "an array of status codes", v) }
            var codes = Set<Int>()
            for item in items {
                guard let code = item.intValue, (100...599).contains(code) else {
                    throw .invalidRequest("\(doc.context) key 'onStatus': each entry must be a status code from 100 to 599")
                }
                codes.insert(code)
            }
            policy.onStatus = codes
        }
        if let v = doc.value("methods") {
            guard case .array(let items) = v else { throw fail("methods", "an array of method names", v) }
            var methods = Set<HTTPMethod>()
            for item in items {
                guard let name = item.stringValue, let method = HTTPMethod(named: name) else {
                    throw .invalidRequest("\(doc.context) key 'methods': each entry must be an HTTP method token")
                }
                methods.insert(method)
            }
            policy.methods = methods
        }
        return policy
    }

    /// `[[200, 299], 304]`: codes and inclusive ranges of codes from 100 to 599.
    package func acceptableStatus(_ key: String) throws(NetworkError) -> AcceptableStatus? {
        guard let v = value(key) else { return nil }
        guard case .array(let items) = v, !items.isEmpty else {
            if case .array = v { throw .invalidRequest("\(context) key '\(key)' must list at least one code or [low, high] range, not be empty") }
            throw fail(key, "a non-empty array of codes and [low, high] ranges", v)
        }
        var ranges: [ClosedRange<Int>] = []
        for item in items {
            if let code = item.intValue, (100...599).contains(code) {
                ranges.append(code...code)
            } else if case .array(let pair) = item, pair.count == 2,
                      let low = pair[0].intValue, let high = pair[1].intValue,
                      (100...599).contains(low), (100...599).contains(high), low <= high {
                ranges.append(low...high)
            } else {
                throw .invalidRequest("\(context) key '\(key)': each entry must be a status code (100-599) or a [low, high] range with low <= high")
            }
        }
        return AcceptableStatus(ranges)
    }
}

/// The keys an endpoint's `retry` object sets, over the config's policy.
package struct RetryOverrides: Sendable {
    package var maxAttempts: Int?
    package var backoff: Double?
    package var maxBackoff: Double?
    package var onStatus: Set<Int>?
    package var methods: Set<HTTPMethod>?

    package func apply(to policy: inout RetryPolicy) {
        if let maxAttempts { policy.maxAttempts = maxAttempts }
        if let backoff { policy.backoff = backoff }
        if let maxBackoff { policy.maxBackoff = maxBackoff }
        if let onStatus { policy.onStatus = onStatus }
        if let methods { policy.methods = methods }
    }
}
