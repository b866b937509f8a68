import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// The keywords that look at one kind of value: type, enum and const, numbers, strings,
/// arrays and objects.
extension SchemaRun {
    // MARK: type, enum, const

    func checkType(_ value: JSON, _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        let names: [String]
        switch keywords["type"] {
        case .string(let name)?: names = [name]
        case .array(let list)?: names = list.compactMap(\.stringValue)
        default: return nil
        }
        // An unknown type name ("file" from Swagger 2) is the document's mistake; it admits anything.
        let known: Set<String> = ["null", "boolean", "object", "array", "number", "integer", "string"]
        if names.isEmpty || names.contains(where: { !known.contains($0) || value.hasSchemaType($0) }) { return nil }
        var allowed = names.map(Self.typePhrase)
        if keywords["nullable"] == .bool(true), !names.contains("null") { allowed.append("null") }
        return SchemaViolation(pointer: pointer, message: "must be \(Self.orList(allowed)), not \(value.typeName)")
    }

    func checkEnumAndConst(_ value: JSON, _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        if let options = keywords["enum"]?.arrayValue, !options.contains(where: { $0.schemaEquals(value) }) {
            let shown = options.prefix(12).map(Self.jsonText).joined(separator: ", ")
            let more = options.count > 12 ? ", … (\(options.count) values)" : ""
            return SchemaViolation(pointer: pointer, message: options.count == 1 ? "must be \(shown)" : "must be one of \(shown)\(more)")
        }
        if let constant = keywords["const"], !constant.schemaEquals(value) {
            return SchemaViolation(pointer: pointer, message: "must be \(Self.jsonText(constant))")
        }
        return nil
    }

    // MARK: numbers

    func checkNumber(_ value: JSON, _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        guard let number = SchemaNumber(value) else { return nil }
        func violation(_ words: String, _ bound: JSON) -> SchemaViolation {
            SchemaViolation(pointer: pointer, message: "must be \(words) \(Self.jsonText(bound))")
        }
        // 3.0 spells an exclusive bound as `minimum` plus `exclusiveMinimum: true`, 3.1 as
        // `exclusiveMinimum: <number>`; documents of either version use both.
        if let bound = keywords["minimum"], let limit = SchemaNumber(bound) {
            if keywords["exclusiveMinimum"] == .bool(true) {
                if !(limit < number) { return violation("greater than", bound) }
            } else if number < limit {
                return violation("at least", bound)
            }
        }
        if let bound = keywords["exclusiveMinimum"], let limit = SchemaNumber(bound), !(limit < number) {
            return violation("greater than", bound)
        }
        if let bound = keywords["maximum"], let limit = SchemaNumber(bound) {
            if keywords["exclusiveMaximum"] == .bool(true) {
                if !(number < limit) { return violation("less than", bound) }
            } else if limit < number {
                return violation("at most", bound)
            }
        }
        if let bound = keywords["exclusiveMaximum"], let limit = SchemaNumber(bound), !(number < limit) {
            return violation("less than", bound)
        }
        if let factor = keywords["multipleOf"], let divisor = SchemaNumber(factor), !divisor.negative,
            let a = value.doubleValue, let b = factor.doubleValue,
            !number.isMultiple(of: divisor, approximately: (a, b))
        {
            return violation("a multiple of", factor)
        }
        return nil
    }

    // MARK: strings

    mutating func checkString(_ string: String, _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        let needsLength = keywords["minLength"] != nil || keywords["maxLength"] != nil
        if needsLength || keywords["pattern"] != nil {
            // Reading the string counts against the run's bound, one check per
            // `bytesPerStep`: a string checked by many schemas costs in proportion.
            steps += string.utf8.count / Self.bytesPerStep
        }
        // JSON Schema counts code points, so "💩" is one character and "é" spelled with a
        // combining accent two.
        let length = needsLength ? string.unicodeScalars.count : 0
        if let minimum = keywords["minLength"].flatMap(Self.lowerBound), length < minimum {
            return SchemaViolation(pointer: pointer, message: "must be at least \(Self.count(minimum, "character")) long")
        }
        if let maximum = keywords["maxLength"]?.intValue, length > maximum {
            return SchemaViolation(pointer: pointer, message: "must be at most \(Self.count(maximum, "character")) long")
        }
        // A pattern RE2 cannot compile (lookaround, backreferences) is not checked: it is
        // the document's limitation, not the value's fault.
        if let pattern = keywords["pattern"]?.stringValue, let compiled = self.pattern(pattern), !compiled.matches(string) {
            return SchemaViolation(pointer: pointer, message: "must match the pattern '\(SchemaViolation.quoted(pattern))'")
        }
        return nil
    }

    // MARK: arrays

    mutating func checkArray(_ items: [JSON], _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        if let minimum = keywords["minItems"].flatMap(Self.lowerBound), items.count < minimum {
            return SchemaViolation(pointer: pointer, message: "must have at least \(Self.count(minimum, "item"))")
        }
        if let maximum = keywords["maxItems"]?.intValue, items.count > maximum {
            return SchemaViolation(pointer: pointer, message: "must have at most \(Self.count(maximum, "item"))")
        }
        // 2020-12's `prefixItems` + `items`, or the older tuple form `items: [...]` +
        // `additionalItems`.
        var prefix = keywords["prefixItems"]?.arrayValue ?? []
        var rest = keywords["items"]
        if prefix.isEmpty, case .array(let tuple)? = rest {
            prefix = tuple
            rest = keywords["additionalItems"]
        } else if case .array? = rest {
            rest = nil
        }
        for (index, item) in items.enumerated() {
            guard let schema = index < prefix.count ? prefix[index] : rest else { break }
            if let violation = check(item, against: schema, at: "\(pointer)/\(index)") { return violation }
        }
        // 2020-12's `contains`, with `minContains` (1 by default, 0 makes it optional)
        // and `maxContains`.
        if let schema = keywords["contains"] {
            var matching = 0
            for (index, item) in items.enumerated() where check(item, against: schema, at: "\(pointer)/\(index)") == nil {
                matching += 1
            }
            let minimum = keywords["minContains"].flatMap(Self.lowerBound) ?? 1
            if matching < minimum {
                return SchemaViolation(pointer: pointer, message: "must have at least \(Self.count(minimum, "item")) matching the schema of 'contains' (it has \(matching))")
            }
            if let maximum = keywords["maxContains"]?.intValue, matching > maximum {
                return SchemaViolation(pointer: pointer, message: "must have at most \(Self.count(maximum, "item")) matching the schema of 'contains' (it has \(matching))")
            }
        }
        if keywords["uniqueItems"] == .bool(true), items.count > 1 {
            // Items are compared only with earlier ones of the same hash: a long array
            // a server sends costs time linear in its size, not quadratic.
            var seen: [Int: [Int]] = [:]
            for (i, item) in items.enumerated() {
                var hasher = Hasher()
                item.schemaHash(into: &hasher)
                let hash = hasher.finalize()
                if let j = seen[hash]?.first(where: { items[$0].schemaEquals(item) }) {
                    return SchemaViolation(pointer: pointer, message: "must not have duplicate items (#\(j) and #\(i) are equal)")
                }
                seen[hash, default: []].append(i)
            }
        }
        return nil
    }

    // MARK: objects

    mutating func checkObject(_ object: JSONObject, _ keywords: JSONObject, at pointer: String) -> SchemaViolation? {
        let properties = keywords["properties"]?.objectValue ?? JSONObject()
        if let required = keywords["required"]?.arrayValue {
            for case .string(let name) in required where object[name] == nil {
                if let schema = properties[name], exemptFromRequired(schema) { continue }
                return SchemaViolation(pointer: pointer, message: "is missing required property '\(SchemaViolation.quoted(name))'")
            }
        }
        if let minimum = keywords["minProperties"].flatMap(Self.lowerBound), object.count < minimum {
            return SchemaViolation(pointer: pointer, message: "must have at least \(Self.count(minimum, "property"))")
        }
        if let maximum = keywords["maxProperties"]?.intValue, object.count > maximum {
            return SchemaViolation(pointer: pointer, message: "must have at most \(Self.count(maximum, "property"))")
        }
        // 2020-12's `dependentRequired` and `dependentSchemas`: what a property brings.
        if let dependencies = keywords["dependentRequired"]?.objectValue {
            for dependency in dependencies where object[dependency.key] != nil {
                for case .string(let name) in dependency.value.arrayValue ?? [] where object[name] == nil {
                    return SchemaViolation(pointer: pointer, message: "is missing property '\(SchemaViolation.quoted(name))', which '\(SchemaViolation.quoted(dependency.key))' requires")
                }
            }
        }
        if let dependencies = keywords["dependentSchemas"]?.objectValue {
            for dependency in dependencies where object[dependency.key] != nil {
                if let violation = check(.object(object), against: dependency.value, at: pointer) { return violation }
            }
        }
        // `propertyNames`: each name, as a string, against the schema (OpenAI's
        // documents bound names with it: `propertyNames: {maxLength: 64}`).
        if let schema = keywords["propertyNames"] {
            for member in object {
                if let violation = check(.string(member.key), against: schema, at: "\(pointer)/\(Self.pointerToken(member.key))") {
                    return SchemaViolation(pointer: violation.pointer, message: "has a property name that \(violation.message)")
                }
            }
        }
        let patterns = keywords["patternProperties"]?.objectValue ?? JSONObject()
        var compiled: [(SchemaPattern, JSON)] = []
        for member in patterns {
            if let pattern = pattern(member.key) { compiled.append((pattern, member.value)) }
        }
        steps += object.count * compiled.count / 16  // each name matched against each pattern
        let additional = keywords["additionalProperties"]
        for member in object {
            let place = "\(pointer)/\(Self.pointerToken(member.key))"
            var described = false
            if let schema = properties[member.key] {
                described = true
                if let violation = check(member.value, against: schema, at: place) { return violation }
            }
            for (regex, schema) in compiled where regex.matches(member.key) {
                described = true
                if let violation = check(member.value, against: schema, at: place) { return violation }
            }
            guard !described, let additional else { continue }
            if additional == .bool(false) {
                return SchemaViolation(pointer: pointer, message: "has unknown property '\(SchemaViolation.quoted(member.key))'")
            }
            if let violation = check(member.value, against: additional, at: place) { return violation }
        }
        return nil
    }

    /// Whether a property may be left out although `required` lists it: OpenAPI 3.0
    /// exempts `readOnly` ones from requests and `writeOnly` ones from responses.
    private func exemptFromRequired(_ schema: JSON) -> Bool {
        let flag = direction == .request ? "readOnly" : "writeOnly"
        var node = schema
        for _ in 0..<8 {  // a chain of $refs; a loop just stops looking
            if node[flag] == .bool(true) { return true }
            guard let ref = node["$ref"]?.stringValue, let target = target(of: ref) else { return false }
            node = target
        }
        return false
    }

    /// A `min…` keyword's count: beyond what an Int holds, more than any value has
    /// (JSON Schema Validation 6.3.2: any non-negative integer).
    static func lowerBound(_ keyword: JSON) -> Int? {
        if let count = keyword.intValue { return count }
        guard let number = keyword.doubleValue, number > 0 else { return nil }
        return Int.max
    }

    /// `text` compiled by RE2 (once per document); nil when RE2 cannot compile it. A
    /// compilation counts as `compileSteps` checks against the run's bound.
    mutating func pattern(_ text: String) -> SchemaPattern? {
        let (pattern, compiledNow) = patterns.pattern(text)
        if compiledNow { steps += Self.compileSteps }
        return pattern
    }

    // MARK: wording

    static func typePhrase(_ name: String) -> String {
        switch name {
        case "null": return "null"
        case "integer": return "an integer"
        case "array", "object": return "an \(name)"
        default: return "a \(name)"
        }
    }

    static func orList(_ phrases: [String]) -> String {
        guard phrases.count > 1 else { return phrases.first ?? "" }
        return phrases.dropLast().joined(separator: ", ") + " or " + phrases[phrases.count - 1]
    }

    static func count(_ n: Int, _ noun: String) -> String {
        if n == 1 { return "1 \(noun)" }
        return noun.hasSuffix("y") ? "\(n) \(noun.dropLast())ies" : "\(n) \(noun)s"
    }

    /// `value` as JSON text for a message, clipped: only the first members of a large
    /// array or object and the ends of a long string are written, so that quoting a
    /// value of any size costs little.
    static func jsonText(_ value: JSON) -> String {
        var text = ""
        appendPreview(of: value, to: &text)
        return SchemaViolation.quoted(text)
    }

    private static func appendPreview(of value: JSON, to text: inout String) {
        let limit = SchemaViolation.quotedLimit
        switch value {
        case .string(let string) where string.utf8.count > limit:
            let cut = String(String.UnicodeScalarView(string.unicodeScalars.prefix(limit)))
            text += String(decoding: JSONWriter.serialize(.string(cut)), as: UTF8.self).dropLast() + "…\""
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                if text.utf8.count > limit {
                    text += "…"
                    break
                }
                appendPreview(of: item, to: &text)
            }
            text += "]"
        case .object(let object):
            text += "{"
            for (index, member) in object.enumerated() {
                if index > 0 { text += "," }
                if text.utf8.count > limit {
                    text += "…"
                    break
                }
                appendPreview(of: .string(member.key), to: &text)
                text += ":"
                appendPreview(of: member.value, to: &text)
            }
            text += "}"
        default:
            text += String(decoding: JSONWriter.serialize(value), as: UTF8.self)
        }
    }

    /// A member name as a JSON pointer token (RFC 6901: `~` → `~0`, `/` → `~1`).
    static func pointerToken(_ key: String) -> String {
        guard key.contains("~") || key.contains("/") else { return key }
        return key.replacing("~", with: "~0").replacing("/", with: "~1")
    }
}

extension JSON {
    /// Whether the value is of the JSON Schema type `name`; "integer" admits any number
    /// without a fraction, however it was written (`1`, `1.0`, a 30-digit literal).
    func hasSchemaType(_ name: String) -> Bool {
        switch (name, self) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("number", .int), ("number", .double), ("number", .number), ("integer", .int): return true
        case ("integer", .double(let d)): return d.rounded() == d
        case ("integer", .number): return SchemaNumber(self)?.isIntegral ?? false
        default: return false
        }
    }
}
