import NetlayerCore
import NetlayerJSON

/// A stub rule's URL path pattern, compiled once: `*` matches any bytes within one
/// segment (no `/`), `**` any bytes across segments, every other byte itself. A pattern
/// without a leading `/` matches the end of the path at a segment boundary, as if it
/// began with `**/`.
///
/// Matching runs the pattern as a nondeterministic automaton over the path's bytes,
/// keeping the set of pattern positions reached so far: O(pattern × path) steps
/// whatever the wildcards. Trying each way a wildcard could split the path instead
/// (backtracking) takes time exponential in the number of `**`.
package struct StubPathPattern: Sendable {
    /// The most bytes a config's pattern may have, so that matching stays linear in
    /// the path with a small factor.
    package static let maxBytes = 1024

    private enum Token: Equatable, Sendable {
        case byte(UInt8)
        /// `*`: any bytes but `/`.
        case withinSegment
        /// `**`: any bytes.
        case acrossSegments
    }

    private static let slash = UInt8(ascii: "/")
    private static let star = UInt8(ascii: "*")

    private let tokens: [Token]

    init(_ pattern: String) {
        let bytes = Array(pattern.utf8)
        var tokens: [Token] = bytes.first == Self.slash ? [] : [.acrossSegments, .byte(Self.slash)]
        var i = 0
        while i < bytes.count {
            if bytes[i] != Self.star {
                tokens.append(.byte(bytes[i]))
                i += 1
            } else if i + 1 < bytes.count, bytes[i + 1] == Self.star {
                tokens.append(.acrossSegments)
                i += 2
            } else {
                tokens.append(.withinSegment)
                i += 1
            }
        }
        self.tokens = tokens
    }

    /// Does the whole of `path` match?
    func matches(_ path: [UInt8]) -> Bool {
        let end = tokens.count
        var reached = [Bool](repeating: false, count: end + 1)
        var next = reached
        reached[0] = true
        skipEmptyWildcards(&reached)
        for byte in path {
            var any = false
            for i in 0..<end where reached[i] {
                switch tokens[i] {
                case .byte(let expected) where expected == byte:
                    next[i + 1] = true
                    any = true
                case .withinSegment where byte != Self.slash, .acrossSegments:
                    next[i] = true
                    any = true
                default:
                    break
                }
            }
            guard any else { return false }
            skipEmptyWildcards(&next)
            swap(&reached, &next)
            for i in 0...end { next[i] = false }
        }
        return reached[end]
    }

    /// A wildcard may match nothing: reaching it reaches the token after it too (in
    /// order, so that a run of wildcards is crossed in one pass).
    private func skipEmptyWildcards(_ states: inout [Bool]) {
        for i in 0..<tokens.count where states[i] {
            if case .byte = tokens[i] { continue }
            states[i + 1] = true
        }
    }
}
