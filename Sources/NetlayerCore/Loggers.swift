import Glibc
import NetlayerJSON

/// Logs requests, responses and network errors (the seeds' `NetworkErrorLogger`).
/// Implementations must not print secrets; the default prints no header values.
public protocol NetworkErrorLogger: Sendable {
    func log(request: HTTPRequest, context: RequestContext)
    func log(response: HTTPResponse, request: HTTPRequest, context: RequestContext)
    func log(error: NetworkError, request: HTTPRequest, context: RequestContext)
    /// Whether it logs anything at all: a client asks once, and with false makes no
    /// event for it (the default is true).
    var isEnabled: Bool { get }
    /// Whether it shows the lines the transport sent (`HTTPResponse.sentHeaderLines`):
    /// a client asks once, and with true has them kept (the default is false).
    var wantsSentHeaders: Bool { get }
}

extension NetworkErrorLogger {
    public var isEnabled: Bool { true }
    public var wantsSentHeaders: Bool { false }
}

/// Logs decoding and resolved errors (the seeds' `DataTransferErrorLogger`).
public protocol DataTransferErrorLogger: Sendable {
    func log(error: DataTransferError)
}

/// Writes one line per event to stderr when `isEnabled`; silent by default.
/// Prints method, URL without user-info, status and sizes, never header values.
public struct DefaultNetworkErrorLogger: NetworkErrorLogger, DataTransferErrorLogger {
    public var isEnabled: Bool

    public init(isEnabled: Bool = false) { self.isEnabled = isEnabled }

    public func log(request: HTTPRequest, context: RequestContext) {
        guard isEnabled else { return }
        write("request \(request.method.rawValue) \(Self.redactingUserInfo(request.url))")
    }

    public func log(response: HTTPResponse, request: HTTPRequest, context: RequestContext) {
        guard isEnabled else { return }
        write("response \(response.statusCode) \(response.body.count) bytes in \(response.totalMs) ms")
    }

    public func log(error: NetworkError, request: HTTPRequest, context: RequestContext) {
        guard isEnabled else { return }
        write("error \(DataTransferError.networkFailure(error))")
    }

    public func log(error: DataTransferError) {
        guard isEnabled else { return }
        write("error \(error)")
    }

    private func write(_ line: String) {
        guard isEnabled else { return }
        let text = "netlayer: \(line)\n"
        _ = text.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    /// `scheme://user:pass@host/...` becomes `scheme://<redacted>@host/...`.
    public static func redactingUserInfo(_ url: String) -> String {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return url }
        let schemeEnd = url.index(colon, offsetBy: 3)
        let rest = url[schemeEnd...]
        let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd]) + "<redacted>" + String(rest[at...])
    }
}
