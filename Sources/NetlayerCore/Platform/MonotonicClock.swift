import Glibc

extension Platform {
    /// Monotonic time for deadlines.
    package enum MonotonicClock {
        package static func now() -> UInt64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        }

        static func seconds(since start: UInt64) -> Double {
            Double(now() &- start) / 1e9
        }
    }
}
