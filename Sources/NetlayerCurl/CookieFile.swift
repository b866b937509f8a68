import Glibc
import NetlayerCore
import NetlayerJSON

/// A client's Netscape cookie file (`CookieJar.file`): read when the client starts,
/// written by Netlayer (not by libcurl) when it stops, and locked in between.
///
/// - Reading opens the file without blocking and reads only a regular file, at most
///   `maxBytes`: a FIFO, a device or a folder fails the client's creation.
/// - Writing goes through `DocumentFile.write`: a new file of mode 0600 (the jar holds
///   session tokens) renamed over the path, so a symbolic link there is replaced, never
///   followed, and a failure leaves the old file whole. It cannot fail the caller (the
///   client is going away): it is an `error` log event on standard error.
/// - A saving client holds an advisory `flock` on `.NAME.lock` beside the file while it
///   lives: a second client saving to the same file, in this process or another, is
///   refused at creation instead of one overwriting the other's cookies when both
///   stop. The kernel drops the lock when its descriptor closes, so a crash leaves no
///   stale lock. A child of `fork()` does not keep it: the file is the parent's.
/// - Session cookies (expiry 0) are neither read nor written unless
///   `keepSessionCookies`, as a browser ends its session when it closes.
package final class CookieFile: ForkParticipant, @unchecked Sendable {
    /// The most a cookie file may hold; a larger one is refused rather than read.
    static let maxBytes = 64 << 20

    let path: String
    let save: Bool
    let keepSessionCookies: Bool
    /// The lock file's descriptor while the lock is held, else -1; its mutex is held
    /// across a `fork()`, so that a child inherits the descriptor exactly when its
    /// value says so.
    private let lockDescriptor: Locked<Int32>
    /// `Platform.ProcessFork.generation` of the process the file belongs to.
    private let generation: UInt64

    /// Checks that the file can be written later (when `save`) and takes its lock.
    /// Errors are `invalidRequest` naming the config key.
    init(_ jar: CookieJar, path: String) throws(NetworkError) {
        let path = DocumentFile.absolute(path)
        self.path = path
        save = jar.save
        keepSessionCookies = jar.keepSessionCookies
        generation = Platform.ProcessFork.generation
        var descriptor: Int32 = -1
        if save {
            do {
                try DocumentFile.checkWritable(path)
            } catch {
                throw Self.named(error)
            }
            descriptor = try Self.lock(path)
        }
        lockDescriptor = Locked(descriptor)
        if save { Platform.ProcessFork.register(self) }
    }

    deinit {
        if save { Platform.ProcessFork.unregister(self) }
        unlock()
    }

    /// The cookies of the file as lines for `CurlShare.seedCookies`: none when it does
    /// not exist (a dangling link included); anything else that cannot be read is
    /// `invalidRequest` naming the key.
    func read() throws(NetworkError) -> [String] {
        let bytes: [UInt8]
        do {
            guard let read = try DocumentFile.readIfPresent(path, maxBytes: Self.maxBytes) else { return [] }
            bytes = read
        } catch {
            throw Self.named(error)
        }
        var lines: [String] = []
        for slice in bytes.split(separator: 0x0A) {
            var line = String(decoding: slice, as: UTF8.self)
            if line.hasSuffix("\r") { line.removeLast() }
            if let cookie = Self.cookie(line), keepSessionCookies || !cookie.isSession { lines.append(line) }
        }
        return lines
    }

    /// Writes `jar` (lines of `CurlShare.limitedCookieLines()`) to the file, without the
    /// session cookies (unless kept) and the expired ones. Only the process that made
    /// the client writes: in a child of `fork()` this does nothing.
    func write(_ jar: [String]) {
        guard save, generation == Platform.ProcessFork.generation else { return }
        let now = Int64(time(nil))
        var text = "# Netscape HTTP Cookie File\n# Written by netlayer when its client was freed; edit at your own risk.\n\n"
        for line in jar {
            guard let cookie = Self.cookie(line) else { continue }
            if cookie.isSession ? !keepSessionCookies : cookie.expiry < now { continue }
            text += line
            text += "\n"
        }
        do {
            try DocumentFile.write(Array(text.utf8), to: path, mode: 0o600)
        } catch {
            let failure = DataTransferError.networkFailure(error)
            LogEvent.writeToStderr(LogEvent(level: .error, event: "error", fields: [
                "kind": .string(failure.kind.rawValue),
                "message": .string("config key 'cookies': the cookie jar was not saved: \(failure.message)"),
            ]))
        }
    }

    /// Gives the lock back (after the last write), so that another client may save to
    /// the file.
    func unlock() {
        lockDescriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    // MARK: fork

    package func lockForFork() { lockDescriptor.lockForFork() }

    /// In a child, also closes the inherited descriptor without unlocking it: the lock
    /// stays the parent's, and goes when the parent gives it back, not when the child
    /// ends (closing one of several descriptors of a `flock` keeps the lock).
    package func unlockAfterFork() {
        lockDescriptor.unlockAfterFork()
        if generation != Platform.ProcessFork.generation { unlock() }
    }

    // MARK: Lines

    /// What a cookie-file line says, for the session and expiry rules; nil for a
    /// comment, a blank line or a line that is not a cookie (libcurl never sees those:
    /// `CURLOPT_COOKIELIST` would take `ALL` or `FLUSH` as a command).
    private static func cookie(_ line: String) -> (isSession: Bool, expiry: Int64)? {
        var text = Substring(line)
        if text.hasPrefix("#HttpOnly_") { text = text.dropFirst(10) } else if text.hasPrefix("#") { return nil }
        let fields = text.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count >= 6, !fields[0].isEmpty, let expiry = Int64(fields[4]), expiry >= 0 else { return nil }
        return (expiry == 0, expiry)
    }

    // MARK: Lock

    /// The descriptor of `.NAME.lock` beside `path`, locked; `invalidRequest` naming the
    /// file when another client holds it or it cannot be made.
    private static func lock(_ path: String) throws(NetworkError) -> Int32 {
        let (folder, name) = DocumentFile.split(path)
        let lockPath = "\(folder)/" + DocumentFile.sibling(of: name, ".lock")
        // No link followed, no FIFO waited for: a lock file is a plain file of our own.
        let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .invalidRequest("cookies key 'file': cannot make the lock file '\(lockPath.escapedForMessage)': \(reason)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .invalidRequest("cookies key 'file': the lock file '\(lockPath.escapedForMessage)' is not a regular file")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(fd)
            if reason == EWOULDBLOCK {
                throw .invalidRequest("cookies key 'file': '\(path.escapedForMessage)' is in use by another client"
                    + " (it holds '\(lockPath.escapedForMessage)', in this process or another): two clients saving"
                    + " one cookie file would overwrite each other's cookies; give each its own file, or set 'save': false")
            }
            throw .invalidRequest(
                "cookies key 'file': cannot lock '\(lockPath.escapedForMessage)': \(String(cString: strerror(reason)))")
        }
        return fd
    }

    private static func named(_ error: NetworkError) -> NetworkError {
        .invalidRequest("cookies key 'file': " + DataTransferError.networkFailure(error).message)
    }
}
