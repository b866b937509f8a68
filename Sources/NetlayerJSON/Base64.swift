import FoundationEssentials

/// Base64 for the documents (multipart `base64` parts, streamed `chunk`s).
package enum Base64 {
    package static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map { Array($0) }
    }

    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }
}
