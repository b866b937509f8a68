import Glibc
import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

extension LogLevel {
    /// The level `NETLAYER_LOG` names (`debug`, `info`, `error` or `off`, in any case):
    /// the level of clients whose config sets no `log.level`, in every language. Any
    /// other value is ignored, so a stray setting never stops a client from being made.
    package static var environmentDefault: LogLevel {
        guard let raw = getenv("NETLAYER_LOG") else { return .off }
        return LogLevel(name: String(cString: raw).lowercased()) ?? .off
    }
}
