import Glibc
import NetlayerJSON

/// Reads and writes local files (configs, cassettes, cookie jars; checks TLS files)
/// and parses document text, with errors that name the file. Only regular files are
/// read or replaced: nothing here waits on a FIFO or reads a device without end.
package enum DocumentFile {
    /// The most a document file may hold; a larger one is refused rather than read.
    package static let maxBytes = 256 << 20

    /// The bytes of the regular file at `path`, at most `maxBytes` of them.
    package static func read(_ path: String, maxBytes: Int = maxBytes) throws(NetworkError) -> [UInt8] {
        guard let bytes = try readIfPresent(path, maxBytes: maxBytes) else {
            throw .io("cannot open '\(path.escapedForMessage)': \(String(cString: strerror(ENOENT)))")
        }
        return bytes
    }

    /// The bytes of the regular file at `path`, at most `maxBytes` of them, or nil when
    /// nothing is at `path` (a dangling symbolic link included). The file is opened
    /// without blocking and checked before a byte is read, so that a FIFO never waits
    /// for a writer, a device (`/dev/zero`) is never read without end and a terminal
    /// never becomes the controlling one: anything but a regular file is `io`, a file
    /// larger than `maxBytes` `tooLarge`.
    package static func readIfPresent(_ path: String, maxBytes: Int = maxBytes) throws(NetworkError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if fd < 0, errno == ENOENT { return nil }
        guard fd >= 0 else { throw .io("cannot open '\(path.escapedForMessage)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let size = try regularFileSize(fd, path: path)
        guard size <= maxBytes else {
            throw .tooLarge("'\(path.escapedForMessage)' holds \(size) bytes, more than \(maxBytes)")
        }
        var bytes = [UInt8](repeating: 0, count: size)
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

    /// Fails with `io` unless `path` names a regular file this process can open for
    /// reading (checked the way `read` opens it, without blocking); reads nothing.
    package static func checkReadable(_ path: String) throws(NetworkError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .io("cannot read '\(path.escapedForMessage)': \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        _ = try regularFileSize(fd, path: path)
    }

    /// The size of the open file `fd`; `io` naming `path` and what it is unless it is a
    /// regular file.
    private static func regularFileSize(_ fd: Int32, path: String) throws(NetworkError) -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .io("cannot read '\(path.escapedForMessage)': \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .io("'\(path.escapedForMessage)' is not a regular file (it is \(describe(info.st_mode)))")
        }
        return Int(info.st_size)
    }

    /// What a file of mode `mode` is, for messages.
    package static func describe(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "not a file"
        }
    }

    /// Writes `bytes` to `path` whole or not at all: into a new file in the same
    /// folder (created with `mode` less the umask: 0666 as for any new file, 0600 for
    /// one that holds secrets), synced, then renamed over `path`, so that a reader never
    /// sees half a file. A symbolic link at `path` is replaced, never followed (its
    /// target stays as it was); a folder, FIFO, device or socket there is refused with
    /// `io` and left alone, so that a write never blocks on a FIFO without a reader.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o666) throws(NetworkError) {
        try checkReplaceable(path)
        let (folder, name) = split(path)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var fd: Int32 = -1
        var temporary = ""
        var failure: Int32 = 0
        for _ in 0..<100 {
            let suffix = String(decoding: (0..<8).map { _ in letters.randomElement()! }, as: UTF8.self)
            temporary = "\(folder)/" + sibling(of: name, ".tmp-\(suffix)")
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, mode)
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
    /// writable, and `path` is nothing yet, a regular file or a symbolic link (which a
    /// write replaces), not a folder, FIFO, device or socket.
    package static func checkWritable(_ path: String) throws(NetworkError) {
        let folder = split(path).folder
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .io("cannot write '\(path.escapedForMessage)': folder '\(folder.escapedForMessage)' does not exist")
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw .io("cannot write '\(path.escapedForMessage)': \(String(cString: strerror(errno)))")
        }
        try checkReplaceable(path)
    }

    /// Fails unless what is at `path` (not following a link) is nothing, a regular file
    /// or a symbolic link: what a write may replace.
    private static func checkReplaceable(_ path: String) throws(NetworkError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || type == S_IFLNK else {
            throw .io("cannot write '\(path.escapedForMessage)': it is \(describe(info.st_mode)), not a regular file")
        }
    }

    /// `path` from the root: a relative one joined to the current folder now, so that a
    /// file named when a client is made stays that file whatever folder the program
    /// moves to before it is written (and its lock stays that file's).
    package static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let folder = String(cString: cwd)
        return (folder.hasSuffix("/") ? folder : folder + "/") + path
    }

    /// The name of a file made beside `name` (".NAME.lock", ".NAME.tmp-XXXXXXXX"): `name`
    /// cut to 200 bytes when the whole would pass the 255 a file name may have.
    package static func sibling(of name: String, _ suffix: String) -> String {
        guard 1 + name.utf8.count + suffix.utf8.count > 255 else { return "." + name + suffix }
        var stem = Substring(name)
        while stem.utf8.count > 200 { stem = stem.dropLast() }
        return "." + stem + suffix
    }

    /// The folder ("." for a bare name, "/" at the root) and the name of `path`.
    package static func split(_ path: String) -> (folder: String, name: String) {
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
