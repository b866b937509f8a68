import Glibc
import NetlayerJSON

/// A `.netrc` file read by Netlayer rather than by libcurl: its entry for a request's
/// host becomes an ordinary `Authorization: Basic` header when the request is built,
/// so it gets every rule that header has (redacted in logs and cassettes, part of the
/// response cache's key, dropped on a redirect to another scheme, host or port).
/// libcurl would look the file up again for each redirect hop's host, and send the
/// password to another port of the same host, or over plain http.
///
/// The grammar is curl's: whitespace-separated tokens, `machine NAME`, `default`,
/// `login`, `password` (`account` ignored), `macdef` skipping its macro up to a blank
/// line, `#` comments, and double-quoted tokens with `\n`, `\r`, `\t` and `\"` escapes.
public struct Netrc: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// nil for the `default` entry.
        public var machine: String?
        public var login: String?
        public var password: String?
    }

    public var entries: [Entry]

    /// The most a netrc file may hold; a larger one is refused rather than read.
    public static let maxBytes = 1 << 20

    /// Parses netrc text; a quoted token left open is an error naming `source`.
    public init(text: some Collection<UInt8>, source: String) throws(NetworkError) {
        var tokens = Tokens(Array(text))
        var entries: [Entry] = []
        var expecting: String?
        while let token = try tokens.next(source: source) {
            if let key = expecting {
                expecting = nil
                switch key {
                case "machine": entries.append(Entry(machine: token))
                case "login": if !entries.isEmpty { entries[entries.count - 1].login = token }
                case "password": if !entries.isEmpty { entries[entries.count - 1].password = token }
                default: break  // account, macdef's name
                }
                if key == "macdef" { tokens.skipMacro() }
                continue
            }
            switch token.lowercased() {
            case "machine", "login", "password", "account", "macdef": expecting = token.lowercased()
            case "default": entries.append(Entry(machine: nil))
            default: break
            }
        }
        self.entries = entries
    }

    /// The login and password for `host` (any case): the first `machine` entry naming
    /// it, else the `default` entry; nil when neither has both.
    public func credentials(forHost host: String) -> (login: String, password: String)? {
        let named = entries.first { $0.machine?.lowercased() == host.lowercased() }
        guard let entry = named ?? entries.first(where: { $0.machine == nil }),
              let login = entry.login, let password = entry.password else { return nil }
        return (login, password)
    }

    /// The file `auth: {"netrc": ...}` names: `file`, or `.netrc` in the home folder
    /// ($HOME, else the user's entry in the password database).
    public static func path(_ file: String?) -> String {
        if let file { return file }
        var home = getenv("HOME").map { String(cString: $0) }
        if home?.isEmpty ?? true, let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir {
            home = String(cString: dir)
        }
        return (home ?? "") + "/.netrc"
    }

    /// The netrc file at `path`, read whole (a regular file of at most `maxBytes`), and
    /// kept while the file's identity, size and modification time stay the same, so a
    /// client re-reads it only when it changes. Errors name `key`.
    public static func load(_ path: String, key: String) throws(NetworkError) -> Netrc {
        let stamp: RegularFile.Stamp
        let bytes: [UInt8]
        do {
            let file = try RegularFile(path: path, maxBytes: maxBytes)
            if let kept = cache.withLock({ $0[path] }), kept.stamp == file.stamp { return kept.netrc }
            stamp = file.stamp
            bytes = try file.readAll()
        } catch {
            throw .invalidRequest("\(key): netrc file \(error.reasonForKey)")
        }
        let netrc = try Netrc(text: bytes, source: "\(key): netrc file '\(path.escapedForMessage)'")
        cache.withLock { kept in
            if kept.count >= 64 { kept.removeAll() }  // a few files per process, in practice
            kept[path] = (stamp, netrc)
        }
        return netrc
    }

    private static let cache = Locked<[String: (stamp: RegularFile.Stamp, netrc: Netrc)]>([:])

    /// curl's tokenizer: a token ends at whitespace, or is a quoted string.
    private struct Tokens {
        let bytes: [UInt8]
        var i = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func next(source: String) throws(NetworkError) -> String? {
            while i < bytes.count {
                let b = bytes[i]
                if Self.isSpace(b) { i += 1; continue }
                if b == UInt8(ascii: "#") {  // the rest of the line is a comment
                    while i < bytes.count, bytes[i] != 0x0A { i += 1 }
                    continue
                }
                if b == UInt8(ascii: "\"") { return try quoted(source: source) }
                let start = i
                while i < bytes.count, !Self.isSpace(bytes[i]) { i += 1 }
                return String(decoding: bytes[start..<i], as: UTF8.self)
            }
            return nil
        }

        /// After `macdef NAME`: the macro's lines, up to an empty line.
        mutating func skipMacro() {
            while i < bytes.count, bytes[i] != 0x0A { i += 1 }  // the rest of the macdef line
            while i < bytes.count {
                i += 1  // past the newline
                if i >= bytes.count || bytes[i] == 0x0A || bytes[i] == 0x0D { return }
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            }
        }

        private mutating func quoted(source: String) throws(NetworkError) -> String {
            var out: [UInt8] = []
            i += 1
            while i < bytes.count {
                let b = bytes[i]
                i += 1
                switch b {
                case UInt8(ascii: "\""):
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\") where i < bytes.count:
                    let e = bytes[i]
                    i += 1
                    out.append(e == UInt8(ascii: "n") ? 0x0A : e == UInt8(ascii: "r") ? 0x0D : e == UInt8(ascii: "t") ? 0x09 : e)
                case 0x0A:
                    throw .invalidRequest("\(source): a quoted token is not closed before the end of its line")
                default:
                    out.append(b)
                }
            }
            throw .invalidRequest("\(source): a quoted token is not closed before the end of the file")
        }

        private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0B || b == 0x0C }
    }
}
