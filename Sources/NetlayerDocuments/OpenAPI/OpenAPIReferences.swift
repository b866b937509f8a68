import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Follows the local `$ref`s of an OpenAPI document (`#/components/parameters/limit`)
/// for the loader, with `SchemaRun.resolve`, the validator's reading of a pointer.
package struct OpenAPIReferences: Sendable {
    package let document: JSON
    /// Names the document in messages.
    package let source: String
    /// The document's `$ref`s already resolved (`SchemaValidator.targets`): looked up,
    /// not walked, so that loading stays linear in the number of references.
    package let targets: [String: JSON]

    package init(document: JSON, source: String, targets: [String: JSON] = [:]) {
        self.document = document
        self.source = source
        self.targets = targets
    }

    /// `value`, or what its `$ref` chain points to. A reference outside the document,
    /// a broken pointer or a loop is `invalidRequest` naming `context` and the reference.
    package func resolve(_ value: JSON, context: String) throws(NetworkError) -> JSON {
        var current = value
        for _ in 0..<32 {
            guard case .object(let object) = current, case .string(let ref)? = object["$ref"] else { return current }
            guard let target = targets[ref] ?? Self.target(of: ref, in: document) else {
                if !ref.hasPrefix("#") {
                    throw .invalidRequest("\(source): \(context) refers to '\(ref.escapedForMessage)' in another file; netlayer follows references within the document only")
                }
                throw .invalidRequest("\(source): \(context) refers to '\(ref.escapedForMessage)', which the document does not have")
            }
            current = target
        }
        throw .invalidRequest("\(source): \(context) has a $ref chain that does not end")
    }

    /// The value the local reference `ref` ("#/components/schemas/Pet") points to, or
    /// nil: the schema validator's reading of a JSON pointer (RFC 6901, percent-decoded).
    package static func target(of ref: String, in document: JSON) -> JSON? {
        SchemaRun.resolve(ref, in: document)
    }

    /// The name a reference ends with ("Pet" for "#/components/schemas/Pet").
    package static func lastName(of ref: String) -> String? {
        guard let last = ref.split(separator: "/").last, ref.hasPrefix("#/") else { return nil }
        return String(last)
    }
}
