import NetlayerCore
import NetlayerJSON

extension CurlTransfer {
    /// How long a streamed response has been silent, against the longest silence its
    /// `timeout` allows: a stream lives as long as bytes keep coming (its `deadline`
    /// aside), while a server that stops sending is noticed after `timeout`.
    package struct SilenceWatch {
        /// The longest silence allowed, in nanoseconds.
        let limit: UInt64
        private let seconds: Double
        /// When the last bytes arrived, or the transfer started (monotonic nanoseconds).
        private var lastHeard: UInt64

        /// A watch for a streamed request with a timeout, starting at `now`; nil otherwise.
        init?(for request: HTTPRequest, now: UInt64) {
            guard request.transfer.stream != nil, let timeout = request.options.timeout else { return nil }
            seconds = timeout
            limit = UInt64(min(timeout, 1e9) * 1e9)
            lastHeard = now
        }

        /// The consumer paused reading: meanwhile the silence is not the server's.
        private var paused = false

        /// Bytes (of the headers or the body) arrived at `now`.
        mutating func heard(at now: UInt64) { lastHeard = now }

        /// Reading was paused or resumed at `now`: the silence counts from a resume.
        mutating func setPaused(_ paused: Bool, at now: UInt64) {
            self.paused = paused
            lastHeard = now
        }

        /// When the silence will have lasted too long, unless bytes arrive first.
        var expiresAt: UInt64 { lastHeard &+ limit }

        /// When to look again after a look at `now` found no failure: while paused, a
        /// whole `limit` later.
        func nextCheck(after now: UInt64) -> UInt64 { paused ? now &+ limit : expiresAt }

        /// The error that ends the transfer when the silence has lasted too long at `now`
        /// (never while paused).
        func failure(at now: UInt64) -> NetworkError? {
            guard !paused, now >= expiresAt else { return nil }
            let shown = Double(Int((seconds * 1000).rounded())) / 1000  // a timeout clipped to a deadline has many digits
            return .timedOut("no bytes of the streamed response arrived for \(shown) s "
                             + "(timeout bounds the silence between the bytes of a stream)")
        }
    }
}
