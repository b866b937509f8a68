import NetlayerJSON

extension HTTPRequest {
    /// An HTTP method: one of the well-known ones, or any other method token (RFC 9110
    /// 9.1: WebDAV's `PROPFIND` and `REPORT`, caches' `PURGE`, ...), sent as written.
    ///
    /// A struct rather than an enum, as in Alamofire, so that a method the library does
    /// not know is still a method; the well-known ones are static members.
    public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        /// nil unless `rawValue` is a non-empty RFC 9110 token (method names are
        /// case-sensitive, so it is kept exactly as given).
        public init?(rawValue: String) {
            guard !rawValue.isEmpty, rawValue.allUTF8(HTTPHeaders.isTokenByte) else {
                return nil
            }
            self.rawValue = rawValue
        }

        private init(known: String) { rawValue = known }

        /// A method as a document names it: a well-known name in any case becomes that
        /// method (`"get"` is GET), any other token is kept as written; nil for a string
        /// that is not a token.
        public init?(named name: String) {
            if let known = Self.wellKnown.first(where: { Self.equalIgnoringASCIICase($0.rawValue, name) }) {
                self = known
            } else {
                self.init(rawValue: name)
            }
        }

        private static func equalIgnoringASCIICase(_ upper: String, _ other: String) -> Bool {
            upper.utf8.count == other.utf8.count
                && zip(upper.utf8, other.utf8).allSatisfy { $0 == ($1 &- 0x61 < 26 ? $1 - 0x20 : $1) }
        }

        public static let get = HTTPMethod(known: "GET")
        public static let head = HTTPMethod(known: "HEAD")
        public static let post = HTTPMethod(known: "POST")
        public static let put = HTTPMethod(known: "PUT")
        public static let patch = HTTPMethod(known: "PATCH")
        public static let delete = HTTPMethod(known: "DELETE")
        public static let options = HTTPMethod(known: "OPTIONS")

        /// The methods above, which documents may name in any case.
        public static let wellKnown: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options]

        public var description: String { rawValue }

        /// GET, HEAD, OPTIONS and TRACE: the methods RFC 9110 section 9.2.1 defines as safe.
        /// Any other, a method this library does not know included, may change what the
        /// server holds (and so invalidates cached responses, RFC 9111 section 4.4).
        public var isSafe: Bool {
            switch rawValue {
            case "GET", "HEAD", "OPTIONS", "TRACE": return true
            default: return false
            }
        }
    }
}

/// `HTTPRequest.HTTPMethod` by the name it is known by.
public typealias HTTPMethod = HTTPRequest.HTTPMethod

/// The seeds' name for `HTTPMethod`.
public typealias HTTPMethodType = HTTPMethod
