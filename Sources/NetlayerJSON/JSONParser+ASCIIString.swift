/// Short ASCII strings made as the standard library keeps them, for the parser's keys
/// and short values.
extension JSONParser {
    /// ASCII bytes as a String: most keys and short values are 15 bytes or fewer,
    /// which Swift keeps inline as a "small string", two words holding the bytes and,
    /// in the top byte, 0xE0 (immortal, small, ASCII) and the count. Those two words
    /// are put together here directly: `String(decoding:as:)` would scan the bytes
    /// again and go through its general path, several times the cost. (A test checks
    /// that both give the same bits for every length; `smallStringLayoutHolds` checks
    /// the layout once at run time, so a standard library that laid strings out
    /// otherwise would only make this slower, never wrong.)
    @inline(__always)
    static func asciiString(_ start: UnsafePointer<UInt8>, _ count: Int, base: UnsafePointer<UInt8>,
                             end: UnsafePointer<UInt8>) -> String {
        #if _pointerBitWidth(_64) && _endian(little)
        if count <= 15, smallStringLayoutHolds {
            var words: (UInt64, UInt64) = (0, 0)
            if end - start >= 16 {
                let raw = UnsafeRawPointer(start)
                words = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            } else if end - base >= 16 {
                // Near the end of the text: its last sixteen bytes, shifted down to the
                // string's first, reading nothing past the end.
                let raw = UnsafeRawPointer(end - 16)
                let low = raw.loadUnaligned(as: UInt64.self), high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let shift = UInt64(16 &- (end - start)) &* 8  // 8...120: the string's quote is in the text
                words = shift >= 64 ? (high &>> (shift &- 64), 0) : ((low &>> shift) | (high &<< (64 &- shift)), high &>> shift)
            } else {
                // A text shorter than sixteen bytes: byte by byte.
                for i in 0..<count {
                    let byte = UInt64(start[i])
                    if i < 8 { words.0 |= byte &<< UInt64(i &* 8) } else { words.1 |= byte &<< UInt64((i &- 8) &* 8) }
                }
            }
            // Only `count` bytes are the string's: the rest of the words are zero.
            if count < 8 {
                words.0 &= (1 &<< UInt64(count &* 8)) &- 1
                words.1 = 0
            } else {
                words.1 &= (1 &<< UInt64((count &- 8) &* 8)) &- 1
            }
            words.1 |= UInt64(0xE0 | count) &<< 56
            return unsafeBitCast(words, to: String.self)
        }
        #endif
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }

    #if _pointerBitWidth(_64) && _endian(little)
    /// Whether the standard library keeps a short ASCII string as `asciiString` puts
    /// it together: the bits of strings it made compared with the expected words.
    private static let smallStringLayoutHolds: Bool = {
        for sample in ["", "a", "content-type", "abcdefghijklmno"] {
            var expected: (UInt64, UInt64) = (0, UInt64(0xE0 | sample.utf8.count) &<< 56)
            for (i, byte) in sample.utf8.enumerated() {
                if i < 8 { expected.0 |= UInt64(byte) &<< UInt64(i * 8) } else { expected.1 |= UInt64(byte) &<< UInt64((i - 8) * 8) }
            }
            let made = String(decoding: Array(sample.utf8), as: UTF8.self)
            let bits = unsafeBitCast(made, to: (UInt64, UInt64).self)
            guard bits == expected, unsafeBitCast(expected, to: String.self) == sample else { return false }
        }
        return true
    }()
    #endif
}
