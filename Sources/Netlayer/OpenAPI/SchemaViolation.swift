/// Where and how a JSON value breaks a schema: the JSON pointer of the value at fault
/// and what is wrong with it, phrased to follow the pointer ("/tags/0 must be a string,
/// not a number").
package struct SchemaViolation: Sendable, Equatable, Error {
    /// The JSON pointer of the offending value: "/category/name", "/tags/0", "" for the root.
    package var pointer: String
    /// What is wrong: "must be an integer, not a string", "is missing required property 'name'".
    package var message: String

    package init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }
}

extension SchemaViolation: CustomStringConvertible {
    /// The pointer and the message, or the message alone for the root.
    package var description: String {
        pointer.isEmpty ? message : "\(pointer) \(message)"
    }
}
