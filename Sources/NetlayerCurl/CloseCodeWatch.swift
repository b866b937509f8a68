/// The close codes a server may send that wslay refuses: 1012 (Service Restart), 1013
/// (Try Again Later) and 1014 (Bad Gateway), registered with IANA after RFC 6455 and
/// taken by browsers and the `websockets` package. wslay's check knows 1000 to 1011 and
/// 3000 to 4999 only, and would fail the connection with 1002.
///
/// This follows the frames of the bytes read from the server, before wslay sees them,
/// and turns such a code into 1000 in place (the codes differ only in their second
/// byte, so that byte is the one rewritten, whichever read it comes in); the code the
/// server sent is then the one reported. Payloads are skipped, not read. Loop thread.
struct CloseCodeWatch {
    /// The frame header being read (at most 14 bytes), and how long it is.
    private var header = (UInt64(0), UInt64(0))  // 16 bytes of room
    private var headerCount = 0
    private var headerLength = 2
    /// Payload bytes of the current frame not read yet; its offset.
    private var payloadLeft: UInt64 = 0
    private var payloadOffset: UInt64 = 0
    /// Whether the current frame is an unmasked close frame (whose code this may rewrite).
    private var isClose = false
    private var firstCodeByte: UInt8 = 0
    /// The code the server sent where 1000 was handed to wslay.
    private(set) var rewrittenCode: Int?

    /// Follows `count` bytes just read into `buffer`, rewriting a refused close code.
    mutating func follow(_ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) {
        var i = 0
        while i < count {
            if payloadLeft == 0 {
                readHeaderByte(buffer[i])
                i += 1
                continue
            }
            if isClose, payloadOffset < 2 {
                if payloadOffset == 0 {
                    firstCodeByte = buffer[i]
                } else {
                    let code = Int(firstCodeByte) << 8 | Int(buffer[i])
                    if (1012...1014).contains(code) {
                        buffer[i] = 0xE8  // 1000 is 0x03E8, 1012 to 1014 0x03F4 to 0x03F6
                        rewrittenCode = code
                    }
                }
                payloadOffset += 1
                payloadLeft -= 1
                i += 1
                continue
            }
            let skipped = Int(min(payloadLeft, UInt64(count - i)))
            payloadLeft -= UInt64(skipped)
            payloadOffset += UInt64(skipped)
            i += skipped
        }
    }

    private mutating func readHeaderByte(_ byte: UInt8) {
        withUnsafeMutableBytes(of: &header) { $0[headerCount] = byte }
        headerCount += 1
        if headerCount == 2 {
            let lengthByte = byte & 0x7F
            headerLength = 2 + (lengthByte == 126 ? 2 : lengthByte == 127 ? 8 : 0) + (byte & 0x80 != 0 ? 4 : 0)
        }
        guard headerCount >= 2, headerCount == headerLength else { return }
        let (first, second, length) = withUnsafeBytes(of: &header) { bytes -> (UInt8, UInt8, UInt64) in
            let lengthByte = bytes[1] & 0x7F
            var length = UInt64(lengthByte)
            if lengthByte >= 126 {
                length = 0
                for k in 0..<(lengthByte == 126 ? 2 : 8) { length = length << 8 | UInt64(bytes[2 + k]) }
            }
            return (bytes[0], bytes[1], length)
        }
        isClose = first & 0x0F == 0x8 && second & 0x80 == 0
        payloadLeft = length
        payloadOffset = 0
        headerCount = 0
        headerLength = 2
    }
}
