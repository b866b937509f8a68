import NetlayerCore

/// The request headers a response's `Vary` names, and their values as RFC 9111
/// section 4.1 compares them: two requests match when one's values become the
/// other's by adding or removing whitespace where the field's syntax allows it,
/// combining lines of the same field, or normalising case where its values are
/// case-insensitive.
enum SelectingHeaders {
    /// List fields whose members are case-insensitive tokens (codings, charsets,
    /// language ranges), compared without case and without whitespace around `,`,
    /// `;` and `=`.
    private static let caseInsensitiveLists: Set<String> = ["accept-encoding", "accept-charset", "accept-language"]

    /// The lower-case names `vary` lists (lines joined with ", "); nil when it holds
    /// `*`, which no request matches (section 4.1).
    static func names(in vary: String?) -> [String]? {
        guard let vary else { return [] }
        var names: [String] = []
        for member in CacheControl.members(of: vary) {
            let name = member.lowercased()
            if name == "*" { return nil }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// The value of the header `name` (lower case) in `request`, normalised; nil when
    /// the request has none.
    static func value(of name: String, in request: HTTPRequest) -> String? {
        let lines = request.headers.values(named: name)
        guard !lines.isEmpty else { return nil }
        if caseInsensitiveLists.contains(name) {
            return listMembers(lines).map { normalisedParameters($0).lowercased() }.joined(separator: ",")
        }
        if name == "accept" {
            // Media types and parameter names are case-insensitive; parameter values need not be.
            return listMembers(lines).map { member -> String in
                normalisedParameters(member).split(separator: ";", omittingEmptySubsequences: false).enumerated()
                    .map { i, part -> String in
                        guard i > 0, let eq = part.firstIndex(of: "=") else { return part.lowercased() }
                        return part[..<eq].lowercased() + part[eq...]
                    }.joined(separator: ";")
            }.joined(separator: ",")
        }
        // Any other field: only the whitespace around a value and the joining of lines.
        return lines.map { String(CacheControl.trimmed(Substring($0))) }.joined(separator: ", ")
    }

    /// The members of a list field's lines, trimmed, empty ones dropped.
    private static func listMembers(_ lines: [String]) -> [String] {
        lines.flatMap { CacheControl.members(of: $0).map(String.init) }
    }

    /// `member` without the optional whitespace around its `;` and `=`.
    private static func normalisedParameters(_ member: String) -> String {
        member.split(separator: ";", omittingEmptySubsequences: false).map { parameter -> String in
            let trimmed = CacheControl.trimmed(parameter)
            guard let eq = trimmed.firstIndex(of: "=") else { return String(trimmed) }
            return CacheControl.trimmed(trimmed[..<eq]) + "=" + CacheControl.trimmed(trimmed[trimmed.index(after: eq)...])
        }.joined(separator: ";")
    }
}
