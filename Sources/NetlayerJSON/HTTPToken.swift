/// Whether `b` is an RFC 9110 `tchar`: what a header name (and a token) is made of.
/// Here, below the core, because the JSON writer writes header names the same way the
/// core checks them (`HTTPHeaders.isTokenByte` is this).
package func isHTTPTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
         UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
         UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
         UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}
