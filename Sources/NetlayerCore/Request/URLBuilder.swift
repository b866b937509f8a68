import NetlayerJSON

extension HTTPRequest {
    /// The one place a request URL is assembled from a base URL, an endpoint path and
    /// query parameters.
    package enum URLBuilder {
        /// The URL for `path`, joined to `base` with exactly one slash, plus the query:
        /// the base URL's (or the full path's) as written, then `encodedQuery` as written,
        /// then `query`'s pairs, percent-encoded.
        ///
        /// A path can never change the host: a path that starts with "//" or "\", holds
        /// a backslash, or starts with a scheme is `urlGeneration`; with `isFullPath`
        /// the path must itself be an absolute http(s) URL.
        package static func url(base: BaseURL?, path: String, isFullPath: Bool,
                               query: JSONObject, encodedQuery: String? = nil,
                               parser: any URLParsing) throws(NetworkError) -> String {
            var pathCopy = path
            let hasControl = pathCopy.withUTF8 { bytes in bytes.contains { $0 < 0x20 || $0 == 0x7F } }
            if hasControl {
                throw .invalidRequest("path contains a control character (CR, LF, NUL or similar)")
            }
            // One buffer, one String at the end: this runs for every request.
            var out: [UInt8] = []
            let existingQuery: String?
            if isFullPath {
                let full = try BaseURL(path, role: "path (isFullPath)", parser: parser)
                out.reserveCapacity(full.origin.utf8.count + full.path.utf8.count + 32)
                append(full.origin, to: &out)
                HTTPRequest.PercentEncoding.append(full.path.isEmpty ? "/" : full.path, escaping: .path, into: &out)
                existingQuery = full.query
            } else {
                guard let base else {
                    throw .urlGeneration("no baseURL is configured and path '\(path.escapedForMessage)' is not a full URL (set isFullPath)")
                }
                try checkRelative(&pathCopy)
                out.reserveCapacity(base.relativePrefix.count + path.utf8.count + 64)
                out.append(contentsOf: base.relativePrefix)
                pathCopy.withUTF8 { bytes in
                    var start = 0  // the path is relative to the base's: its leading "/"s go
                    while start < bytes.count, bytes[start] == UInt8(ascii: "/") { start += 1 }
                    HTTPRequest.PercentEncoding.append(UnsafeBufferPointer(rebasing: bytes[start...]), escaping: .path, into: &out)
                }
                existingQuery = base.query
            }
            if let existingQuery {
                out.append(UInt8(ascii: "?"))
                // As written, but with the bytes that may not stand in a URL (RFC 3986)
                // escaped as browsers and requests escape them; `%XX` escapes stay, and
                // the query's own syntax is the server's.
                HTTPRequest.PercentEncoding.append(existingQuery, escaping: .writtenQuery, into: &out)
            }
            var hasQuery = existingQuery != nil
            if let encodedQuery, !encodedQuery.isEmpty {
                if encodedQuery.utf8.first == UInt8(ascii: "?") {
                    throw .invalidRequest("encodedQuery '\(encodedQuery.escapedForMessage)' starts with '?': give the query without it")
                }
                out.append(hasQuery ? UInt8(ascii: "&") : UInt8(ascii: "?"))
                // As its writer encoded it: `&`, `=` and `,` are the writer's syntax; bytes
                // that may not stand in a query (a space, "#", controls, ...) are escaped.
                HTTPRequest.PercentEncoding.append(encodedQuery, escaping: .encodedQuery, into: &out)
                hasQuery = true
            }
            if !query.isEmpty {
                let mark = out.count
                out.append(hasQuery ? UInt8(ascii: "&") : UInt8(ascii: "?"))
                try HTTPRequest.QueryEncoding.encode(query, context: "query", into: &out)
                if out.count == mark + 1 { out.removeLast() }  // only nulls: no query
            }
            return String(decoding: out, as: UTF8.self)
        }

        private static func checkRelative(_ path: inout String) throws(NetworkError) {
            // Bytes, not Characters, in one pass: every byte tested here is ASCII, and this
            // runs per request.
            let (problem, mayClimb) = path.withUTF8 { bytes -> (String?, Bool) in
                let n = bytes.count
                if n >= 2, bytes[0] == UInt8(ascii: "/"), bytes[1] == UInt8(ascii: "/") {
                    return ("starts with '//', which would change the host of baseURL", false)
                }
                // "http:..." or "mailto:..." would be read as a new URL by a resolver: a
                // scheme is a letter, then letters, digits, "+", "-" or ".", then ":".
                var inScheme = n > 0 && isASCIILetter(bytes[0])
                var hasScheme = false
                // A ".." segment needs two dots side by side or a percent-encoded one.
                var mayClimb = false
                for i in 0..<n {
                    let b = bytes[i]
                    if b == UInt8(ascii: "\\") { return ("contains a backslash, which URL parsers disagree on", false) }
                    if b == UInt8(ascii: "%") || (b == UInt8(ascii: ".") && i + 1 < n && bytes[i + 1] == UInt8(ascii: ".")) {
                        mayClimb = true
                    }
                    if inScheme, i > 0 {
                        if b == UInt8(ascii: ":") {
                            hasScheme = true
                            inScheme = false
                        } else if !(isASCIILetter(b) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
                                    || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")) {
                            inScheme = false
                        }
                    }
                }
                return (hasScheme ? "" : nil, mayClimb)
            }
            if problem == nil, mayClimb, climbsOut(path) {
                throw .urlGeneration("path '\(path.escapedForMessage)' climbs out of the base URL's path with '..' segments")
            }
            guard let problem else { return }
            if problem.isEmpty {
                throw .urlGeneration("path '\(path)' starts with a scheme; set isFullPath for a complete URL, or write '/\(path)' for a relative path")
            }
            throw .urlGeneration("path '\(path)' \(problem)")
        }

        /// Whether the path's dot segments ("..", also written "%2E%2E" or ".%2e", which
        /// servers decode) lead above where it starts: libcurl and servers resolve them, so
        /// "users/../../admin" under "/api/v1/" would be "/admin".
        private static func climbsOut(_ path: String) -> Bool {
            var path = path
            return path.withUTF8 { bytes in
                var depth = 0
                var start = 0
                for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "/") {
                    defer { start = i + 1 }
                    guard i > start else { continue }  // empty segments ("//") do not count
                    switch dotCount(UnsafeBufferPointer(rebasing: bytes[start..<i])) {
                    case 1: continue
                    case 2:
                        depth -= 1
                        if depth < 0 { return true }
                    default: depth += 1
                    }
                }
                return false
            }
        }

        /// 1 for a "." segment, 2 for "..", each dot also as "%2E" or "%2e"; else 0.
        private static func dotCount(_ segment: UnsafeBufferPointer<UInt8>) -> Int {
            var dots = 0
            var i = 0
            while i < segment.count {
                if segment[i] == UInt8(ascii: ".") {
                    i += 1
                } else if segment[i] == UInt8(ascii: "%"), segment.count - i >= 3, segment[i + 1] == UInt8(ascii: "2"),
                          segment[i + 2] | 0x20 == UInt8(ascii: "e") {
                    i += 3
                } else {
                    return 0
                }
                dots += 1
                if dots > 2 { return 0 }
            }
            return dots
        }

        /// A string's bytes in one copy (appending a `String.UTF8View` goes byte by byte).
        private static func append(_ string: String, to out: inout [UInt8]) {
            var string = string
            string.withUTF8 { out.append(contentsOf: $0) }
        }

        private static func isASCIILetter(_ b: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b | 0x20)
        }
    }
}
