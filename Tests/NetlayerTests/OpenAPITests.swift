import Foundation
import Netlayer
import Testing

/// OpenAPI documents as the client's endpoint table, from Swift: operations called by
/// `operationId` through the facade, arguments serialized and checked against the
/// document, security filled in, discovery, and the published Petstore document.
@Suite struct OpenAPITests {
    private var base: String { TestServer.shared.baseURL }

    /// A small document exercising every parameter place and a JSON body.
    private static let catalog: JSON = [
        "openapi": "3.1.0",
        "info": ["title": "Catalog", "version": "1"],
        "servers": [["url": "/echo/v1"]],
        "security": [["key": []]],
        "components": [
            "securitySchemes": ["key": ["type": "apiKey", "name": "X-Key", "in": "header"],
                                "token": ["type": "http", "scheme": "bearer"]],
            "schemas": [
                "Item": ["type": "object", "required": ["name"],
                         "properties": ["name": ["type": "string", "minLength": 1],
                                        "size": ["enum": ["S", "M", "L"]],
                                        "parts": ["type": "array", "items": ["$ref": "#/components/schemas/Item"]]]],
            ],
        ],
        "paths": [
            "/items/{id}": [
                "parameters": [["name": "id", "in": "path", "required": true, "schema": ["type": "integer"]]],
                "get": ["operationId": "getItem",
                        "parameters": [["name": "fields", "in": "query", "explode": false,
                                        "schema": ["type": "array", "items": ["type": "string"]]],
                                       ["name": "X-Trace", "in": "header", "schema": ["type": "string"]],
                                       ["name": "session", "in": "cookie", "schema": ["type": "string"]]]],
                "put": ["operationId": "putItem", "security": [["token": []]],
                        "requestBody": ["required": true,
                                        "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Item"]]]]],
            ],
        ],
    ]

    private func client(validate: Bool = false) throws -> NetlayerClient {
        var config = ConfigDocument()
        config.network.baseURL = base
        let document = try OpenAPIDocument(Self.catalog)
        let credentials = try OpenAPICredentials(["key": "k-1", "token": "t-2"], schemes: document.securitySchemes)
        config.openAPI = OpenAPIConfig(document: document, credentials: credentials, validateResponses: validate)
        return try NetlayerClient(config: config)
    }

    @Test func anOperationIsCalledByItsID() async throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let echo = try await client.call("getItem", params: ["id": 7, "fields": ["a", "b c"], "X-Trace": "t",
                                                             "session": "s;1"]).value
        #expect(echo["method"] == "GET")
        #expect(echo["path"] == "/echo/v1/items/7")
        #expect(echo["query"] == "fields=a,b%20c")  // the comma between items literal (style form, explode false)
        #expect(echo["headers"]?["x-trace"] == "t")
        #expect(echo["headers"]?["x-key"] == "k-1")
        #expect(echo["headers"]?["cookie"] == "session=s%3B1")
    }

    @Test func aBodyIsCheckedThenSentAsJSON() async throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let body: JSON = ["name": "box", "parts": [["name": "lid", "size": "M"]]]
        let echo = try await client.call("putItem", params: ["id": 1], overlay: ["body": body]).value
        #expect(echo["method"] == "PUT")
        #expect(echo["headers"]?["authorization"] == "Bearer t-2")
        #expect(echo["headers"]?["x-key"] == nil)
        #expect(echo["body"] == #"{"name":"box","parts":[{"name":"lid","size":"M"}]}"#)
        for (bad, named) in [(["name": "box", "parts": [["name": ""]]] as JSON, "'/parts/0/name'"),
                             (["name": "box", "parts": [["name": "x", "size": "XL"]]], "'/parts/0/size'"),
                             (["parts": []], "name")] {
            do {
                _ = try await client.call("putItem", params: ["id": 1], overlay: ["body": bad])
                Issue.record("\(bad) was sent")
            } catch {
                #expect(error.kind == .invalidRequest)
                #expect(error.message.contains(named), "\(error.message)")
            }
        }
    }

    @Test func wrongParametersAreNamed() async throws {
        let client = try client()
        defer { _ = client.shutdown() }
        for (params, named) in [([:] as JSONObject, "'id'"), (["id": "seven"], "parameter 'id'"),
                                (["id": 1, "feilds": ["a"]], "did you mean 'fields'?"),
                                (["id": 1, "X-Trace": "a\r\nb"], "X-Trace")] {
            do {
                _ = try await client.call("getItem", params: params)
                Issue.record("\(params) was sent")
            } catch {
                #expect(error.kind == .invalidRequest)
                #expect(error.message.contains(named), "\(error.message)")
            }
        }
    }

    @Test func operationsAreListed() throws {
        let client = try client()
        defer { _ = client.shutdown() }
        let names = client.operations.compactMap { $0["name"]?.stringValue }
        #expect(names == ["getItem", "putItem"])
        let getItem = client.operations[0]
        #expect(getItem["params"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["id", "fields", "X-Trace", "session"])
        #expect(getItem["security"] == [["key"]])
        #expect(client.endpointNames == ["getItem", "putItem"])
    }

    @Test func thePetstoreDocumentLoadsFromYAML() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../openapi")
        let document = try OpenAPIDocument(contentsOfFile: folder.appendingPathComponent("petstore-openapi.yaml").path)
        #expect(document.operations.count == 19)
        #expect(document.serverIsAbsolute && document.serverPath == "/api/v3")
        let getPet = try #require(document.operation(named: "getPetById"))
        #expect(getPet.method == "GET" && getPet.path == "/pet/{petId}")
        #expect(getPet.parameters.map(\.name) == ["petId"])
        #expect(getPet.security == [["api_key"], ["petstore_auth"]])
        #expect(document.securitySchemes["api_key"]?.kind == .apiKey(name: "api_key", location: .header))
        let fromJSON = try OpenAPIDocument(contentsOfFile: folder.appendingPathComponent("petstore-openapi.json").path)
        #expect(fromJSON.operations.map(\.name) == document.operations.map(\.name))
    }

    @Test func getPetByIdFromThePetstoreDocument() async throws {
        struct Pet: Decodable, Sendable { let id: Int; let name: String }
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../openapi")
        let config = try ConfigDocument(json: """
            {"baseURL": "\(base)petstore/", "openapi": {"file": "\(folder.appendingPathComponent("petstore-openapi.yaml").path)",
             "credentials": {"api_key": "k-1"}, "validateResponses": true}}
            """)
        let client = try NetlayerClient(config: config)
        defer { _ = client.shutdown() }
        let pet = try await client.call("getPetById", params: ["petId": 7], as: Pet.self).value
        #expect(pet.id == 7 && pet.name == "doggie")
        do {
            _ = try await client.call("getPetById", params: ["petId": 666])
            Issue.record("a Pet that breaks its schema was accepted")
        } catch {
            #expect(error.kind == .parsing && error.message.contains("'/id'"), "\(error.message)")
        }
    }

    @Test func brokenDocumentsAreRefusedWithTheirFault() {
        let cases: [(JSON, String)] = [
            (["swagger": "2.0"], "Swagger 2.0"),
            (["openapi": "4.0.0"], "3.0 and 3.1"),
            (["openapi": "3.0.3", "paths": ["/a/{id}": ["get": ["operationId": "a"]]]], "no path parameter for '{id}'"),
            (["openapi": "3.0.3", "paths": ["/a": ["get": ["operationId": "a", "parameters": [["$ref": "other.yaml#/p"]]]]]],
             "another file"),
            (["openapi": "3.0.3", "paths": ["/a": ["get": ["operationId": "x"]], "/b": ["get": ["operationId": "x"]]]],
             "used twice"),
        ]
        for (json, expected) in cases {
            do {
                _ = try OpenAPIDocument(json)
                Issue.record("\(json) was accepted")
            } catch {
                let message = DataTransferError.networkFailure(error).message
                #expect(message.contains(expected), "\(message)")
            }
        }
    }

    @Test func aDocumentIsMeasuredAsJSONTextWithRepeatsCounted() {
        // 128 references to one 1 MiB string: little memory, 128 MiB as text.
        var bomb: JSON = .string(String(repeating: "x", count: 1 << 20))
        for _ in 0..<7 { bomb = [bomb, bomb] }
        // The thread's CPU time, not the wall clock: other suites running beside this one
        // must not fail it. A debug build reads the 64 MiB it measures before it stops in
        // about 2.5 s; writing the 128 MiB of text would take several times that.
        func cpuSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        let started = cpuSeconds()
        do {
            do throws(NetworkError) {
                _ = try OpenAPIDocument(["openapi": "3.1.0", "x-bomb": bomb, "paths": [:]])
                Issue.record("a document of 128 MiB as text was accepted")
            } catch {
                #expect(DataTransferError.networkFailure(error).message
                    == "openapi document is larger than 67108864 bytes (64 MiB) as JSON text, YAML aliases expanded; an OpenAPI document may be at most that")
            }
        }
        #expect(cpuSeconds() - started < 8)
        // The document's security repeats in each operation's description: 70 operations
        // of a 1 MiB requirement are 70 MiB to list, though the document holds 1 MiB.
        let scheme = String(repeating: "s", count: 1 << 20)
        var paths = JSONObject()
        for i in 0..<70 { paths["/p\(i)"] = ["get": ["operationId": .string("p\(i)")]] }
        do throws(NetworkError) {
            _ = try OpenAPIDocument(["openapi": "3.1.0", "security": [[scheme: []]], "paths": .object(paths)])
            Issue.record("a document whose operations list 70 MiB was accepted")
        } catch {
            #expect(DataTransferError.networkFailure(error).message.contains("add up to more than 67108864 bytes"))
        }
    }
}
