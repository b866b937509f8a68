import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// A place in a YAML text, 1-based, for error messages.
package struct YAMLMark {
    var line: Int
    var column: Int
}

/// Builds the JSON value of one YAML document from its parse events (`YAMLReader`
/// feeds it libyaml's): mappings become objects in document order, with duplicate
/// keys refused; aliases repeat their anchor's value, and the values a document
/// produces, aliases expanded, are counted against `maxValues`, and their size as JSON
/// text (`JSON.textSize`) against `maxBytes`, so that a small text of nested aliases
/// ("billion laughs", or a few aliases of a long string) is refused before anything
/// is expanded.
package struct YAMLTreeBuilder {
    /// An anchored node: its value, how many values it holds (itself included), its
    /// size as JSON text, and for a scalar its text, which is what it means as a mapping key.
    private struct Anchored {
        var value: JSON
        var values: Int
        var bytes: Int
        var keyText: String?
    }

    private enum KeyState {
        case expectingKey
        case value(key: String)
        /// After the YAML 1.1 merge key `<<`.
        case mergeValue
    }

    /// An open mapping or sequence.
    private struct Frame {
        var isMapping: Bool
        var anchor: String?
        /// `produced` and `producedBytes` before this node was counted.
        var producedBefore: Int
        var bytesBefore: Int
        var items: [JSON] = []
        var object = JSONObject()
        var keys: Set<String> = []
        var keyState = KeyState.expectingKey
        var merges: [JSON] = []
    }

    let what: String
    let maxValues: Int
    let maxBytes: Int
    let maxDepth: Int
    private var stack: [Frame] = []
    private var anchors: [String: Anchored] = [:]
    private var produced = 0
    private var producedBytes = 0
    private(set) var root: JSON?

    init(what: String, maxValues: Int, maxBytes: Int, maxDepth: Int) {
        self.what = what
        self.maxValues = maxValues
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    func error(_ message: String, at mark: YAMLMark) -> NetworkError {
        .invalidRequest("\(what): line \(mark.line) column \(mark.column): \(message)")
    }

    private var atKey: Bool {
        guard let top = stack.last, top.isMapping, case .expectingKey = top.keyState else { return false }
        return true
    }

    mutating func scalar(_ text: String, tag: String?, plain: Bool, anchor: String?, at mark: YAMLMark) throws(NetworkError) {
        let value: JSON
        if atKey && tag == nil {
            // A key's text is the key, as written: `200:` is the key "200". Its value
            // matters only when an alias repeats it elsewhere.
            value = (try? YAMLScalar.resolve(text, tag: nil, plain: plain)) ?? .string(text)
        } else {
            do throws(YAMLProblem) {
                value = try YAMLScalar.resolve(text, tag: tag, plain: plain)
            } catch {
                throw self.error(error.message, at: mark)
            }
        }
        // As a key, a scalar is its text, its quotes and a colon; as a value, its JSON text.
        let bytes = atKey ? JSON.keyTextSize(text) : value.ownTextSize
        if let anchor { anchors[anchor] = Anchored(value: value, values: 1, bytes: bytes, keyText: text) }
        try count(1, bytes: bytes, at: mark)
        let isMergeKey = atKey && plain && tag == nil && text == "<<"
        try attach(value, keyText: text, isMergeKey: isMergeKey, at: mark)
    }

    mutating func alias(_ name: String, at mark: YAMLMark) throws(NetworkError) {
        guard let anchored = anchors[name] else {
            throw error("alias *\(name) names no anchor defined before it (an alias cannot repeat a node it is part of)", at: mark)
        }
        try count(anchored.values, bytes: anchored.bytes, at: mark)
        try attach(anchored.value, keyText: anchored.keyText, isMergeKey: false, at: mark)
    }

    mutating func startCollection(mapping: Bool, tag: String?, anchor: String?, at mark: YAMLMark) throws(NetworkError) {
        let expected = YAMLScalar.coreTagPrefix + (mapping ? "map" : "seq")
        if let tag, tag != "!", tag != expected {
            throw error("unsupported tag \(YAMLScalar.display(tag: tag)) on a \(mapping ? "mapping" : "sequence")", at: mark)
        }
        if atKey { throw error("a mapping key must be a scalar, not a \(mapping ? "mapping" : "sequence")", at: mark) }
        if stack.count >= maxDepth { throw error("nesting deeper than \(maxDepth) levels", at: mark) }
        stack.append(Frame(isMapping: mapping, anchor: anchor, producedBefore: produced, bytesBefore: producedBytes))
        try count(1, bytes: 2, at: mark)
    }

    mutating func endCollection(at mark: YAMLMark) throws(NetworkError) {
        let frame = stack.removeLast()
        let value: JSON = frame.isMapping ? .object(merged(frame)) : .array(frame.items)
        if let anchor = frame.anchor {
            anchors[anchor] = Anchored(value: value, values: produced - frame.producedBefore,
                                       bytes: producedBytes - frame.bytesBefore, keyText: nil)
        }
        try attach(value, keyText: nil, isMergeKey: false, at: mark)
    }

    /// Counts `values` more values of `bytes` bytes, and a separator before them.
    private mutating func count(_ values: Int, bytes: Int, at mark: YAMLMark) throws(NetworkError) {
        produced += values
        if produced > maxValues {
            throw error("the document expands to more than \(maxValues) values (aliases repeating aliases?)", at: mark)
        }
        producedBytes += bytes + 1
        if producedBytes > maxBytes {
            throw error("the document expands to more than \(maxBytes) bytes as JSON text (aliases repeating large values?)", at: mark)
        }
    }

    private mutating func attach(_ value: JSON, keyText: String?, isMergeKey: Bool, at mark: YAMLMark) throws(NetworkError) {
        guard !stack.isEmpty else {
            root = value
            return
        }
        let top = stack.count - 1
        guard stack[top].isMapping else {
            stack[top].items.append(value)
            return
        }
        switch stack[top].keyState {
        case .value(let key):
            stack[top].object.appendUnchecked(key, value)
            stack[top].keyState = .expectingKey
        case .mergeValue:
            guard Self.isMergeable(value) else {
                throw error("the merge key << needs a mapping or a sequence of mappings, not \(value.typeName)", at: mark)
            }
            stack[top].merges.append(value)
            stack[top].keyState = .expectingKey
        case .expectingKey:
            if isMergeKey {
                stack[top].keyState = .mergeValue
                return
            }
            guard let keyText else { throw error("a mapping key must be a scalar", at: mark) }
            guard stack[top].keys.insert(keyText).inserted else {
                throw error("duplicate key '\(keyText)'", at: mark)
            }
            stack[top].keyState = .value(key: keyText)
        }
    }

    private static func isMergeable(_ value: JSON) -> Bool {
        switch value {
        case .object: return true
        case .array(let items): return items.allSatisfy { $0.objectValue != nil }
        default: return false
        }
    }

    /// A mapping's members with its merge keys applied as YAML 1.1 (and PyYAML) do:
    /// the merged members first, the mapping's own members overriding them, and of a
    /// sequence of merged mappings the earlier one winning.
    private func merged(_ frame: Frame) -> JSONObject {
        guard !frame.merges.isEmpty else { return frame.object }
        var pairs: [JSONObject.Member] = []
        for merge in frame.merges {
            switch merge {
            case .object(let object): pairs += object.members
            case .array(let items):
                for item in items.reversed() { pairs += item.objectValue?.members ?? [] }
            default: break
            }
        }
        pairs += frame.object.members
        var result = JSONObject()
        for member in pairs { result[member.key] = member.value }
        return result
    }
}
