import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// Where `downloadTo` puts a body, as `curl -o` does. A character device or a FIFO is
/// written through, never replaced. Anything else gets a new file next to it (created
/// with mode 0666 less the umask) that replaces it only once the download succeeded,
/// taking over the mode and owner of the file it replaces; a symbolic link keeps
/// naming its file, which is the one replaced.
///
/// Descriptors are non-blocking: a FIFO that no one reads yet, or whose pipe is full,
/// pauses the transfer (`TransferWait`) instead of blocking the thread. Used on one
/// thread at a time.
package final class DownloadFile {
    enum Write {
        case done
        case wait(TransferWait)
        case failed(NetworkError)
    }

    /// The path as given.
    let path: String
    /// A device or FIFO, written through instead of replaced.
    let writesThrough: Bool
    /// Bytes written so far.
    private(set) var written: Int64 = 0
    private let isFIFO: Bool
    private var fd: Int32 = -1
    /// The file a successful download replaces (a symbolic link resolved).
    private let finalPath: String
    private var temporaryPath: String?
    /// Bytes at the start of the next delivery that were written before the transfer
    /// paused: libcurl delivers the data it was paused on again, from its start.
    private var writtenBeforePause = 0

    init(path: String) throws(NetworkError) {
        self.path = path
        var info = stat()
        let type = stat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
        writesThrough = type == S_IFCHR || type == S_IFIFO
        isFIFO = type == S_IFIFO
        switch type {
        case S_IFCHR, S_IFIFO:
            finalPath = path
            _ = try openForWritingThrough()
        case S_IFDIR:
            throw Self.failure(path, "cannot write it", EISDIR)
        case 0, S_IFREG:
            // From the root: the folder the program is in may change before it completes.
            finalPath = type == 0 ? DocumentFile.absolute(path) : Self.resolved(path)
            // A file this process may not write is not replaced either (`curl -o` fails
            // on it too), though its folder would let a rename do it.
            if type == S_IFREG, access(finalPath, W_OK) != 0 { throw Self.failure(path, "cannot write it", errno) }
            try createTemporaryFile()
        default:
            throw .io("downloadTo '\(path.escapedForMessage)': cannot write it: not a regular file, character device or FIFO")
        }
    }

    deinit { discard() }

    /// How many of `count` bytes just delivered were not written before.
    func newBytes(of count: Int) -> Int { count - min(writtenBeforePause, count) }

    /// Writes what libcurl delivered, or as much as the target takes now.
    func write(_ data: UnsafeRawBufferPointer) -> Write {
        if fd < 0 {
            do {
                guard try openForWritingThrough() else { return .wait(.delay) }
            } catch {
                return .failed(error)
            }
        }
        var offset = min(writtenBeforePause, data.count)
        writtenBeforePause = 0
        while offset < data.count {
            // Only a FIFO raises SIGPIPE (its reader left); a file spares the signal mask calls.
            let n = isFIFO ? nl_write_nosigpipe(fd, data.baseAddress! + offset, data.count - offset)
                : Glibc.write(fd, data.baseAddress! + offset, data.count - offset)
            if n > 0 {
                offset += n
                written += Int64(n)
                continue
            }
            let error = n < 0 ? errno : EIO
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK {
                writtenBeforePause = offset
                return .wait(.writable(fd))
            }
            return .failed(Self.failure(path, "write failed", error))
        }
        return .done
    }

    /// Ends a successful download: closes a device or FIFO, or moves the new file into
    /// place with the mode and owner of the one it replaces.
    func complete() throws(NetworkError) {
        if writesThrough {
            // An empty body still ends a FIFO's stream for a reader that is there.
            if fd < 0, isFIFO { _ = try? openForWritingThrough() }
            discard()
            return
        }
        guard let temporary = temporaryPath else { return }
        var error: Int32 = fsync(fd) == 0 ? 0 : errno
        var existing = stat()
        if error == 0, stat(finalPath, &existing) == 0, existing.st_mode & S_IFMT == S_IFREG {
            // An owner the process may not give (not root) stays its own. The permission
            // bits stay; set-user-ID, set-group-ID and sticky do not: new content is not
            // what they were granted to (a write by anyone but root clears them too).
            // Failing as a whole, the change is tried for the group alone: a member of the
            // file's group may give it that group (a shared folder's file stays shared).
            if fchown(fd, existing.st_uid, existing.st_gid) != 0 { _ = fchown(fd, uid_t.max, existing.st_gid) }
            if fchmod(fd, existing.st_mode & 0o777) != 0 { error = errno }
        }
        close(fd)
        fd = -1
        if error == 0, rename(temporary, finalPath) != 0 { error = errno }
        if error != 0 {
            unlink(temporary)
            temporaryPath = nil
            throw Self.failure(path, "could not move the download into place", error)
        }
        temporaryPath = nil
    }

    /// Drops a partial download (a device or FIFO keeps what it was given). Safe to
    /// call more than once.
    func discard() {
        if fd >= 0 { close(fd) }
        fd = -1
        if let temporaryPath { unlink(temporaryPath) }
        temporaryPath = nil
    }

    /// Opens the device or FIFO; false for a FIFO that no one has open for reading yet.
    private func openForWritingThrough() throws(NetworkError) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if descriptor >= 0 {
            fd = descriptor
            return true
        }
        let error = errno
        if error == ENXIO, isFIFO { return false }
        throw Self.failure(path, "cannot open it", error)
    }

    /// A new file next to the final one ("dir/.name.part-XXXXXX"), so the rename stays
    /// on one file system and is atomic. open() with 0666 lets the umask (and a default
    /// ACL) decide the mode, as for any new file; over an existing file, no wider than
    /// its mode either, so what arrives is never readable by more than the file it
    /// replaces, also while it arrives.
    private func createTemporaryFile() throws(NetworkError) {
        var existing = stat()
        let replaces = stat(finalPath, &existing) == 0 && existing.st_mode & S_IFMT == S_IFREG
        let mode: mode_t = replaces ? existing.st_mode & 0o666 : 0o666
        let slash = finalPath.lastIndex(of: "/")
        let directory = slash.map { String(finalPath[..<$0]) } ?? "."
        let name = slash.map { String(finalPath[finalPath.index(after: $0)...]) } ?? finalPath
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var error: Int32 = EEXIST
        for _ in 0..<100 where error == EEXIST {
            let suffix = String((0..<8).map { _ in letters.randomElement()! })
            let candidate = "\(directory.isEmpty ? "" : directory)/" + DocumentFile.sibling(of: name, ".part-\(suffix)")
            let descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if descriptor >= 0 {
                fd = descriptor
                temporaryPath = candidate
                return
            }
            error = errno
        }
        throw .io("downloadTo '\(path.escapedForMessage)': cannot create a file in '\((directory.isEmpty ? "/" : directory).escapedForMessage)': \(String(cString: strerror(error)))")
    }

    /// The file a symbolic link names, or `path` itself.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    private static func failure(_ path: String, _ what: String, _ error: Int32) -> NetworkError {
        .io("downloadTo '\(path.escapedForMessage)': \(what): \(String(cString: strerror(error)))")
    }
}
