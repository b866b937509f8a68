import Glibc
import NetlayerJSON

/// When a failed attempt is tried again, and after how long: exponential back-off
/// with jitter, capped, honouring `Retry-After` (Alamofire's and urllib3's policy).
///
/// Only methods in `methods` are retried (idempotent ones by default: a POST is
/// never repeated unless the caller lists it), on the statuses in `onStatus` and on
/// connection failures.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; 1 means no retry.
    public var maxAttempts = 1
    /// Seconds before the first retry; doubles each time.
    public var backoff = 0.2
    /// Upper bound of any delay, `Retry-After` included.
    public var maxBackoff = 10.0
    public var onStatus: Set<Int> = Self.defaultStatuses
    public var methods: Set<HTTPMethod> = Self.defaultMethods

    // Built once: every request's options hold a policy, and building two sets
    // cost more than the rest of an endpoint document's parsing.
    private static let defaultStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    private static let defaultMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options]

    public init() {}

    /// Whether the policy retries `error` for `method` (attempt limits aside).
    public func shouldRetry(_ error: NetworkError, method: HTTPMethod) -> Bool {
        guard methods.contains(method) else { return false }
        switch error {
        case .error(let status, _): return onStatus.contains(status)
        case .notConnected, .timedOut: return true
        case .protocolViolation(_, let code):
            // The server dropped the connection before answering (a pooled
            // connection it had closed, a restart): nothing was processed.
            return code == 52 || code == 56  // libcurl's CURLE_GOT_NOTHING, CURLE_RECV_ERROR
        default: return false
        }
    }

    /// The delay before attempt `attempt + 1`: `Retry-After` when the server sent
    /// one, else `backoff · 2^(attempt-1)` with equal jitter; never above `maxBackoff`.
    public func delay(after attempt: Int, error: NetworkError) -> Double {
        if let response = error.response, let retryAfter = Self.retryAfter(response) {
            return min(retryAfter, maxBackoff)
        }
        let exponential = min(maxBackoff, backoff * pow2(attempt - 1))
        return exponential / 2 + Double.random(in: 0...(exponential / 2))
    }

    /// `Retry-After` in seconds, from delay-seconds (digits only, RFC 9110 section
    /// 10.2.3; past 2^31 it is 2^31) or an HTTP date; nil for another form (`1.5`,
    /// `-1`, `+3`, `0x10`, `4e0`), which is ignored as urllib3 ignores it.
    public static func retryAfter(_ response: HTTPResponse) -> Double? {
        guard let value = response.headers["retry-after"]?.trimmingSpaces, !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return min(Double(value) ?? .infinity, 2_147_483_648)
        }
        guard let date = HTTPDate.parse(value) else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return max(0, Double(date) - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9))
    }

    private func pow2(_ n: Int) -> Double {
        n <= 0 ? 1 : Double(1 << min(n, 30))
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
