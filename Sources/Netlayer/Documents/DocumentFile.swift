import Glibc

/// Reads document files (configs, cassettes) and parses document text, with errors
/// that name the file.
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
