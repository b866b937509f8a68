import Foundation
import Netlayer
import Testing

/// The README's Swift block runs as written: its text (with the demo server's URL
/// replaced by the test server's) is the body of `theBlockRuns`, and
/// `theBlockIsTheREADMEs` fails when the two drift apart.
@Suite struct ReadmeSnippetTests {
    private static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theBlockRuns() async throws {
        let readmeBase = TestServer.shared.baseURL
        // README swift block begins
        struct Movie: Codable, Sendable { let id: Int; let title: String }
        struct Page: Decodable, Sendable { let page: Int; let results: [Movie] }

        let client = try NetlayerClient(baseURL: "\(readmeBase)")
        let page: Page = try await client.send(.get("movies", query: ["page": 1])).value
        let created = try await client.send(Endpoint<JSON>.post("movies", body: Movie(id: 0, title: "Heat")))

        // The config JSON C, Python and the CLI use, named endpoints included.
        let api = try NetlayerClient(config: ConfigDocument(json: """
            {"baseURL": "\(readmeBase)", "auth": {"bearer": "my-token"},
             "endpoints": {"movie": {"path": "movies/{id}", "response": {"keyPath": "data"}}}}
            """))
        let dune = try await api.call("movie", params: ["id": 1], as: Movie.self).value

        print(page.results.count, created.statusCode, dune.title)

        for try await event in client.events(Endpoint<JSON>.get("sse"), as: .sse) { print(event) }
        // README swift block ends
        _ = (client.shutdown(), api.shutdown())
    }

    @Test func theBlockIsTheREADMEs() throws {
        let readme = try String(contentsOf: Self.repo.appendingPathComponent("README.md"), encoding: .utf8)
        // The manifest block (Package.swift of a dependent) is built by Tests/downstream/run_swift_package.py.
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```\n")[0] }
            .filter { !$0.contains("import PackageDescription") }
        #expect(blocks.count == 1)
        let expected = try #require(blocks.first).replacingOccurrences(of: "import Netlayer\n\n", with: "")
            .replacingOccurrences(of: "http://127.0.0.1:8080/", with: "\\(readmeBase)")
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README swift block begins\n"))
        let end = try #require(source.range(of: "        // README swift block ends"))
        let copy = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }.joined(separator: "\n")
        #expect(copy == expected)
    }
}
