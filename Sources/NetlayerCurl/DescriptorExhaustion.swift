import Glibc
import NetlayerCore
import NetlayerJSON

/// Whether a failure to open a socket came from the process (or the system) having
/// no file descriptor left, and what to tell the caller then.
///
/// libcurl reports a `socket()` that fails with EMFILE or ENFILE as a connect failure
/// with the usual "Failed to connect to HOST port N" text and no errno of its own
/// (cf-socket.c gives up before `connect`, and `CURLINFO_OS_ERRNO` keeps whatever an
/// earlier transfer of the handle left), and a multi handle or resolver thread that
/// cannot get its socket pair as out of memory or a resolve failure. Read as they
/// come, these point at the network or at the response, while the cause is local and
/// no retry helps until descriptors are closed. So after such a failure one probe
/// asks the system directly.
package enum DescriptorExhaustion {
    /// The message for a failure caused by descriptor exhaustion, or nil when the
    /// process can open a descriptor now.
    static func message() -> String? {
        guard let cause = probe() else { return nil }
        if cause == ENFILE {
            return "the system is out of file descriptors (ENFILE); close files or connections elsewhere, or raise the system's limit (fs.file-max)"
        }
        var limit = rlimit()
        let all = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? "all \(limit.rlim_cur)" : "all"
        return "the process is out of file descriptors (EMFILE: \(all) that RLIMIT_NOFILE allows are open); close files or clients it no longer needs, or raise the limit (ulimit -n)"
    }

    /// EMFILE or ENFILE when the process cannot open one more descriptor now, else nil.
    /// `SOCK_CLOEXEC`, for every socket the library opens.
    static let closeOnExec = Int32(SOCK_CLOEXEC.rawValue)

    private static func probe() -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | closeOnExec, 0)
        if fd >= 0 {
            close(fd)
            return nil
        }
        let cause = errno
        return cause == EMFILE || cause == ENFILE ? cause : nil
    }
}
