import Testing
@testable import Netlayer

/// `discriminator` beside `oneOf`/`anyOf`: the tag picks the branch; a tag that names
/// no schema leaves the branches to decide, as published documents expect.
@Suite struct SchemaDiscriminatorTests {
    /// Open object branches: every pet matches both Cat and Dog without the discriminator.
    static let document: JSON = [
        "openapi": "3.0.3",
        "components": [
            "schemas": [
                "Cat": ["type": "object", "required": ["petType"],
                        "properties": ["petType": ["type": "string"], "meow": ["type": "boolean"]]],
                "Dog": ["type": "object", "required": ["petType"],
                        "properties": ["petType": ["type": "string"], "bark": ["type": "boolean"]]],
                "Bird": ["type": "object", "required": ["petType", "wings"],
                         "properties": ["petType": ["type": "string"], "wings": ["type": "integer"]]],
                // A discriminator whose mapping leads back to itself.
                "Loop": ["oneOf": [["$ref": "#/components/schemas/Cat"]],
                         "discriminator": ["propertyName": "petType", "mapping": ["loop": "Loop"]]],
            ],
        ],
    ]
    let validator = SchemaValidator(document: Self.document)
    static let branches: JSON = [["$ref": "#/components/schemas/Cat"], ["$ref": "#/components/schemas/Dog"]]

    func violation(_ value: JSON, _ schema: JSON) -> SchemaViolation? {
        validator.firstViolation(of: value, against: schema, direction: .request)
    }

    @Test func theTagPicksTheOneBranchChecked() {
        let plain: JSON = ["oneOf": Self.branches]
        let implicit: JSON = ["oneOf": Self.branches, "discriminator": ["propertyName": "petType"]]
        let cat: JSON = ["petType": "Cat", "meow": true]
        #expect(violation(cat, plain)?.message == "matches 2 of the 2 schemas of oneOf (#1, #2); it must match exactly one")
        #expect(violation(cat, implicit) == nil)
        #expect(violation(["petType": "Dog", "bark": "loud"], implicit)
            == SchemaViolation(pointer: "/bark", message: "must be a boolean, not a string"))
        let anyOf: JSON = ["anyOf": Self.branches, "discriminator": ["propertyName": "petType"]]
        #expect(violation(["petType": "Cat", "meow": 1], anyOf)
            == SchemaViolation(pointer: "/meow", message: "must be a boolean, not a number"))
    }

    @Test func theMappingNamesSchemasByRefOrByName() {
        let mapped: JSON = ["oneOf": Self.branches, "discriminator": ["propertyName": "petType", "mapping": [
            "cat": "#/components/schemas/Cat", "dog": "Dog", "bird": "#/components/schemas/Bird",
        ]]]
        #expect(violation(["petType": "cat", "meow": false], mapped) == nil)
        #expect(violation(["petType": "dog", "bark": 3], mapped)?.pointer == "/bark")
        // A mapped schema outside the branches is still the one checked.
        #expect(violation(["petType": "bird"], mapped)
            == SchemaViolation(pointer: "", message: "is missing required property 'wings'"))
        #expect(violation(["petType": "bird", "wings": 2], mapped) == nil)
    }

    @Test func aTagThatNamesNothingLeavesTheBranchesToDecide() {
        // OpenAI's messages discriminate on "role", whose values are no schema's name.
        let byEnum: JSON = ["oneOf": [
            ["type": "object", "properties": ["role": ["enum": ["user"]], "content": ["type": "string"]]],
            ["type": "object", "properties": ["role": ["enum": ["system"]], "content": ["type": "string"]]],
        ], "discriminator": ["propertyName": "role"]]
        #expect(violation(["role": "user", "content": "hi"], byEnum) == nil)
        #expect(violation(["role": "robot"], byEnum)?.message.hasPrefix("matches none of the 2 schemas of oneOf") == true)
        let implicit: JSON = ["oneOf": Self.branches, "discriminator": ["propertyName": "petType"]]
        #expect(violation(["petType": "Lizard"], implicit)?.message.hasPrefix("matches 2 of the 2") == true)
        #expect(violation(["petType": 7], implicit)?.message.hasPrefix("matches none") == true)
        #expect(violation(["meow": true], implicit)?.message.hasPrefix("matches none") == true)
        #expect(violation("Cat", implicit)?.message.hasPrefix("matches none") == true)
        let dangling: JSON = ["oneOf": Self.branches, "discriminator": ["propertyName": "petType", "mapping": [
            "fish": "#/components/schemas/Fish", "far": "other.yaml#/Cat",
        ]]]
        #expect(violation(["petType": "fish"], dangling)?.message.hasPrefix("matches 2 of the 2") == true)
        #expect(violation(["petType": "far"], dangling)?.message.hasPrefix("matches 2 of the 2") == true)
    }

    @Test func aMappingThatLeadsBackIsReportedNotFollowedForever() {
        let loop: JSON = ["$ref": "#/components/schemas/Loop"]
        #expect(violation(["petType": "loop"], loop)?.message.contains("refers back to itself") == true)
        #expect(violation(["petType": "Cat"], loop) == nil)
    }
}
