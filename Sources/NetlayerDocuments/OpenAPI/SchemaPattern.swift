import CRegex
import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// A schema's `pattern` (or `patternProperties` key) compiled by RE2, which matches in
/// time linear in the text: no pattern, however written (`^(a+)+$`), can make checking
/// a value take longer than reading it a bounded number of times. The pattern is
/// ECMA-262's, rewritten into RE2's syntax by `ECMAPattern`, and matches code points.
///
/// A pattern RE2 cannot compile — lookaround and backreferences, which need
/// backtracking, a repetition count over 1000, a program over `maxMemory` — has no
/// `SchemaPattern`, and the validator does not check it (the document's limitation,
/// not the value's fault).
package final class SchemaPattern: @unchecked Sendable {
    // Sendable: RE2 objects are immutable once compiled and safe to match from any thread.

    /// The bytes each compiled pattern may use for its program and matching caches
    /// (RE2's `max_mem`); past it matching stays linear, on RE2's slower NFA.
    static let maxMemory: Int64 = 1 << 20

    private let compiled: OpaquePointer

    /// `pattern` compiled, or nil when RE2 cannot match it.
    init?(_ pattern: String) {
        guard var syntax = ECMAPattern.re2Syntax(pattern) else { return nil }
        let handle = syntax.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { cregex_compile($0.baseAddress, $0.count, Self.maxMemory) }
        }
        guard let handle else { return nil }
        compiled = handle
    }

    deinit {
        cregex_free(compiled)
    }

    /// Whether the pattern matches anywhere in `text` (JSON Schema patterns are not anchored).
    func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { cregex_search(compiled, $0.baseAddress, $0.count) != 0 }
        }
    }
}

/// The patterns of one document, compiled the first time a check uses each: a document
/// may hold thousands no operation uses (RE2 programs take up to `maxMemory` each), and
/// loading it compiles none. At most `capacity` are kept; past that a pattern is
/// compiled for the check that uses it.
package final class SchemaPatterns: Sendable {
    static let capacity = 256
    private let compiled = Locked<[String: SchemaPattern?]>([:])

    package init() {}

    /// `text` compiled by RE2 (nil when RE2 cannot compile it), and whether it was
    /// compiled now, which costs far more than a match.
    func pattern(_ text: String) -> (SchemaPattern?, compiledNow: Bool) {
        if let known = compiled.withLock({ $0[text] }) { return (known, false) }
        let pattern = SchemaPattern(text)
        compiled.withLock { kept in
            if kept.count < Self.capacity { kept[text] = .some(pattern) }
        }
        return (pattern, true)
    }
}
