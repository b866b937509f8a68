import Testing
@testable import Netlayer

@Suite struct RequestBuildingTests {
    let config = NetworkConfig(baseURL: "https://api.example.com/v3/", headers: ["Accept": "application/json"],
                               queryParameters: ["api_key": "k 1"])

    @Test func joinsPathWithExactlyOneSlash() throws {
        for path in ["movie/popular", "/movie/popular", "//movie/popular".dropFirst().description] {
            let request = try Endpoint<JSON>(path: path).httpRequest(with: config)
            #expect(request.url == "https://api.example.com/v3/movie/popular?api_key=k%201")
        }
    }

    @Test func mergesQueryRepeatsArraysAndEncodesPerRFC3986() throws {
        let endpoint = Endpoint<JSON>(path: "search", queryParameters: ["q": "a b&c/é", "ids": [1, 2], "adult": false,
                                                                        "api_key": "override"])
        let url = try endpoint.httpRequest(with: config).url
        #expect(url == "https://api.example.com/v3/search?api_key=override&q=a%20b%26c%2F%C3%A9&ids=1&ids=2&adult=false")
    }

    @Test func anEncodedQueryIsSentAsWrittenBetweenTheBaseURLsQueryAndThePairs() throws {
        var endpoint = Endpoint<JSON>(path: "search", queryParameters: ["q": "a,b"])
        endpoint.encodedQuery = "color=blue,black%2Cgrey&x=%zz&y=a b#c\u{1}é?/:@"
        let base = NetworkConfig(baseURL: "https://h/v1?fixed=1,2", queryParameters: ["k": "1"])
        #expect(try endpoint.httpRequest(with: base).url
                == "https://h/v1/search?fixed=1,2&color=blue,black%2Cgrey&x=%25zz&y=a%20b%23c%01%C3%A9?/:@&k=1&q=a%2Cb")
        // alone, and with the other encodables: the box they share keeps value semantics
        var only = Endpoint<JSON>(path: "s")
        only.encodedQuery = "a=1"
        var copy = only
        copy.queryParametersEncodable = ["b": 2]
        copy.encodedQuery = nil
        let plain = NetworkConfig(baseURL: "http://h/")
        #expect(try only.httpRequest(with: plain).url == "http://h/s?a=1")
        #expect(try copy.httpRequest(with: plain).url == "http://h/s?b=2")
        only.encodedQuery = ""
        #expect(try only.httpRequest(with: plain).url == "http://h/s")
        #expect(only.decoding(as: String.self, with: StringResponseDecoder()).encodedQuery == "")
        // a leading "?" is a mistake the key's name explains
        only.encodedQuery = "?a=1"
        do {
            _ = try only.httpRequest(with: plain)
            Issue.record("a leading '?' was accepted")
        } catch {
            guard case .invalidRequest(let message) = error else { throw error }
            #expect(message == "encodedQuery '?a=1' starts with '?': give the query without it")
        }
    }

    @Test func encodableQueryAndBodyAreEncoded() throws {
        struct Query: Encodable, Sendable { let page: Int; let tag: String }
        struct Body: Encodable, Sendable { let title: String }
        let endpoint = Endpoint<JSON>(path: "movies", method: .post, queryParametersEncodable: Query(page: 2, tag: "x"),
                                      bodyParametersEncodable: Body(title: "Dune"))
        let request = try endpoint.httpRequest(with: NetworkConfig(baseURL: "http://h/"))
        #expect(request.url == "http://h/movies?page=2&tag=x")
        #expect(request.body.map { String(decoding: $0, as: UTF8.self) } == #"{"title":"Dune"}"#)
        #expect(request.headers["content-type"] == "application/json")
    }

    @Test func encodableParametersKeepValueSemantics() throws {
        struct Query: Encodable, Sendable { let page: Int }
        struct Body: Encodable, Sendable { let title: String }
        let original = Endpoint<JSON>(path: "movies", method: .post, queryParametersEncodable: Query(page: 1))
        var copy = original
        copy.bodyParametersEncodable = Body(title: "Dune")  // the query stays, the original is untouched
        copy.queryParametersEncodable = Query(page: 2)
        let config = NetworkConfig(baseURL: "http://h/")
        #expect(try original.httpRequest(with: config).url == "http://h/movies?page=1")
        #expect(try original.httpRequest(with: config).body == nil)
        #expect(try copy.httpRequest(with: config).url == "http://h/movies?page=2")
        #expect(try copy.httpRequest(with: config).body.map { String(decoding: $0, as: UTF8.self) } == #"{"title":"Dune"}"#)
        copy.queryParametersEncodable = nil
        copy.bodyParametersEncodable = nil
        #expect(copy.queryParametersEncodable == nil && copy.bodyParametersEncodable == nil)
        #expect(try copy.httpRequest(with: config).url == "http://h/movies")
    }

    @Test func endpointHeadersOverrideConfigHeadersCaseInsensitively() throws {
        let request = try Endpoint<JSON>(path: "x", headerParameters: ["accept": "text/plain"]).httpRequest(with: config)
        #expect(request.headers.count == 1)
        #expect(request.headers["Accept"] == "text/plain")
    }

    @Test(arguments: ["//evil.example/x", "http://other/", "https:evil", "a\\b", "\\\\evil"])
    func aPathNeverChangesTheHost(path: String) {
        #expect {
            _ = try Endpoint<JSON>(path: path).httpRequest(with: config)
        } throws: { error in
            guard case NetworkError.urlGeneration = error else { return false }
            return true
        }
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\u{0}b", "a\nb"])
    func controlCharactersInAPathAreInvalidRequests(path: String) {
        #expect {
            _ = try Endpoint<JSON>(path: path).httpRequest(with: config)
        } throws: { error in
            guard case NetworkError.invalidRequest = error else { return false }
            return true
        }
    }

    /// Seconds a Swift caller sets beyond what the clock and libcurl can hold (a year)
    /// are an `invalidRequest` naming the option, not a trap converting them.
    @Test func secondsPastAYearOrNotANumberAreInvalidRequestsNamingTheOption() throws {
        func message(_ change: (inout RequestOptions) -> Void) -> String {
            var config = self.config
            change(&config.requestOptions)
            do {
                _ = try Endpoint<JSON>(path: "x").httpRequest(with: config)
                return "(built)"
            } catch {
                guard case NetworkError.invalidRequest(let message) = error else { return "\(error)" }
                return message
            }
        }
        #expect(message { $0.timeout = 1e300 }.hasPrefix("timeout must be a positive number of seconds"))
        #expect(message { $0.connectTimeout = .nan }.hasPrefix("connectTimeout must be"))
        #expect(message { $0.deadline = .infinity }.hasPrefix("deadline must be"))
        #expect(message { $0.retry.backoff = 1e9 }.hasPrefix("retry backoff must be"))
        #expect(message { $0.retry.maxBackoff = -1 }.hasPrefix("retry maxBackoff must be"))
        #expect(message { $0.timeout = HTTPRequest.maxSeconds } == "(built)")
        for options in [WebSocketOptions(idleTimeout: 1e300), WebSocketOptions(pingInterval: .infinity),
                        WebSocketOptions(closeTimeout: 4e7)] {
            #expect(throws: NetworkError.self) { try options.validate() }
        }
    }

    @Test func headerValuesWithCRLFAndBadNamesAreRejected() {
        #expect(throws: NetworkError.self) { try (["X": "a\r\nInjected: 1"] as HTTPHeaders).validate() }
        #expect(throws: NetworkError.self) { try (["Bad Name": "v"] as HTTPHeaders).validate() }
        #expect(throws: NetworkError.self) { try (["X:Y": "v"] as HTTPHeaders).validate() }
        #expect(throws: Never.self) { try (["X-Trace": "1", "Empty": ""] as HTTPHeaders).validate() }
    }

    @Test func formAndTextBodiesHaveTheirContentTypes() throws {
        let form = try Endpoint<JSON>(path: "f", method: .post, bodyParameters: ["a": "1 2", "b": ["x", "y"], "c": true],
                                      bodyEncoding: .form).httpRequest(with: config)
        #expect(form.body.map { String(decoding: $0, as: UTF8.self) } == "a=1%202&b=x&b=y&c=true")
        #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded")
        let text = try Endpoint<JSON>(path: "t", method: .put, bodyParameters: "plain", bodyEncoding: .text)
            .httpRequest(with: config)
        #expect(text.headers["Content-Type"] == "text/plain; charset=utf-8")
        #expect(throws: NetworkError.self) {
            try Endpoint<JSON>(path: "t", bodyParameters: ["a": 1], bodyEncoding: .text).httpRequest(with: config)
        }
    }

    @Test func fullPathsMustBeHTTP() throws {
        let ok = try Endpoint<JSON>(path: "http://127.0.0.1:9/x?y=1", isFullPath: true).httpRequest(with: config)
        #expect(ok.url == "http://127.0.0.1:9/x?y=1&api_key=k%201")
        #expect(throws: NetworkError.self) {
            try Endpoint<JSON>(path: "file:///etc/passwd", isFullPath: true).httpRequest(with: config)
        }
    }

    @Test func pathTemplatesEncodeEachParameterAsOneSegment() throws {
        #expect(try PathTemplate.render("movie/{id}/{slug}", params: ["id": 7, "slug": "a/b c"]) == "movie/7/a%2Fb%20c")
        #expect(throws: NetworkError.self) { try PathTemplate.render("movie/{id}", params: [:]) }
        #expect(throws: NetworkError.self) { try PathTemplate.render("movie", params: ["id": 1]) }
    }
}
