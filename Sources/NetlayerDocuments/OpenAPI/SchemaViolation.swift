import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Where and how a JSON value breaks a schema: the JSON pointer of the value at fault
/// and what is wrong with it, phrased to follow the pointer ("/tags/0 must be a string,
/// not a number").
///
/// Messages quote what the document and the value hold (enum members, patterns,
/// property names, pointers) clipped to `quotedLimit` characters each, and a message
/// that nests the reasons of `anyOf`/`oneOf` branches clips each nested reason to
/// `nestedLimit`: whatever a document or a response holds, a violation's text stays
/// within a few kilobytes.
package struct SchemaViolation: Sendable, Equatable, Error {
    /// The most characters of one quoted value, pattern, name or pointer in a message.
    package static let quotedLimit = 120
    /// The most characters of a branch's reason nested in an `anyOf`/`oneOf` message.
    package static let nestedLimit = 600

    /// The JSON pointer of the offending value: "/category/name", "/tags/0", "" for the root.
    package var pointer: String
    /// What is wrong: "must be an integer, not a string", "is missing required property 'name'".
    package var message: String

    package init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    /// `pointer` as a message shows it: escaped and clipped to `quotedLimit` characters.
    package var shownPointer: String {
        Self.quoted(pointer)
    }

    /// `text` escaped for a message and, past `limit` characters, cut in the middle
    /// ("/a/b/…(4096 characters)…/y/z"): the start and the end say most.
    package static func quoted(_ text: String, limit: Int = quotedLimit) -> String {
        let scalars = text.unicodeScalars
        guard text.utf8.count > limit, scalars.count > limit else { return text.escapedForMessage }
        let half = limit / 2
        let head = String(String.UnicodeScalarView(scalars.prefix(half))).escapedForMessage
        let tail = String(String.UnicodeScalarView(scalars.suffix(half))).escapedForMessage
        return "\(head)…(\(scalars.count) characters)…\(tail)"
    }
}

extension SchemaViolation: CustomStringConvertible {
    /// The pointer and the message, or the message alone for the root.
    package var description: String {
        pointer.isEmpty ? message : "\(shownPointer) \(message)"
    }
}
