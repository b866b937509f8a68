import NetlayerCore

/// How many cookies a client's jar keeps, and which go when it holds more.
///
/// libcurl 7.88 takes at most 50 cookies from one response and sends at most 150, but
/// keeps every cookie it is given: a server (or a cookie file) could grow the jar
/// without end, and libcurl's own work grows with it, as the square of a domain's
/// cookies when it adds one and of the whole jar when it lists them. RFC 6265
/// section 6.1 asks a user agent to keep at least 50 cookies per domain and 3000 in
/// all; browsers keep 180 per domain and 3000 in all, and so does Netlayer.
///
/// Which go: a domain's oldest first (libcurl lists a domain's cookies in the order
/// they were first set, and a cookie file keeps that order), and past the total the
/// domains that hold the most lose cookies first, so a domain that floods the jar
/// cannot push out another's few.
enum CookieLimits {
    static let perDomain = 180
    static let total = 3000

    /// `lines` (Netscape cookie-file lines, as `CurlShare.cookieLines()` lists them),
    /// split into those the limits keep and those they drop, each in its given order.
    /// A line that is not a cookie is kept (libcurl decides what it reads).
    static func split(_ lines: [String]) -> (kept: [String], dropped: [String]) {
        // Each domain's cookies, as indexes into `lines`, in order.
        var domainOf: [String: Int] = [:]
        var members: [[Int]] = []
        for (index, line) in lines.enumerated() {
            guard let domain = domain(of: line) else { continue }
            if let known = domainOf[domain] {
                members[known].append(index)
            } else {
                domainOf[domain] = members.count
                members.append([index])
            }
        }
        let allowed = allowance(for: members.map { min($0.count, perDomain) })
        guard zip(members, allowed).contains(where: { $0.count > $1 }) else { return (lines, []) }
        var dropped = [Bool](repeating: false, count: lines.count)
        for (indexes, keep) in zip(members, allowed) where indexes.count > keep {
            for index in indexes.prefix(indexes.count - keep) { dropped[index] = true }
        }
        var kept: [String] = [], gone: [String] = []
        for (index, line) in lines.enumerated() {
            if dropped[index] { gone.append(line) } else { kept.append(line) }
        }
        return (kept, gone)
    }

    /// The lower-cased domain of a cookie line (its first field, as `StoredCookie` reads
    /// it), or nil for a line that is not a cookie; without reading the other fields,
    /// since a cookie file may hold a million lines.
    private static func domain(of line: String) -> String? {
        var text = Substring(line)
        if text.hasPrefix("#HttpOnly_") { text = text.dropFirst(10) } else if text.hasPrefix("#") { return nil }
        guard let tab = text.firstIndex(of: "\t") else { return nil }
        var domain = text[..<tab]
        if domain.hasPrefix(".") { domain = domain.dropFirst() }
        return domain.lowercased()
    }

    /// How many cookies each domain keeps when they hold `counts` (each already at most
    /// `perDomain`): all, when they fit in `total`; else every domain keeps up to one
    /// level (the highest at which they fit) and the room left goes one each to the
    /// first domains above it.
    private static func allowance(for counts: [Int]) -> [Int] {
        guard counts.reduce(0, +) > total else { return counts }
        func kept(atLevel level: Int) -> Int { counts.reduce(0) { $0 + min($1, level) } }
        var low = 0, high = perDomain  // kept(atLevel: low) fits, kept(atLevel: high) does not
        while high - low > 1 {
            let middle = (low + high) / 2
            if kept(atLevel: middle) <= total { low = middle } else { high = middle }
        }
        var room = total - kept(atLevel: low)
        return counts.map { count in
            guard count > low, room > 0 else { return min(count, low) }
            room -= 1
            return low + 1
        }
    }

    /// `line` with an expiry in the past: added to a jar, it deletes the cookie it
    /// names (libcurl replaces the cookie of the same domain, path and name, then drops
    /// it as expired).
    static func deletion(of line: String) -> String {
        var fields = line.split(separator: "\t", maxSplits: 6, omittingEmptySubsequences: false).map(String.init)
        if fields.count == 7 { fields[4] = "1" }
        return fields.joined(separator: "\t")
    }
}
