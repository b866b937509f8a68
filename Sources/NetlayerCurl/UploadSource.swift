import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// The file of `uploadFrom`, opened without blocking the thread (opening a FIFO that
/// has no writer blocks, unless non-blocking) and checked with `fstat` before anything
/// reads it. A regular file with a size goes out with that Content-Length; anything
/// else (a FIFO, a character device, a /proc file whose size reads as 0) is streamed
/// as it reads, chunked, like `curl -T`, and pauses the transfer while it has nothing
/// to give. A regular file gives exactly its size: the bytes a growing file gains stay
/// out of the body (more than Content-Length would be read as the next request), and
/// one that shrinks fails as `io`. Used for `uploadFrom` and for multipart file parts,
/// on one thread at a time.
package final class UploadSource {
    enum Read {
        case bytes(Int)
        case end
        case wait(TransferWait)
        case failed(NetworkError)
    }

    let path: String
    /// What the file is to the request, for messages: "uploadFrom", "multipart part 'x'".
    let role: String
    /// The size sent as Content-Length; nil when the file is streamed as it reads.
    let size: Int64?
    private var fd: Int32
    private let isFIFO: Bool
    /// Bytes given so far.
    private var given: Int64 = 0
    /// The transfer a multipart part's reads pause or fail (`uploadFrom`'s reads go
    /// through the transfer itself).
    unowned(unsafe) var transfer: CurlTransfer?

    init(path: String, role: String = "uploadFrom") throws(NetworkError) {
        self.path = path
        self.role = role
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw Self.failure(role, path, errno) }
        var info = stat()
        var size: Int64?
        var problem: Int32 = fstat(fd, &info) == 0 ? 0 : errno
        let type = info.st_mode & S_IFMT
        if problem == 0 {
            switch type {
            case S_IFREG where info.st_size > 0 && !Self.sizeIsMadeUp(fd):
                size = Int64(info.st_size)
            case S_IFREG:
                // Empty, or a file whose size reads as 0 although it has content (/proc),
                // or as a page whatever it holds (/sys): one byte read in place tells
                // whether it can be read at all, and whether a /proc file is empty.
                var byte: UInt8 = 0
                let n = pread(fd, &byte, 1, 0)
                if n < 0 { problem = errno } else if n == 0 { size = 0 }
            case S_IFIFO, S_IFCHR, S_IFBLK:
                break
            case S_IFDIR:
                problem = EISDIR
            default:
                problem = ENXIO  // a socket: nothing to read from a file system name
            }
        }
        guard problem == 0 else {
            Glibc.close(fd)
            throw Self.failure(role, path, problem)
        }
        self.fd = fd
        self.size = size
        isFIFO = type == S_IFIFO
    }

    /// Whether the file is on a file system whose sizes say nothing of the content:
    /// sysfs gives every attribute the size of a page (`/sys/.../online` holds "0-1\n"
    /// in 4096 bytes), procfs 0 or a guess. Such a file is streamed as it reads.
    private static func sizeIsMadeUp(_ fd: Int32) -> Bool {
        let type = nl_fs_type(fd)
        return type == 0x6265_6572 || type == 0x9FA0  // SYSFS_MAGIC, PROC_SUPER_MAGIC
    }

    deinit { close() }

    /// Reads up to `count` bytes without blocking.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Read {
        var lookedAgain = false
        var count = count
        if let size {
            if given >= size { return .end }
            count = Int(min(Int64(count), size - given))
        }
        while true {
            let n = Glibc.read(fd, buffer, count)
            if n > 0 {
                given += Int64(n)
                return .bytes(n)
            }
            if n == 0, let size {
                return .failed(.io("\(role) '\(path.escapedForMessage)': the file shrank while it was sent: "
                                   + "\(given) of its \(size) bytes"))
            }
            if n == 0 {
                // A FIFO reads as empty until its first writer comes; only once a writer
                // came and went does poll report the hang-up that ends it.
                guard isFIFO else { return .end }
                if nl_fd_ready(fd, Int32(POLLIN)) == 0 { return .wait(.readable(fd)) }
                if lookedAgain { return .end }
                lookedAgain = true  // bytes may have come since the read: read once more
                continue
            }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { return .wait(.readable(fd)) }
            return .failed(.io("\(role) '\(path.escapedForMessage)': read failed: \(String(cString: strerror(error)))"))
        }
    }

    /// Back to `offset` from the start, for libcurl to send the body again (an
    /// authentication answer); false for a file that cannot go back (a FIFO).
    func seek(to offset: Int64) -> Bool {
        guard !isFIFO, fd >= 0, lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else { return false }
        given = offset
        return true
    }

    /// Closes the file. Safe to call more than once.
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private static func failure(_ role: String, _ path: String, _ error: Int32) -> NetworkError {
        .io("\(role) '\(path.escapedForMessage)': cannot read it: \(String(cString: strerror(error)))")
    }
}
