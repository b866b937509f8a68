import CCurl
import Glibc
import NetlayerCore
import NetlayerJSON

/// The one mapping from libcurl result codes to `NetworkError`.
package enum CurlErrorMapping {
    /// `limit` names the body limit that applies ("maxResponseBytes (104857600)");
    /// `osErrno` is `CURLINFO_OS_ERRNO` (libcurl keeps it from an earlier transfer of
    /// the handle when this one set none); `unixSocket` is the config's socket path.
    static func error(for code: CURLcode, detail: String, osErrno: Int32, unixSocket: String?,
                      exceededLimit: Bool, limit: String) -> NetworkError {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        let raw = Int(code.rawValue)
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_OUT_OF_MEMORY,
             CURLE_FAILED_INIT:
            // A local shortage, not the network's or the server's doing: `generic`, since
            // `io` means a named local file and no retry helps until descriptors are freed.
            if let exhausted = DescriptorExhaustion.message() {
                return .generic(exhausted, curlCode: raw)
            }
        default:
            break
        }
        switch code {
        case CURLE_COULDNT_CONNECT where unixSocket != nil:
            return .notConnected(unixSocketFailure(path: unixSocket!, osErrno: osErrno))
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return .notConnected(text)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(text)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return .tls(text)
        case CURLE_RECV_ERROR where isTLSAlert(detail), CURLE_SEND_ERROR where isTLSAlert(detail):
            // TLS 1.3 refuses a missing or unknown client certificate after the
            // handshake: the alert arrives as the first read fails.
            return .tls(text)
        case CURLE_WRITE_ERROR where exceededLimit, CURLE_FILESIZE_EXCEEDED:
            return .tooLarge("the response body is larger than \(limit)")
        case CURLE_URL_MALFORMAT:
            return .urlGeneration(text)
        case CURLE_OUT_OF_MEMORY:
            // libcurl 7.88 reports a header line over its 100 KB limit this way.
            return .tooLarge("the response headers are too large (or memory ran out)")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_PARTIAL_FILE, CURLE_WEIRD_SERVER_REPLY, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_HTTP2,
             CURLE_HTTP2_STREAM, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP3:
            return .protocolViolation(text, curlCode: raw)
        default:
            return .generic(text, curlCode: raw)
        }
    }

    /// Why the Unix domain socket at `path` took no connection. libcurl's own message
    /// names the URL's host and port, which a socket connection never uses.
    private static func unixSocketFailure(path: String, osErrno: Int32) -> String {
        let prefix = "could not connect to the Unix socket '\(path.escapedForMessage)' (config key 'unixSocket'): "
        var info = stat()
        guard stat(path, &info) == 0 else {
            let cause = errno
            switch cause {
            case ENOENT: return prefix + "no such file (is the server running?)"
            case EACCES: return prefix + "permission denied on a folder of its path"
            default: return prefix + String(cString: strerror(cause))
            }
        }
        if info.st_mode & S_IFMT != S_IFSOCK {
            let what = info.st_mode & S_IFMT == S_IFDIR ? "a folder" : "a file"
            return prefix + "it is \(what), not a socket"
        }
        switch osErrno {
        case EACCES, EPERM: return prefix + "permission denied (connecting needs write permission on the socket)"
        case 0, ECONNREFUSED: return prefix + "connection refused: no server is listening on it"
        default: return prefix + String(cString: strerror(osErrno))
        }
    }

    /// libcurl's message for a TLS alert from the peer ("OpenSSL SSL_read: ... alert ...").
    private static func isTLSAlert(_ detail: String) -> Bool {
        detail.hasPrefix("OpenSSL SSL_") && detail.contains(" alert ")
    }
}
