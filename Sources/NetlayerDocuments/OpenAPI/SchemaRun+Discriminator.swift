import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// OpenAPI's `discriminator` beside `oneOf` or `anyOf`: a property of the value names
/// the schema it must match, and only that branch is checked. Well-formed documents rely
/// on it: their branches are often open objects that several of them would accept,
/// which plain `oneOf` refuses ("matches 2 of the N schemas"), and a value that fails is
/// best explained by the branch it names, not by whichever came closest.
///
/// Published documents also carry discriminators that name nothing (OpenAI's
/// `ChatCompletionRequestMessage` discriminates on `role`, whose values are not schema
/// names and which has no `mapping`), and rely on each branch's `enum` instead. So a tag
/// that names no schema, or a value without one, is checked as plain `oneOf`/`anyOf`:
/// the discriminator narrows what it can, and never refuses what the branches accept.
extension SchemaRun {
    /// The schema that the `discriminator` of `keywords` picks for `value` among
    /// `schemas`: `mapping[tag]` (a `$ref` or a schema name), else the branch that is a
    /// `$ref` to the schema of `components/schemas` named `tag` (the implicit mapping).
    /// Nil when there is no discriminator, the value is not an object with a string tag,
    /// or the tag names no schema of the document.
    func discriminatedBranch(of value: JSON, _ keywords: JSONObject, among schemas: [JSON]) -> JSON? {
        guard let discriminator = keywords["discriminator"]?.objectValue,
              let property = discriminator["propertyName"]?.stringValue,
              let tag = value.objectValue?[property]?.stringValue
        else { return nil }
        if let mapped = discriminator["mapping"]?.objectValue?[tag]?.stringValue {
            let ref = Self.reference(mapped)
            if let branch = schemas.first(where: { $0.objectValue?["$ref"]?.stringValue == ref }) { return branch }
            guard ref.hasPrefix("#"), target(of: ref) != nil else { return nil }
            return ["$ref": .string(ref)]
        }
        let ref = Self.reference(tag)
        return schemas.first { $0.objectValue?["$ref"]?.stringValue == ref }
    }

    /// A mapping value or a tag as a `$ref`: a bare name is a schema of `components/schemas`.
    private static func reference(_ name: String) -> String {
        name.hasPrefix("#") || name.contains("/") ? name : "#/components/schemas/" + name
    }
}
