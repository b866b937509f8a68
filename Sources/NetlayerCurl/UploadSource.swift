import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// The file of `uploadFrom`, opened without blocking the thread (opening a FIFO that
/// has no writer blocks, unless non-blocking) and checked with `fstat` before anything
/// reads it. A regular file with a size goes out with that Content-Length; anything
/// else (a FIFO, a character device, a /proc file whose size reads as 0) is streamed
/// as it reads, chunked, like `curl -T`, and pauses the transfer while it has nothing
/// to give. Used on one thread at a time.
package final class UploadSource {
    enum Read {
        case bytes(Int)
        case end
        case wait(TransferWait)
        case failed(NetworkError)
    }

    let path: String
    /// The size sent as Content-Length; nil when the file is streamed as it reads.
    let size: Int64?
    private var fd: Int32
    private let isFIFO: Bool

    init(path: String) throws(NetworkError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw Self.failure(path, errno) }
        var info = stat()
        var size: Int64?
        var problem: Int32 = fstat(fd, &info) == 0 ? 0 : errno
        let type = info.st_mode & S_IFMT
        if problem == 0 {
            switch type {
            case S_IFREG where info.st_size > 0:
                size = Int64(info.st_size)
            case S_IFREG:
                // Empty, or a file whose size reads as 0 although it has content (/proc):
                // one byte read in place tells which, and whether it can be read at all.
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
            throw Self.failure(path, problem)
        }
        self.fd = fd
        self.size = size
        isFIFO = type == S_IFIFO
    }

    deinit { close() }

    /// Reads up to `count` bytes without blocking.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Read {
        var lookedAgain = false
        while true {
            let n = Glibc.read(fd, buffer, count)
            if n > 0 { return .bytes(n) }
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
            return .failed(.io("uploadFrom '\(path)': read failed: \(String(cString: strerror(error)))"))
        }
    }

    /// Closes the file. Safe to call more than once.
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private static func failure(_ path: String, _ error: Int32) -> NetworkError {
        .io("uploadFrom '\(path)': cannot read it: \(String(cString: strerror(error)))")
    }
}
