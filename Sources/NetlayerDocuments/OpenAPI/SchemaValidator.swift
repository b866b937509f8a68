import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// Checks JSON values against the schemas of an OpenAPI 3.0 or 3.1 document — the
/// JSON Schema subset OpenAPI uses — and reports the first violation with the JSON
/// pointer of the value at fault.
///
/// Both dialects are accepted everywhere, because published documents mix them: 3.0's
/// `nullable` and boolean `exclusiveMinimum` work in 3.1 documents, 3.1's type arrays,
/// `const`, `prefixItems` and boolean schemas in 3.0 ones. A `discriminator` beside
/// `oneOf`/`anyOf` picks the one branch a value is checked against
/// (`SchemaRun+Discriminator`). Annotations (`format`, `example`, `default`, `xml`, …)
/// are ignored: real documents carry
/// defaults and examples that break their own schemas. Only local `$ref`s (`#/…`) are
/// followed; any other is reported as a violation naming it.
package struct SchemaValidator: Sendable {
    /// Which way a value travels: `readOnly` properties need not be sent in a request,
    /// `writeOnly` ones need not come back in a response, even when `required`.
    package enum Direction: Sendable { case request, response }

    /// The whole document, which `$ref`s resolve against.
    let document: JSON
    /// Every local `$ref` of the document, resolved once: a large document's
    /// `components` hold thousands of members, and a call's check follows dozens of refs.
    let targets: [String: JSON]
    /// The document's `pattern`s and `patternProperties` keys, each compiled once, when
    /// a check first uses it.
    let patterns = SchemaPatterns()
    /// The fewest schema checks a validation may make before its bound grows with the
    /// value (`SchemaRun.minSteps`); lower only in tests.
    package var stepFloor = SchemaRun.minSteps

    /// `document` is the whole OpenAPI document; `$ref`s such as
    /// "#/components/schemas/Pet" resolve against it (a JSON pointer, with `~0`/`~1`
    /// escapes and percent-decoding).
    package init(document: JSON) {
        self.document = document
        var resolver = JSONPointerResolver(document: document)
        var targets: [String: JSON] = [:]
        var pending = [document]
        while let node = pending.popLast() {
            switch node {
            case .object(let object):
                for member in object {
                    switch (member.key, member.value) {
                    case ("$ref", .string(let ref)):
                        if targets[ref] == nil, let target = resolver.resolve(ref) { targets[ref] = target }
                    case (_, .object), (_, .array):
                        pending.append(member.value)
                    default:
                        break
                    }
                }
            case .array(let items):
                pending.append(contentsOf: items.filter { $0.objectValue != nil || $0.arrayValue != nil })
            default:
                break
            }
        }
        self.targets = targets
    }

    /// The first violation of `schema` by `value`, or nil when `value` conforms.
    /// `pointer` is the JSON pointer of `value` ("" for the root); violations below it
    /// extend it.
    package func firstViolation(
        of value: JSON, against schema: JSON, at pointer: String = "", direction: Direction = .request
    ) -> SchemaViolation? {
        var run = SchemaRun(document: document, targets: targets, patterns: patterns, direction: direction)
        run.stepFloor = stepFloor
        run.root = value
        let violation = run.check(value, against: schema, at: pointer)
        // Past its step bound a run unwinds through branches that may read a failure as
        // a success (`not`): the bound is the answer.
        return run.exhausted ?? run.uncheckable ?? violation
    }

    /// The schema a local `$ref` points at, or nil when it is not local or leads nowhere.
    package func resolve(_ ref: String) -> JSON? {
        targets[ref] ?? SchemaRun.resolve(ref, in: document)
    }
}
