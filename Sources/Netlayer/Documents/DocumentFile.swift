import Glibc

/// Reads and writes document files (configs, cassettes) and parses document text,
/// with errors that name the file.
package enum DocumentFile {
    /// The most a document file may hold; a larger one is refused rather than read.
    package static let maxBytes = 256 << 20

    /// The bytes of the regular file at `path`.
    package static func read(_ path: String) throws(NetworkError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .io("cannot open '\(path.escapedForMessage)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw .io("'\(path.escapedForMessage)' is not a regular file")
        }
        guard info.st_size <= maxBytes else {
            throw .tooLarge("'\(path.escapedForMessage)' holds \(info.st_size) bytes, more than \(maxBytes)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { break }
                throw .io("cannot read '\(path.escapedForMessage)': \(String(cString: strerror(errno)))")
            }
            done += n
        }
        return Array(bytes.prefix(done))
    }

    /// Writes `bytes` to `path` whole or not at all: into a new file in the same
    /// folder (mode 0666 less the umask, as for any new file), synced, then renamed
    /// over `path`, so that a reader never sees half a file.
    package static func write(_ bytes: [UInt8], to path: String) throws(NetworkError) {
        let (folder, name) = split(path)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var fd: Int32 = -1
        var temporary = ""
        var failure: Int32 = 0
        for _ in 0..<100 {
            let suffix = String(decoding: (0..<8).map { _ in letters.randomElement()! }, as: UTF8.self)
            temporary = "\(folder)/.\(name).tmp-\(suffix)"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0o666)
            failure = fd >= 0 ? 0 : errno
            if failure != EEXIST { break }
        }
        guard fd >= 0 else {
            throw .io("cannot write '\(path.escapedForMessage)': cannot create a file in '\(folder.escapedForMessage)': \(String(cString: strerror(failure)))")
        }
        var done = 0
        while done < bytes.count, failure == 0 {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n > 0 { done += n } else if n < 0, errno == EINTR { continue } else { failure = n < 0 ? errno : EIO }
        }
        if failure == 0, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw .io("cannot write '\(path.escapedForMessage)': \(String(cString: strerror(failure)))")
        }
    }

    /// Fails unless a file can be written at `path` later: its folder exists and is
    /// writable, and `path` is not a folder.
    package static func checkWritable(_ path: String) throws(NetworkError) {
        let folder = split(path).folder
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .io("cannot write '\(path.escapedForMessage)': folder '\(folder.escapedForMessage)' does not exist")
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw .io("cannot write '\(path.escapedForMessage)': \(String(cString: strerror(errno)))")
        }
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw .io("cannot write '\(path.escapedForMessage)': it is a folder")
        }
    }

    /// The folder ("." for a bare name, "/" at the root) and the name of `path`.
    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }
}

extension JSON {
    /// `text` parsed as a document; invalid JSON is `invalidRequest` naming `what`.
    package static func parseDocument(_ text: some Collection<UInt8>, what: String) throws(NetworkError) -> JSON {
        do {
            return try JSONParser.parse(text)
        } catch {
            throw .invalidRequest("\(what) is not valid JSON: \(error)")
        }
    }

    package static func parseDocument(_ text: String, what: String) throws(NetworkError) -> JSON {
        try parseDocument(Array(text.utf8), what: what)
    }
}
