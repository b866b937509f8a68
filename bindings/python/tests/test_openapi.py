"""The config's ``openapi`` key from Python: every operation of the published Swagger
Petstore 3 document called against the test server with arguments generated from its
own schemas, wrong arguments named with nothing sent, credentials filled in and kept out
of logs, discovery, and a large real API description (OpenAI's, 3.4 MB) loaded."""

from __future__ import annotations

import gzip
import json
import logging
import re
import time
from pathlib import Path
from typing import Any, Dict, Iterator
from urllib.parse import quote

import pytest

import netlayer

SPECS = Path(__file__).resolve().parents[3] / "Tests" / "openapi"
PETSTORE_YAML = SPECS / "petstore-openapi.yaml"
#: The same document as PyYAML reads it: the test resolves its schemas from this.
PETSTORE = json.loads((SPECS / "petstore-openapi.json").read_text())


@pytest.fixture
def petstore(base_url: str) -> Iterator[netlayer.Client]:
    config = {"base_url": base_url + "petstore/",
              "openapi": {"file": str(PETSTORE_YAML),
                          "credentials": {"api_key": "k-123", "petstore_auth": "tok-9"}}}
    with netlayer.Client(config, timeout=10) as client:
        yield client


def _resolve(schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in schema:
        node: Any = PETSTORE
        for token in schema["$ref"].lstrip("#/").split("/"):
            node = node[token]
        schema = node
    return schema


def _sample(schema: Dict[str, Any]) -> Any:
    """A value the schema accepts, built from the schema alone."""
    schema = _resolve(schema)
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type", "object")
    if kind == "integer":
        return 7
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "string":
        return "x y/z" if schema.get("format") != "binary" else "AAEC"
    if kind == "array":
        return [_sample(schema.get("items", {}))]
    return {name: _sample(sub) for name, sub in schema.get("properties", {}).items()}


def test_every_petstore_operation_is_callable(petstore: netlayer.Client) -> None:
    operations = [op for op in petstore.operations() if op["source"] == "openapi"]
    assert len(operations) == 19
    for op in operations:
        params = {p["name"]: _sample(p["schema"]) for p in op["params"]}
        keys: Dict[str, Any] = {}
        if op["body"] is not None:
            keys["body"] = _sample(op["body"]["schema"])
        response = petstore.call(op["name"], params, **keys)
        assert response.status == 200, op["name"]
        expected_path = "/petstore" + re.sub(r"\{([^}]+)\}", lambda m: quote(str(params[m.group(1)]), safe=""), op["path"])
        value = response.value
        if isinstance(value, dict) and "method" in value:  # the echo: what went on the wire
            assert value["method"] == op["method"], op["name"]
            assert value["path"] == expected_path, op["name"]
            for p in op["params"]:
                if p["in"] == "query":
                    assert p["name"] in value["args"], (op["name"], p["name"])
                if p["in"] == "header":
                    assert value["headers"][p["name"].lower()] == str(params[p["name"]])
            if op["body"] is not None:
                assert value["bodyLength"] > 0, op["name"]


def test_get_pet_by_id(petstore: netlayer.Client) -> None:
    pet = petstore.call("getPetById", {"petId": 7}).json()
    assert pet["id"] == 7 and pet["name"] == "doggie"
    listed = petstore.call("findPetsByStatus", {"status": "sold"}).value
    assert listed[0]["status"] == "sold"


def _requests_seen(base_url: str) -> int:
    with netlayer.Client(base_url) as client:
        return int(client.get("stats").value["requests"])


@pytest.mark.parametrize(("name", "params", "body", "named"), [
    ("getPetById", {}, None, "'petId'"),
    ("getPetById", {"petId": "7"}, None, "parameter 'petId'"),
    ("getPetById", {"pet_id": 7}, None, "did you mean 'petId'?"),
    ("findPetsByStatus", {"status": "asleep"}, None, "parameter 'status'"),
    ("findPetsByTags", {"tags": "one"}, None, "parameter 'tags'"),
    ("addPet", {}, {"name": "rex"}, "photoUrls"),
    ("addPet", {}, {"name": "rex", "photoUrls": [], "tags": [{"id": "t"}]}, "'/tags/0/id'"),
    ("placeOrder", {}, {"quantity": "two"}, "'/quantity'"),
    ("createUsersWithListInput", {}, [{"id": 1}, {"userStatus": "x"}], "'/1/userStatus'"),
])
def test_wrong_arguments_fail_before_anything_is_sent(
        petstore: netlayer.Client, base_url: str, name: str, params: Dict[str, Any], body: Any, named: str) -> None:
    before = _requests_seen(base_url)
    keys: Dict[str, Any] = {} if body is None else {"json": body}
    with pytest.raises(netlayer.InvalidRequestError) as failure:
        petstore.call(name, params, **keys)
    assert named in str(failure.value)
    assert _requests_seen(base_url) == before + 1  # only the /stats call itself


def test_responses_are_checked_when_asked(base_url: str) -> None:
    config = {"baseURL": base_url + "petstore/", "openapi": {"file": str(PETSTORE_YAML), "validate_responses": True}}
    with netlayer.Client(config) as client:
        assert client.call("getPetById", {"petId": 1}).value["id"] == 1
        with pytest.raises(netlayer.ParsingError) as failure:
            client.call("getPetById", {"petId": 666})
        assert "'/id'" in str(failure.value)


def test_api_keys_are_redacted_in_logs(base_url: str, caplog: pytest.LogCaptureFixture) -> None:
    config = {"baseURL": base_url + "petstore/", "log": {"level": "debug"},
              "openapi": {"file": str(PETSTORE_YAML), "credentials": {"api_key": "canary-3f9"}}}
    with caplog.at_level(logging.DEBUG, logger="netlayer"):
        with netlayer.Client(config) as client:
            echo = client.call("getInventory").value
    assert echo["headers"]["api_key"] == "canary-3f9"
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "getInventory" in logged or "/store/inventory" in logged
    assert "canary-3f9" not in logged
    assert "<redacted>" in logged  # the header was logged, without its value


def test_the_config_names_what_is_wrong(base_url: str) -> None:
    with pytest.raises(netlayer.InvalidRequestError, match="did you mean 'petstore_auth'"):
        netlayer.Client({"baseURL": base_url, "openapi": {"file": str(PETSTORE_YAML),
                                                          "credentials": {"petstore_oauth": "t"}}})
    with pytest.raises(netlayer.InvalidRequestError, match="must be .*username.*password"):
        netlayer.Client({"baseURL": base_url, "openapi": {"document": {
            "openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},
            "components": {"securitySchemes": {"basic": {"type": "http", "scheme": "basic"}}}},
            "credentials": {"basic": "user:pass"}}})


def test_openapi_credentials_are_checked_as_the_configs_auth_is(base_url: str) -> None:
    # config auth {"bearer": "a b"} is refused; the same token through a security scheme too
    config = {"baseURL": base_url + "petstore/",
              "openapi": {"file": str(PETSTORE_YAML), "credentials": {"petstore_auth": "a b"}}}
    with netlayer.Client(config) as client:
        with pytest.raises(netlayer.InvalidRequestError,
                           match="credentials key 'petstore_auth': a bearer token is printable ASCII without spaces"):
            client.call("findPetsByStatus", {"status": "available"})


def test_basic_credentials_and_yaml_text(base_url: str) -> None:
    document = """
openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: /echo}]
security: [{basic: []}]
components:
  securitySchemes:
    basic: {type: http, scheme: basic}
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: filter, in: query, style: deepObject, explode: true, schema: {type: object}}
"""
    config = {"baseURL": base_url, "openapi": {"document": document,
                                               "credentials": {"basic": {"username": "u", "password": "p"}}}}
    with netlayer.Client(config) as client:
        echo = client.call("getThing", {"id": "a/b", "filter": {"colour": "red"}}).value
    assert echo["path"] == "/echo/things/a%2Fb"
    assert echo["args"] == {"filter[colour]": ["red"]}
    assert echo["headers"]["authorization"] == "Basic dTpw"


def test_form_parameters_not_exploded_send_their_commas_literal(base_url: str) -> None:
    # As the specification's style examples and RFC 6570 write them: a server that
    # splits on "," before it decodes gets the items back, "a,b" among them.
    document = """
openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: /echo}]
paths:
  /colors:
    get:
      operationId: colors
      parameters:
        - {name: color, in: query, style: form, explode: false, schema: {type: array, items: {type: string}}}
        - {name: rgb, in: query, style: form, explode: false, schema: {type: object}}
        - {name: tag, in: query, schema: {type: array, items: {type: string}}}
        - {name: page, in: query, schema: {type: integer}}
"""
    with netlayer.Client({"baseURL": base_url, "openapi": {"document": document}}) as client:
        echo = client.call("colors", {"color": ["blue", "a,b", "x y"], "rgb": {"R": 100, "G": 200},
                                      "tag": ["t,1", "t2"], "page": 2}).value
        assert echo["query"] == "color=blue,a%2Cb,x%20y&rgb=R,100,G,200&tag=t%2C1&tag=t2&page=2"
        assert [item.replace("%2C", ",").replace("%20", " ") for item in echo["query"].split("&")[0][6:].split(",")] \
            == ["blue", "a,b", "x y"]
        # a caller's query key replaces a parameter of the same name, as it does others
        echo = client.call("colors", {"color": ["blue"], "page": 2}, query={"color": "red", "page": 3}).value
        assert echo["args"] == {"color": ["red"], "page": ["3"]}


def test_a_large_real_api_description(base_url: str, tmp_path: Path) -> None:
    spec = tmp_path / "openai-openapi.json"
    spec.write_bytes(gzip.decompress((SPECS / "openai-openapi.json.gz").read_bytes()))
    started = time.monotonic()
    config = {"baseURL": base_url + "echo/", "openapi": {"file": str(spec), "credentials": {"ApiKeyAuth": "sk-canary"}}}
    with netlayer.Client(config) as client:
        loaded = time.monotonic() - started
        names = {op["name"] for op in client.operations()}
        assert len(names) >= 280 and "createChatCompletion" in names
        echo = client.call("retrieveModel", {"model": "gpt-4o"}).value
        assert echo["path"] == "/echo/models/gpt-4o"
        assert echo["headers"]["authorization"] == "Bearer sk-canary"
        with pytest.raises(netlayer.InvalidRequestError, match="createChatCompletion.*body"):
            client.call("createChatCompletion", json={"model": "gpt-4o"})
        # Its messages' discriminator ("role") names no schema: each branch's enum decides.
        chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
        assert json.loads(client.call("createChatCompletion", json=chat).value["body"]) == chat
        with pytest.raises(netlayer.InvalidRequestError, match="'/messages/0'.*oneOf"):
            client.call("createChatCompletion", json={"model": "gpt-4o", "messages": [{"role": "robot"}]})
    assert loaded < 30, f"loading took {loaded:.1f} s"


def test_a_discriminator_picks_the_schema_of_a_body(base_url: str) -> None:
    document = """
openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: /echo}]
paths:
  /pets:
    post:
      operationId: addPet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf: [{$ref: "#/components/schemas/Cat"}, {$ref: "#/components/schemas/Dog"}]
              discriminator: {propertyName: petType, mapping: {cat: Cat, dog: "#/components/schemas/Dog"}}
components:
  schemas:
    Cat: {type: object, required: [petType], properties: {petType: {type: string}, meow: {type: boolean}}}
    Dog: {type: object, required: [petType], properties: {petType: {type: string}, bark: {type: boolean}}}
"""
    with netlayer.Client({"baseURL": base_url, "openapi": {"document": document}}) as client:
        # Both open branches accept a cat: without the discriminator, oneOf would refuse it.
        cat = {"petType": "cat", "meow": True}
        assert json.loads(client.call("addPet", json=cat).value["body"]) == cat
        before = _requests_seen(base_url)
        with pytest.raises(netlayer.InvalidRequestError, match="body at '/bark' must be a boolean"):
            client.call("addPet", json={"petType": "dog", "bark": "loud"})
        assert _requests_seen(base_url) == before + 1  # only the /stats call itself


def _many_operations(count: int) -> Dict[str, Any]:
    """A document of `count` operations, each with a parameter and a response schema that
    are `$ref`s to components of their own: `count` members in each components map."""
    paths: Dict[str, Any] = {}
    parameters: Dict[str, Any] = {}
    schemas: Dict[str, Any] = {}
    for i in range(count):
        ok = {"description": "ok", "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/S{i}"}}}}
        paths[f"/r{i}/{{id}}"] = {"get": {"operationId": f"op{i}", "parameters": [{"$ref": f"#/components/parameters/P{i}"}],
                                          "responses": {"200": ok}}}
        parameters[f"P{i}"] = {"name": "id", "in": "path", "required": True, "schema": {"$ref": f"#/components/schemas/S{i}"}}
        schemas[f"S{i}"] = {"type": "integer"}
    return {"openapi": "3.1.0", "info": {"title": "many", "version": "1"}, "paths": paths,
            "components": {"parameters": parameters, "schemas": schemas}}


def test_fifty_thousand_operations_load_in_linear_time(base_url: str) -> None:
    text = json.dumps(_many_operations(50_000))
    started = time.monotonic()
    with netlayer.Client({"baseURL": base_url + "echo/", "openapi": {"document": text}}) as client:
        loaded = time.monotonic() - started
        assert client.call("op49999", {"id": 5}).value["path"] == "/echo/r49999/5"
        with pytest.raises(netlayer.InvalidRequestError, match="parameter 'id'"):
            client.call("op7", {"id": "x"})
    assert loaded < 5, f"loading took {loaded:.1f} s"


def test_what_the_operations_list_is_bounded(base_url: str) -> None:
    # The document's security repeats in each operation's description: 70 operations of a
    # 1 MiB requirement would make nl_client_operations write 70 MiB from a 1 MiB document.
    paths = {f"/p{i}": {"get": {"operationId": f"p{i}"}} for i in range(70)}
    document = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
                "security": [{"s" * (1 << 20): []}], "paths": paths}
    with pytest.raises(netlayer.InvalidRequestError, match="add up to more than 67108864 bytes"):
        netlayer.Client({"baseURL": base_url, "openapi": {"document": document}})
    # Ten of them are listed in full.
    document["paths"] = {key: paths[key] for key in list(paths)[:10]}
    with netlayer.Client({"baseURL": base_url, "openapi": {"document": document}}) as client:
        assert len(client.operations()) == 10


def _document(paths: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, **extra}


def _json_stub(path: str, value: Any) -> Dict[str, Any]:
    """A stub rule answering `value` as JSON text (a string body is otherwise text/plain)."""
    return {"path": path, "headers": {"Content-Type": "application/json"}, "body": json.dumps(value)}


def _get(operation_id: str, schema: Dict[str, Any]) -> Dict[str, Any]:
    return {"get": {"operationId": operation_id, "responses": {"200": {
        "description": "ok", "content": {"application/json": {"schema": schema}}}}}}


def test_a_document_of_many_patterns_loads_without_compiling_them() -> None:
    # RE2 programs of up to 1 MiB each: compiled when a check first uses one, not at load.
    schemas = {"s%d" % i: {"type": "string", "pattern": "\\p{L}{50}%d" % i} for i in range(4000)}
    document = _document({"/x": _get("x", {"$ref": "#/components/schemas/s7"})},
                         components={"schemas": schemas})
    started = time.monotonic()
    with netlayer.Client({"baseURL": "http://127.0.0.1:9/", "stub": [_json_stub("/x", "é" * 50 + "7")],
                          "openapi": {"document": document, "validateResponses": True}}) as client:
        assert time.monotonic() - started < 3
        assert client.call("x").value == "é" * 50 + "7"
    with netlayer.Client({"baseURL": "http://127.0.0.1:9/", "stub": [_json_stub("/x", "a7")],
                          "openapi": {"document": document, "validateResponses": True}}) as client:
        with pytest.raises(netlayer.ParsingError, match="must match the pattern"):
            client.call("x")


def test_checking_a_long_string_against_many_schemas_is_bounded_in_time() -> None:
    # 10^4 copies of {minLength: 1} that YAML aliases make without a $ref to remember:
    # each reads the whole 1 MB string.
    lines = ["openapi: 3.0.3", "info: {title: t, version: '1'}", "x-defs:", "  l0: &l0 {minLength: 1}"]
    for level in range(1, 5):
        lines.append("  l%d: &l%d {allOf: [%s]}" % (level, level, ", ".join(["*l%d" % (level - 1)] * 10)))
    lines += ["paths:", "  /big:", "    get:", "      operationId: big", "      responses:", "        '200':",
              "          description: ok", "          content:", "            application/json:",
              "              schema: *l4"]
    started = time.monotonic()
    with netlayer.Client({"baseURL": "http://127.0.0.1:9/", "stub": [_json_stub("/big", "x" * 1_000_000)],
                          "openapi": {"document": "\n".join(lines), "validateResponses": True}}) as client:
        try:
            assert len(client.call("big").value) == 1_000_000
        except netlayer.ParsingError as error:
            assert "cannot be checked" in str(error)
    assert time.monotonic() - started < 5


def test_an_octal_or_hexadecimal_integer_too_long_to_convert_is_refused_naming_it() -> None:
    def load(scalar: str) -> None:
        text = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nx-n: %s\npaths: {}\n" % scalar
        netlayer.Client({"baseURL": "http://127.0.0.1:9/", "openapi": {"document": text}}).close()

    load("0x" + "f" * 1000)
    started = time.monotonic()
    with pytest.raises(netlayer.InvalidRequestError, match="100000 hexadecimal digits is longer than 1000"):
        load("0x" + "f" * 100_000)
    with pytest.raises(netlayer.InvalidRequestError, match="octal digits"):
        load("0o" + "7" * 5000)
    assert time.monotonic() - started < 2


def test_a_path_that_does_not_begin_with_a_slash_is_refused_naming_it() -> None:
    document = _document({"items": _get("items", {}), "x-note": {"any": "thing"}})
    with pytest.raises(netlayer.InvalidRequestError, match="path 'items' must begin with '/'"):
        netlayer.Client({"baseURL": "http://127.0.0.1:9/", "openapi": {"document": document}})
    document = _document({"/items": _get("items", {}), "x-note": {"any": "thing"}})
    netlayer.Client({"baseURL": "http://127.0.0.1:9/", "openapi": {"document": document}}).close()


@pytest.mark.parametrize(("schema", "where"), [
    ({"type": "strin"}, r"'#/paths/~1x/get/responses/200/content/application~1json/schema' key 'type'"),
    ({"type": "string", "maxLength": "2"}, r"key 'maxLength' must be a non-negative integer, not the string \"2\""),
    ({"type": "array", "minItems": -1}, r"key 'minItems' must be a non-negative integer"),
    ({"type": "number", "minimum": "0"}, r"key 'minimum' must be a number"),
    ({"type": "number", "multipleOf": 0}, r"key 'multipleOf' must be a number greater than 0"),
    ({"type": "object", "properties": {"a": {"type": "integer", "maximum": True}}},
     r"schema/properties/a' key 'maximum'"),
    ({"type": "object", "required": "a"}, r"key 'required' must be an array of property names"),
    ({"allOf": []}, r"key 'allOf' must be a non-empty array of schemas"),
    ({"items": {"oneOf": [{"type": "integer"}, 7]}}, r"schema/items/oneOf/1' must be a schema"),
    ({"type": "string", "nullable": "yes"}, r"key 'nullable' must be a boolean"),
])
def test_a_schema_keyword_of_the_wrong_kind_is_refused_at_load_naming_it(schema: Dict[str, Any], where: str) -> None:
    # Read as absent, each would let every value through without a word.
    with pytest.raises(netlayer.InvalidRequestError, match=where):
        netlayer.Client({"baseURL": "http://127.0.0.1:9/", "openapi": {"document": _document({"/x": _get("x", schema)})}})
    components = {"schemas": {"Bad/One": schema}}
    with pytest.raises(netlayer.InvalidRequestError, match="'#/components/schemas/Bad~1One"):
        netlayer.Client({"baseURL": "http://127.0.0.1:9/", "openapi": {"document": _document(
            {"/x": _get("x", {"$ref": "#/components/schemas/Bad~1One"})}, components=components)}})


def test_what_real_documents_carry_in_schemas_still_loads() -> None:
    schema = {"type": "object", "required": ["a"], "x-internal": {"type": 7},
              "properties": {"a": {"type": "file", "required": True, "format": "binary", "example": {"schema": 1}},
                             "schema": {"type": ["string", "null"], "pattern": "(?<=a)b", "exclusiveMinimum": True},
                             "n": {"type": "integer", "minimum": 0, "maxLength": 2.0, "unknownKeyword": "x"}},
              "additionalProperties": False, "example": {"maxLength": "not a schema"}}
    document = _document({"/x": _get("x", schema)}, components={"examples": {"e": {"value": {"schema": "x"}}}})
    netlayer.Client({"baseURL": "http://127.0.0.1:9/", "openapi": {"document": document}}).close()


@pytest.mark.parametrize(("schema", "value"), [
    ({"minLength": 99999999999999999999}, "a"),
    ({"minItems": 1e30}, [1]),
    ({"minProperties": 99999999999999999999}, {"a": 1}),
])
def test_a_minimum_count_beyond_64_bits_is_still_a_minimum(schema: Dict[str, Any], value: Any) -> None:
    document = _document({"/x": _get("x", schema)})
    with netlayer.Client({"baseURL": "http://127.0.0.1:9/", "stub": [_json_stub("/x", value)],
                          "openapi": {"document": document, "validateResponses": True}}) as client:
        with pytest.raises(netlayer.ParsingError, match="at least"):
            client.call("x")


def test_a_name_in_two_locations_is_addressed_with_its_location(base_url: str) -> None:
    # OpenAPI: "A unique parameter is defined by a combination of a name and location."
    operation = {"get": {"operationId": "item", "parameters": [
        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
        {"name": "id", "in": "query", "schema": {"type": "integer"}},
        {"name": "q", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}}}
    document = _document({"/echo/{id}": operation})
    with netlayer.Client({"baseURL": base_url, "openapi": {"document": document}}) as client:
        echoed = client.call("item", {"path:id": "abc", "query:id": 7, "q": "x"}).value
        assert echoed["path"] == "/echo/abc" and echoed["args"] == {"id": ["7"], "q": ["x"]}
        with pytest.raises(netlayer.InvalidRequestError, match="'id' is in more than one place; name it 'path:id' or 'query:id'"):
            client.call("item", {"id": "abc"})
        with pytest.raises(netlayer.InvalidRequestError, match="has no parameter 'header:id'"):
            client.call("item", {"header:id": "abc"})


def test_operation_and_path_item_servers_override_the_documents(base_url: str) -> None:
    ok = {"200": {"description": "ok"}}
    document = _document({
        "/p": {"servers": [{"url": "/echo/{place}", "variables": {"place": {"default": "pathsrv"}}}],
               "get": {"operationId": "own", "servers": [{"url": "/echo/opsrv"}], "responses": ok},
               "post": {"operationId": "fromPath", "responses": ok}},
        "/q": {"get": {"operationId": "fromRoot", "responses": ok}}},
        servers=[{"url": "/echo/root"}])
    with netlayer.Client({"baseURL": base_url, "openapi": {"document": document}}) as client:
        assert client.call("own").value["path"] == "/echo/opsrv/p"
        assert client.call("fromPath").value["path"] == "/echo/pathsrv/p"
        assert client.call("fromRoot").value["path"] == "/echo/root/q"
