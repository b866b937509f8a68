import NetlayerJSON

extension HTTPRequest {
    /// The status codes a request accepts as success: single codes and closed ranges.
    /// Anything else is `NetworkError.error`, so a 4xx/5xx never passes as success by default.
    public struct AcceptableStatus: Sendable, Hashable {
        public var ranges: [ClosedRange<Int>]

        public init(_ ranges: [ClosedRange<Int>]) { self.ranges = ranges }

        /// 200–299.
        public static let successful = AcceptableStatus([200...299])

        public func contains(_ code: Int) -> Bool { ranges.contains { $0.contains(code) } }
    }
}

/// `HTTPRequest.AcceptableStatus` by the name it is known by.
public typealias AcceptableStatus = HTTPRequest.AcceptableStatus
