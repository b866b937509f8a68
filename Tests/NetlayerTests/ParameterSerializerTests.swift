import Testing
@testable import Netlayer

/// Every cell of the OpenAPI "Style Examples" table (3.1.1, which corrects 3.0.3's label
/// row to RFC 6570), for a parameter named `color`. Query cells are the query as it is
/// sent: the pairs as the URL builder percent-encodes them, a form member not exploded
/// as `joinedFormMember` writes it, with the commas between items literal.
@Suite struct ParameterSerializerTests {
    static let string: JSON = "blue"
    static let array: JSON = ["blue", "black", "brown"]
    static let object: JSON = ["R": 100, "G": 200, "B": 150]

    /// (style, explode, empty, string, array, object); nil where the table says n/a.
    static let pathRows: [(ParameterStyle, Bool, String?, String, String, String)] = [
        (.matrix, false, ";color", ";color=blue", ";color=blue,black,brown", ";color=R,100,G,200,B,150"),
        (.matrix, true, ";color", ";color=blue", ";color=blue;color=black;color=brown", ";R=100;G=200;B=150"),
        (.label, false, ".", ".blue", ".blue,black,brown", ".R,100,G,200,B,150"),
        (.label, true, ".", ".blue", ".blue.black.brown", ".R=100.G=200.B=150"),
        (.simple, false, "", "blue", "blue,black,brown", "R,100,G,200,B,150"),
        (.simple, true, "", "blue", "blue,black,brown", "R=100,G=200,B=150"),
    ]

    static let queryRows: [(ParameterStyle, Bool, String?, String?, String?, String?)] = [
        (.form, false, "color=", "color=blue", "color=blue,black,brown", "color=R,100,G,200,B,150"),
        (.form, true, "color=", "color=blue", "color=blue&color=black&color=brown", "R=100&G=200&B=150"),
        (.spaceDelimited, false, nil, nil, "color=blue%20black%20brown", "color=R%20100%20G%20200%20B%20150"),
        (.spaceDelimited, true, nil, nil, nil, nil),
        (.pipeDelimited, false, nil, nil, "color=blue%7Cblack%7Cbrown", "color=R%7C100%7CG%7C200%7CB%7C150"),
        (.pipeDelimited, true, nil, nil, nil, nil),
        (.deepObject, false, nil, nil, nil, nil),
        (.deepObject, true, nil, nil, nil, "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
    ]

    static func rendered(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// The query a parameter sends, as an OpenAPI call writes it.
    static func sent(name: String, _ value: JSON, _ style: ParameterStyle, explode: Bool) throws -> String {
        if let member = try ParameterSerializer.joinedFormMember(name: name, value: value, style: style, explode: explode) {
            return member
        }
        return HTTPRequest.QueryEncoding.encode(try ParameterSerializer.queryPairs(name: name, value: value, style: style, explode: explode))
    }

    /// A comma inside an item is escaped and one between items is not, so a server that
    /// splits before it decodes (as RFC 6570 and OpenAPI's generated servers do) gets the
    /// items back.
    @Test func aFormArrayNotExplodedKeepsItsSeparatorsLiteralAndEscapesItsItems() throws {
        #expect(try Self.sent(name: "c d", ["a,b", "x y", "é&="], .form, explode: false) == "c%20d=a%2Cb,x%20y,%C3%A9%26%3D")
        #expect(try Self.sent(name: "o", ["k,1": "v,2"], .form, explode: false) == "o=k%2C1,v%2C2")
        #expect(try Self.sent(name: "s", "a,b", .form, explode: false) == "s=a%2Cb")  // a scalar has no items
        #expect(try Self.sent(name: "e", ["a,b"], .form, explode: true) == "e=a%2Cb")
    }

    @Test func pathCellsOfTheStyleExamplesTable() throws {
        for (style, explode, empty, string, array, object) in Self.pathRows {
            func path(_ value: JSON) throws -> String {
                try ParameterSerializer.pathText(name: "color", value: value, style: style, explode: explode)
            }
            let row = "\(style) explode=\(explode)"
            if let empty {
                #expect(try path("") == empty, "\(row) empty")
                #expect(try path(nil) == empty, "\(row) undefined")
            }
            #expect(try path(Self.string) == string, "\(row) string")
            #expect(try path(Self.array) == array, "\(row) array")
            #expect(try path(Self.object) == object, "\(row) object")
        }
    }

    @Test func queryCellsOfTheStyleExamplesTable() throws {
        for (style, explode, empty, string, array, object) in Self.queryRows {
            func query(_ value: JSON) throws -> String {
                try Self.sent(name: "color", value, style, explode: explode)
            }
            let row = "\(style) explode=\(explode)"
            if let empty {
                #expect(try query("") == empty, "\(row) empty")
                #expect(try query(nil) == empty, "\(row) undefined")
            }
            if let string { #expect(try query(Self.string) == string, "\(row) string") }
            if let array { #expect(try query(Self.array) == array, "\(row) array") }
            if let object { #expect(try query(Self.object) == object, "\(row) object") }
        }
    }

    @Test func headersAreSimpleAndCookiesFormWithoutEncoding() throws {
        for (style, explode, empty, string, array, object) in Self.pathRows where style == .simple {
            #expect(try ParameterSerializer.headerText(name: "color", value: "", explode: explode) == empty)
            #expect(try ParameterSerializer.headerText(name: "color", value: Self.string, explode: explode) == string)
            #expect(try ParameterSerializer.headerText(name: "color", value: Self.array, explode: explode) == array)
            #expect(try ParameterSerializer.headerText(name: "color", value: Self.object, explode: explode) == object)
        }
        #expect(try ParameterSerializer.headerText(name: "X", value: "a b/ü", explode: false) == "a b/ü")
        for (style, explode, empty, string, array, object) in Self.queryRows where style == .form {
            func cookie(_ value: JSON) throws -> String {
                Self.rendered(try ParameterSerializer.cookiePairs(name: "color", value: value, explode: explode))
            }
            #expect(try cookie(nil) == empty)
            #expect(try cookie(Self.string) == string)
            #expect(try cookie(Self.array) == array)
            #expect(try cookie(Self.object) == object)
        }
    }

    @Test func pathValuesArePercentEncodedButTheStyleDelimitersAreNot() throws {
        func path(_ value: JSON, _ style: ParameterStyle = .simple, explode: Bool = false, name: String = "id") throws -> String {
            try ParameterSerializer.pathText(name: name, value: value, style: style, explode: explode)
        }
        #expect(try path("a/b?c#d%e f") == "a%2Fb%3Fc%23d%25e%20f")
        #expect(try path("é€") == "%C3%A9%E2%82%AC")
        #expect(try path("-._~AZaz09") == "-._~AZaz09")
        #expect(try path(";=,.&+") == "%3B%3D%2C.%26%2B")
        #expect(try path(["a,b", "c/d"]) == "a%2Cb,c%2Fd")
        #expect(try path(["k=y": "v;w"], .matrix, explode: true) == ";k%3Dy=v%3Bw")
        #expect(try path("x y", .matrix, name: "a b") == ";a%20b=x%20y")
        #expect(try path(["a.b", "c"], .label, explode: true) == ".a.b.c")
    }

    @Test func scalarsAreWrittenAsJSONWritesThem() throws {
        func simple(_ value: JSON) throws -> String {
            try ParameterSerializer.pathText(name: "n", value: value, style: .simple, explode: false)
        }
        #expect(try simple(7) == "7")
        #expect(try simple(.int(-9_223_372_036_854_775_808)) == "-9223372036854775808")
        #expect(try simple(1.5) == "1.5")
        #expect(try simple(.number("18446744073709551616")) == "18446744073709551616")
        #expect(try simple(true) == "true")
        #expect(try simple([false, nil, 2.0]) == "false,,2")
        #expect(Self.rendered(try ParameterSerializer.queryPairs(name: "q", value: "a&b=c", style: .form, explode: true)) == "q=a&b=c")
    }

    @Test func whatNoStyleCanWriteIsRefusedNamingTheParameter() {
        func refusal(_ body: () throws -> Void) -> String? {
            do {
                try body()
                return nil
            } catch {
                if case .invalidRequest(let message)? = error as? NetworkError { return message }
                return "not invalidRequest: \(error)"
            }
        }
        #expect(refusal { _ = try ParameterSerializer.pathText(name: "ids", value: [[1]], style: .simple, explode: false) }
            == "parameter 'ids': item 0 is an array; no parameter style serializes an array or object nested in another")
        #expect(refusal { _ = try ParameterSerializer.queryPairs(name: "f", value: ["a": ["b": 1]], style: .deepObject, explode: true) }
            == "parameter 'f': property 'a' is an object; no parameter style serializes an array or object nested in another")
        #expect(refusal { _ = try ParameterSerializer.queryPairs(name: "f", value: [1], style: .deepObject, explode: true) }
            == "parameter 'f': style deepObject needs an object, not an array")
        #expect(refusal { _ = try ParameterSerializer.queryPairs(name: "f", value: ["a": 1], style: .pipeDelimited, explode: true) }?
            .hasPrefix("parameter 'f': style 'pipeDelimited' cannot explode an object") == true)
        #expect(refusal { _ = try ParameterSerializer.pathText(name: "p", value: 1, style: .form, explode: true) }?
            .hasPrefix("parameter 'p': style 'form' is not one a path parameter can have") == true)
        #expect(refusal { _ = try ParameterSerializer.queryPairs(name: "q", value: 1, style: .label, explode: true) }?
            .hasPrefix("parameter 'q': style 'label' is not one a query parameter can have") == true)
        #expect(refusal { _ = try ParameterSerializer.headerText(name: "X-Trace", value: "a\r\nInjected: 1", explode: false) }
            == "parameter 'X-Trace': a header cannot contain CR, LF or NUL")
        #expect(refusal { _ = try ParameterSerializer.headerText(name: "X-Trace", value: ["a\u{0}"], explode: false) } != nil)
        #expect((try? ParameterSerializer.cookiePairs(name: "sid", value: "a; admin=1", explode: true))?.map(\.1)
            == ["a%3B%20admin=1"])
        #expect(refusal { _ = try ParameterSerializer.cookiePairs(name: "s;d", value: "a", explode: true) }?
            .hasPrefix("parameter 's;d': cookie name 's;d' is not a token") == true)
        // Commas in values are encoded; the commas the style joins items with are not.
        #expect((try? ParameterSerializer.cookiePairs(name: "sid", value: "a,b", explode: true))?.map(\.1) == ["a%2Cb"])
        #expect((try? ParameterSerializer.cookiePairs(name: "sid", value: ["a,b", "c"], explode: false))?.map(\.1)
            == ["a%2Cb,c"])
        #expect((try? ParameterSerializer.cookiePairs(name: "sid", value: ["k,1": "v\"\\"], explode: false))?.map(\.1)
            == ["k%2C1,v%22%5C"])
        #expect((try? ParameterSerializer.cookiePairs(name: "sid", value: "a\nb", explode: true))?.map(\.1) == ["a%0Ab"])
    }

    @Test func stylesByLocationAndDefaultExplode() {
        let allowed = ["path": ["matrix", "label", "simple"], "query": ["form", "spaceDelimited", "pipeDelimited", "deepObject"],
                       "header": ["simple"], "cookie": ["form"], "body": []]
        for (location, styles) in allowed {
            for style in ParameterStyle.allCases {
                #expect(ParameterSerializer.allows(style, in: location) == styles.contains(style.rawValue), "\(style) in \(location)")
            }
        }
        #expect(ParameterStyle.allCases.filter { ParameterSerializer.defaultExplode(for: $0) } == [.form])
        #expect(Self.rendered(try! ParameterSerializer.queryPairs(name: "f", value: ["a": 1], style: .deepObject, explode: false)) == "f[a]=1")
        #expect(try! ParameterSerializer.queryPairs(name: "f", value: nil, style: .deepObject, explode: true).isEmpty)
        #expect(Self.rendered(try! ParameterSerializer.queryPairs(name: "t", value: [], style: .form, explode: true)) == "")
        #expect(Self.rendered(try! ParameterSerializer.queryPairs(name: "t", value: [], style: .form, explode: false)) == "t=")
    }
}
