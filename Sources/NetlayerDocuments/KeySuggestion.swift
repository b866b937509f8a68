import NetlayerCore
import NetlayerFeatures
import NetlayerJSON

/// The closest known key to a mistyped one, for "did you mean" in document errors.
package enum KeySuggestion {
    /// A known key that differs only in case, else the nearest within two edits
    /// (insert, delete, substitute, swap of neighbours); nil when none is that close.
    static func closest(to key: String, among known: some Sequence<String>) -> String? {
        let candidates = known.sorted()  // a stable answer whatever the set's order
        let lowered = key.lowercased()
        if let sameLetters = candidates.first(where: { $0.lowercased() == lowered }) { return sameLetters }
        let typed = Array(lowered.unicodeScalars)
        guard typed.count <= 64 else { return nil }
        var best: (name: String, distance: Int)?
        for name in candidates {
            let d = distance(typed, Array(name.lowercased().unicodeScalars))
            if d <= 2, d < typed.count, d < (best?.distance ?? .max) { best = (name, d) }
        }
        return best?.name
    }

    /// Optimal string alignment distance (Damerau–Levenshtein without repeated edits
    /// of one substring).
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d = min(d, before[j - 2] + 1) }
                current[j] = d
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
