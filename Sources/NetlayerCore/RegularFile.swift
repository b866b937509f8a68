import Glibc
import NetlayerJSON

/// A local file a setting names (a netrc file, a certificate), opened only if it is a
/// regular file of bounded size: a FIFO would block the open or the read, a device
/// such as `/dev/zero` would be read without end, and a folder is never what was
/// meant. Opened without blocking (`O_NONBLOCK`) and without taking a terminal.
public struct RegularFile: ~Copyable {
    /// Why a file cannot be used, worded to follow its path in a message.
    public enum Failure: Error, Sendable, Equatable {
        case missing(String)
        case notRegular(String, kind: String)
        case tooLarge(String, bytes: Int64, limit: Int)
        case unreadable(String, reason: String)

        /// "'PATH' does not exist", "'PATH' is a folder, not a regular file", ...
        public var reasonForKey: String {
            switch self {
            case .missing(let path): return "'\(path.escapedForMessage)' does not exist"
            case .notRegular(let path, let kind): return "'\(path.escapedForMessage)' is \(kind), not a regular file"
            case .tooLarge(let path, let bytes, let limit):
                return "'\(path.escapedForMessage)' holds \(bytes) bytes, more than the \(limit) allowed"
            case .unreadable(let path, let reason): return "'\(path.escapedForMessage)' cannot be read: \(reason)"
            }
        }
    }

    /// What tells one version of a file from another.
    public struct Stamp: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec

        public static func == (a: Stamp, b: Stamp) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }
    }

    public let path: String
    public let stamp: Stamp
    private let fd: Int32

    /// Opens `path`; a missing file, a folder, FIFO, device or socket, or a file of more
    /// than `maxBytes`, is a `Failure`.
    public init(path: String, maxBytes: Int) throws(Failure) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .missing(path) }
            throw .unreadable(path, reason: String(cString: strerror(code)))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .unreadable(path, reason: reason)
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            throw .notRegular(path, kind: Self.describe(type))
        }
        guard info.st_size <= maxBytes else {
            close(fd)
            throw .tooLarge(path, bytes: Int64(info.st_size), limit: maxBytes)
        }
        self.fd = fd
        stamp = Stamp(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                      modified: info.st_mtim)
    }

    deinit { close(fd) }

    /// The whole file (as much as it held when opened, never more).
    public func readAll() throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(stamp.size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw .unreadable(path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            done += n
        }
        return done == bytes.count ? bytes : Array(bytes.prefix(done))
    }

    /// "a folder", "a FIFO", ...: what a file type is, for a message.
    static func describe(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }
}
