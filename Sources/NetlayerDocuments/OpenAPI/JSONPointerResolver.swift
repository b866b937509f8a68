import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Resolves many local `$ref`s ("#/components/schemas/Pet") of one document in time
/// linear in their number: the members of a large object met on the way (a
/// `components.schemas` of 50 000 entries) are indexed by name the first time, where
/// looking each name up member by member would make loading quadratic.
package struct JSONPointerResolver {
    /// Objects with fewer members are searched in place: indexing them costs more.
    private static let indexedFrom = 16

    let document: JSON
    /// Member positions of the large objects seen, keyed by the object's pointer.
    private var indexes: [String: [String: Int]] = [:]

    init(document: JSON) {
        self.document = document
    }

    /// The value the local reference `ref` points at, as `SchemaRun.resolve` reads it.
    mutating func resolve(_ ref: String) -> JSON? {
        guard ref.first == "#", let fragment = SchemaRun.percentDecoded(ref.dropFirst()) else { return nil }
        if fragment.isEmpty { return document }
        guard fragment.first == "/" else { return nil }
        var node = document
        var pointer = ""
        for rawToken in fragment.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = String(rawToken).replacing("~1", with: "/").replacing("~0", with: "~")
            switch node {
            case .object(let object) where object.count >= Self.indexedFrom:
                let index = indexes[pointer] ?? Self.index(of: object)
                if indexes[pointer] == nil { indexes[pointer] = index }
                guard let position = index[token] else { return nil }
                node = object.members[position].value
            case .object(let object):
                guard let next = object[token] else { return nil }
                node = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index), token == "0" || !token.hasPrefix("0") else {
                    return nil
                }
                node = items[index]
            default:
                return nil
            }
            pointer += "/" + rawToken
        }
        return node
    }

    /// Each member's position by name; of a repeated name (which parsers refuse, but a
    /// `JSON` built in code may have) the first, as `JSONObject`'s subscript finds it.
    private static func index(of object: JSONObject) -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(object.count)
        for (position, member) in object.members.enumerated() where index[member.key] == nil {
            index[member.key] = position
        }
        return index
    }
}
