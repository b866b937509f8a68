import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// One validation: walks a value and a schema together, following `$ref`s, and stops at
/// the first violation. It keeps the `$ref`s being evaluated so that a loop (A → A, or
/// A → B → A without descending into the value) is reported instead of recursing forever.
///
/// The result of each `$ref` at each place in the value is remembered for the run, so
/// that `anyOf`/`oneOf`/`allOf` branches leading to the same schemas check each place
/// against each once: a chain of N schemas each `anyOf` two `$ref`s to the next costs
/// N checks, not 2^N. What no memo catches (a schema repeated inline, as YAML aliases
/// make it) is bounded by `stepsPerPart` checks for each part of the value.
package struct SchemaRun {
    /// Deeper nesting than this (a value hundreds of levels deep under a recursive
    /// schema) is reported rather than risking the stack of a small thread.
    static let maxDepth = 200
    /// The most schema checks one run makes for each part of the value (each value,
    /// array and object in it), and at least `minSteps`: past it the value is refused as
    /// one that cannot be checked, naming the `$ref` being evaluated. A real document
    /// checks each part against a handful of schemas, far below; the bound keeps the
    /// work linear in the value, which `maxResponseBytes` bounds for a response.
    static let stepsPerPart = 100
    static let minSteps = 1_000_000
    /// What reading a string counts as: one check per this many bytes.
    static let bytesPerStep = 64
    /// What compiling a pattern counts as (milliseconds for a large one, against
    /// microseconds for a check).
    static let compileSteps = 2_000

    /// A `$ref` evaluated at a place in the value.
    private struct RefVisit: Hashable {
        var ref: String
        var pointer: String
    }

    let document: JSON
    /// The document's `$ref`s already resolved (`SchemaValidator.targets`).
    let targets: [String: JSON]
    /// The document's patterns, compiled as checks use them (`SchemaValidator.patterns`).
    let patterns: SchemaPatterns
    let direction: SchemaValidator.Direction
    /// `minSteps`, or less for a test.
    var stepFloor = SchemaRun.minSteps
    /// The value the run checks, counted in parts once the run needs more than `stepFloor` checks.
    var root: JSON = .null
    /// The bound on `steps`: `stepFloor` until the run passes it, then the value's.
    private var stepLimit: Int?
    private var activeRefs: [RefVisit] = []
    /// The outermost entry of `activeRefs` a loop was cut at since it was last cleared:
    /// a result that depends on a cut above its own `$ref` is not remembered.
    private var outermostCut = Int.max
    private var refResults: [RefVisit: SchemaViolation?] = [:]
    private var depth = 0
    var steps = 0
    /// Set once the run went past its step bound: then it is the run's answer, whatever
    /// the branches made of the violations that unwound it.
    private(set) var exhausted: SchemaViolation?
    /// Set once a schema could not be evaluated (a `$ref` outside the document or to
    /// nothing, nesting past `maxDepth`): the run's answer too, so that no `not`,
    /// `oneOf` or `anyOf` reads "could not check" as "does not match" and lets a value
    /// through.
    private(set) var uncheckable: SchemaViolation?

    init(document: JSON, targets: [String: JSON] = [:], patterns: SchemaPatterns = SchemaPatterns(),
         direction: SchemaValidator.Direction) {
        self.document = document
        self.targets = targets
        self.patterns = patterns
        self.direction = direction
    }

    mutating func check(_ value: JSON, against schema: JSON, at pointer: String) -> SchemaViolation? {
        if let exhausted { return exhausted }
        if let uncheckable { return uncheckable }
        steps += 1
        if steps > stepLimit ?? stepFloor {
            let limit = stepLimit ?? max(stepFloor, Self.stepsPerPart.multipliedReportingOverflow(by: Self.parts(of: root)).partialValue)
            stepLimit = limit
            if steps > limit {
                let rule = activeRefs.last.map { " (at $ref '\(SchemaViolation.quoted($0.ref))')" } ?? ""
                exhausted = SchemaViolation(
                    pointer: pointer,
                    message: "cannot be checked: its schemas need more than \(limit) checks\(rule)")
                return exhausted
            }
        }
        let keywords: JSONObject
        switch schema {
        case .bool(true): return nil
        case .bool(false): return SchemaViolation(pointer: pointer, message: "is not allowed here (its schema is false)")
        case .object(let object): keywords = object
        default: return nil  // not a schema: a document error that is not the value's fault
        }
        if keywords.isEmpty { return nil }
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maxDepth {
            uncheckable = SchemaViolation(pointer: pointer, message: "cannot be checked: nests deeper than \(Self.maxDepth) schema levels")
            return uncheckable
        }
        // 3.0's `nullable` admits null whatever else the schema says; published documents
        // also put it beside `$ref` and `allOf`, where 3.0 strictly ignores it.
        if value.isNull, keywords["nullable"] == .bool(true) { return nil }
        if let ref = keywords["$ref"]?.stringValue, let violation = checkRef(ref, value, at: pointer) {
            return violation
        }
        if let violation = checkType(value, keywords, at: pointer) { return violation }
        if let violation = checkEnumAndConst(value, keywords, at: pointer) { return violation }
        switch value {
        case .int, .double, .number:
            if let violation = checkNumber(value, keywords, at: pointer) { return violation }
        case .string(let string):
            if let violation = checkString(string, keywords, at: pointer) { return violation }
        case .array(let items):
            if let violation = checkArray(items, keywords, at: pointer) { return violation }
        case .object(let object):
            if let violation = checkObject(object, keywords, at: pointer) { return violation }
        case .null, .bool: break
        }
        return checkComposition(value, keywords, at: pointer)
    }

    /// How many values, arrays and objects `value` holds, itself included.
    static func parts(of value: JSON) -> Int {
        var count = 0
        var pending = [value]
        while let node = pending.popLast() {
            count += 1
            switch node {
            case .array(let items): pending.append(contentsOf: items)
            case .object(let object): for member in object { pending.append(member.value) }
            default: break
            }
        }
        return count
    }

    // MARK: $ref

    private mutating func checkRef(_ ref: String, _ value: JSON, at pointer: String) -> SchemaViolation? {
        guard ref.hasPrefix("#") else {
            uncheckable = SchemaViolation(
                pointer: pointer,
                message: "cannot be checked: $ref '\(SchemaViolation.quoted(ref))' is not local to the document")
            return uncheckable
        }
        guard let target = target(of: ref) else {
            uncheckable = SchemaViolation(
                pointer: pointer,
                message: "cannot be checked: $ref '\(SchemaViolation.quoted(ref))' points at nothing in the document")
            return uncheckable
        }
        let visit = RefVisit(ref: ref, pointer: pointer)
        if let known = refResults[visit] { return known }
        // The same $ref again at the same place in the value, while it is still being
        // evaluated there, can only recurse forever.
        if let active = activeRefs.firstIndex(of: visit) {
            outermostCut = min(outermostCut, active)
            return SchemaViolation(
                pointer: pointer,
                message: "cannot be checked: $ref '\(SchemaViolation.quoted(ref))' refers back to itself (a $ref loop)")
        }
        let level = activeRefs.count
        activeRefs.append(visit)
        let result = check(value, against: target, at: pointer)
        activeRefs.removeLast()
        // A loop cut at this $ref or inside it is part of what it means here; one cut
        // further out depends on how this place was reached, so it is not remembered.
        if outermostCut >= level {
            outermostCut = Int.max
            if exhausted == nil, uncheckable == nil { refResults[visit] = .some(result) }
        }
        return result
    }

    /// What a local `$ref` of the document points at: resolved once up front, else now.
    func target(of ref: String) -> JSON? {
        targets[ref] ?? Self.resolve(ref, in: document)
    }

    /// The value a local `$ref` ("#", "#/components/schemas/Pet", "#/a~1b/%25") points at.
    static func resolve(_ ref: String, in document: JSON) -> JSON? {
        guard ref.first == "#", let fragment = percentDecoded(ref.dropFirst()) else { return nil }
        if fragment.isEmpty { return document }
        guard fragment.first == "/" else { return nil }  // a named anchor, which OpenAPI documents rarely use
        var node = document
        for rawToken in fragment.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = String(rawToken).replacing("~1", with: "/").replacing("~0", with: "~")
            switch node {
            case .object(let object):
                guard let next = object[token] else { return nil }
                node = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index),
                    token == "0" || !token.hasPrefix("0")
                else { return nil }
                node = items[index]
            default: return nil
            }
        }
        return node
    }

    static func percentDecoded(_ text: Substring) -> String? {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: allOf, anyOf, oneOf, not

    private mutating func checkComposition(_ value: JSON, _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        if let schemas = keywords["allOf"]?.arrayValue {
            for schema in schemas {
                if let violation = check(value, against: schema, at: pointer) { return violation }
            }
        }
        if let schemas = keywords["anyOf"]?.arrayValue, !schemas.isEmpty {
            if let branch = discriminatedBranch(of: value, keywords, among: schemas) {
                if let violation = check(value, against: branch, at: pointer) { return violation }
            } else if let violation = checkAnyOf(value, schemas, at: pointer) {
                return violation
            }
        }
        if let schemas = keywords["oneOf"]?.arrayValue, !schemas.isEmpty {
            if let branch = discriminatedBranch(of: value, keywords, among: schemas) {
                if let violation = check(value, against: branch, at: pointer) { return violation }
            } else if let violation = checkOneOf(value, schemas, at: pointer) {
                return violation
            }
        }
        if let schema = keywords["not"], check(value, against: schema, at: pointer) == nil {
            return SchemaViolation(pointer: pointer, message: "must not match the schema of 'not'")
        }
        // 2020-12's `if`, `then` and `else`: the branch the condition picks applies.
        if let condition = keywords["if"], keywords["then"] != nil || keywords["else"] != nil {
            let branch = check(value, against: condition, at: pointer) == nil ? keywords["then"] : keywords["else"]
            if let branch, let violation = check(value, against: branch, at: pointer) { return violation }
        }
        return nil
    }

    private mutating func checkAnyOf(_ value: JSON, _ schemas: [JSON], at pointer: String) -> SchemaViolation? {
        var failures: [SchemaViolation] = []
        for schema in schemas {
            guard let violation = check(value, against: schema, at: pointer) else { break }
            failures.append(violation)
        }
        if failures.count == schemas.count {
            return noneMatched(failures, keyword: "anyOf", at: pointer)
        }
        return nil
    }

    private mutating func checkOneOf(_ value: JSON, _ schemas: [JSON], at pointer: String) -> SchemaViolation? {
        var failures: [SchemaViolation] = []
        var matched: [Int] = []
        for (index, schema) in schemas.enumerated() {
            if let violation = check(value, against: schema, at: pointer) {
                failures.append(violation)
            } else {
                matched.append(index + 1)
            }
        }
        if matched.isEmpty { return noneMatched(failures, keyword: "oneOf", at: pointer) }
        if matched.count > 1 {
            let which = matched.prefix(10).map { "#\($0)" }.joined(separator: ", ") + (matched.count > 10 ? ", …" : "")
            return SchemaViolation(
                pointer: pointer,
                message: "matches \(matched.count) of the \(schemas.count) schemas of oneOf (\(which)); it must match exactly one")
        }
        return nil
    }

    /// "matches none of the 3 schemas of anyOf", with the violation of the branch that
    /// got deepest into the value: most likely the one the caller meant.
    private func noneMatched(_ failures: [SchemaViolation], keyword: String, at pointer: String) -> SchemaViolation {
        var message = "matches none of the \(failures.count) schemas of \(keyword)"
        if failures.count == 1 {
            message = "does not match the schema of \(keyword)"
        }
        if let (index, closest) = failures.enumerated().max(by: { $0.element.pointer.count < $1.element.pointer.count }) {
            let place = closest.pointer == pointer ? "" : "\(closest.shownPointer) "
            // Each level of nested anyOf/oneOf quotes the one below it: clipped, so a
            // deep nesting cannot grow the message without bound.
            let reason = SchemaViolation.quoted(closest.message, limit: SchemaViolation.nestedLimit)
            message += " (closest, #\(index + 1): \(place)\(reason))"
        }
        return SchemaViolation(pointer: pointer, message: message)
    }
}
