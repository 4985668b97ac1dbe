"""Loading OpenAPI documents: 3.0 and 3.1, JSON and YAML, `$ref`s across files, problems with lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight_sdk import PreflightError
from preflight_sdk.config import load_config
from preflight_sdk.contracts import check_response, load_contract

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "openapi"


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder / next(iter(files))


MINIMAL = """\
openapi: {version}
info: {{title: T, version: "1"}}
paths:
  /things/{{id}}:
    get:
      parameters: [{{name: id, in: path, required: true, schema: {{type: string}}}}]
      responses:
        "200":
          description: A thing.
          content:
            application/json:
              schema: {{$ref: "schemas/thing.yaml#/Thing"}}
"""
THING = """\
Thing:
  type: object
  required: [id]
  properties:
    id: {type: string}
    tags: {type: array, items: {$ref: "#/Tag"}}
Tag:
  type: string
  maxLength: 3
"""


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
def test_a_document_with_refs_across_files_loads_and_names_the_referenced_files_line(
    tmp_path: Path, version: str
) -> None:
    root = write(tmp_path, {"api.yaml": MINIMAL.format(version=version), "schemas/thing.yaml": THING})
    contract, problems = load_contract(root)
    assert problems == [] and contract is not None
    assert contract.version == version[:3]
    assert contract.files == [str(root), str(tmp_path / "schemas" / "thing.yaml")]
    checked = check_response(
        contract,
        "api",
        method="GET",
        path="/things/a",
        status=200,
        headers={"Content-Type": "application/json"},
        body={"id": "a", "tags": ["ok", "toolong"]},
        root=str(tmp_path),
    )
    [violation] = checked.violations
    assert (violation.path, violation.rule, violation.file, violation.line) == (
        "body.tags[1]",
        "maxLength",
        "schemas/thing.yaml",
        9,
    )
    assert violation.pointer == "#/Tag/maxLength"


def test_a_json_document_loads_as_well_as_yaml(tmp_path: Path) -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "paths": {"/ping": {"get": {"responses": {"204": {"description": "pong"}}}}},
    }
    contract, problems = load_contract(write(tmp_path, {"api.json": json.dumps(document, indent=2)}))
    assert problems == [] and contract is not None
    assert list(contract.operations) == ["GET /ping"]


@pytest.mark.parametrize(
    ("files", "file", "line", "message"),
    [
        ({"api.yaml": "openapi: 3.1.0\ninfo: [unclosed\n"}, "api.yaml", 2, "YAML syntax error"),
        (
            {"api.yaml": 'swagger: "2.0"\ninfo: {title: T, version: "1"}\npaths: {}\n'},
            "api.yaml",
            1,
            "Swagger 2.0",
        ),
        (
            {"api.yaml": 'openapi: 4.0.0\ninfo: {title: T, version: "1"}\npaths: {}\n'},
            "api.yaml",
            1,
            "not supported",
        ),
        (
            {"api.yaml": MINIMAL.format(version="3.1.0").replace("schemas/thing.yaml", "schemas/gone.yaml")},
            "api.yaml",
            12,
            "gone.yaml, does not exist",
        ),
        (
            {
                "api.yaml": MINIMAL.format(version="3.1.0"),
                "schemas/thing.yaml": THING.replace("#/Tag", "#/Tagg"),
            },
            "schemas/thing.yaml",
            6,
            "leads nowhere",
        ),
        (
            {
                "api.yaml": MINIMAL.format(version="3.0.3"),
                "schemas/thing.yaml": THING.replace("type: object", "type: objekt"),
            },
            "schemas/thing.yaml",
            2,
            "invalid schema",
        ),
        (
            {
                "api.yaml": MINIMAL.format(version="3.1.0").replace("          description: A thing.\n", ""),
                "schemas/thing.yaml": THING,
            },
            "api.yaml",
            9,
            "description",
        ),
        (
            {
                "api.yaml": MINIMAL.format(version="3.1.0").replace(
                    "schemas/thing.yaml", "https://example.com/t.yaml"
                )
            },
            "api.yaml",
            12,
            "points to the network",
        ),
    ],
    ids=["syntax", "swagger2", "version", "missing-file", "bad-pointer", "bad-schema", "structure", "remote"],
)
def test_a_document_that_does_not_load_says_file_line_and_why(
    tmp_path: Path, files: dict[str, str], file: str, line: int, message: str
) -> None:
    root = write(tmp_path, files)
    contract, problems = load_contract(root)
    assert contract is None
    first = problems[0]
    assert (first.file, first.line) == (str(tmp_path / file), line), problems
    assert message in first.message, problems


def test_a_service_contract_that_does_not_load_is_config_invalid_when_the_project_loads(
    tmp_path: Path,
) -> None:
    write(tmp_path, {"openapi.yaml": "openapi: 3.1.0\ninfo: {title: T}\npaths: {}\n"})
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: p}\nservices:\n  api:\n    build: {image: api:test}\n    contract: openapi.yaml\n"
        "  web:\n    build: {image: web:test}\n    contract: nowhere.yaml\n"
    )
    with pytest.raises(PreflightError) as caught:
        load_config(tmp_path)
    assert caught.value.code == "CONFIG_INVALID"
    rendered = [p.render() for p in caught.value.problems]
    assert any(
        r.startswith(f"{tmp_path / 'openapi.yaml'}:2") and "version" in r and "is a required property" in r
        for r in rendered
    ), rendered
    assert any(
        "e2e.yaml:8" in r and "the contract of service `web`, `nowhere.yaml`, does not exist" in r
        for r in rendered
    ), rendered


def test_the_openapi_initiative_petstore_loads_and_checks_answers_under_its_server_base_path() -> None:
    contract, problems = load_contract(FIXTURES / "petstore-3.0.yaml")
    assert problems == [] and contract is not None
    assert set(contract.operations) == {"GET /pets", "POST /pets", "GET /pets/{petId}"}
    json_headers = {"content-type": "application/json"}
    good = check_response(
        contract,
        "pets",
        method="GET",
        path="/v1/pets/7",
        status=200,
        headers=json_headers,
        body={"id": 7, "name": "Rex"},
    )
    assert good.violations == [] and good.operation == "GET /pets/{petId}"
    bad = check_response(
        contract,
        "pets",
        method="GET",
        path="/v1/pets",
        status=200,
        headers=json_headers,
        body=[{"id": "seven"}],
    )
    assert {(v.path, v.rule) for v in bad.violations} == {("body[0]", "required"), ("body[0].id", "type")}
    assert all(v.file and v.file.endswith("petstore-3.0.yaml") and v.line for v in bad.violations)
    # Any other status falls back to the documented `default` (an Error, with code and message).
    fallback = check_response(
        contract, "pets", method="GET", path="/pets/7", status=503, headers=json_headers, body={"code": 503}
    )
    assert [(v.path, v.rule, v.operation) for v in fallback.violations] == [
        ("body", "required", "GET /pets/{petId} → default")
    ]


def test_the_expanded_petstore_checks_allof_schemas_and_int64_formats() -> None:
    contract, problems = load_contract(FIXTURES / "petstore-expanded-3.0.yaml")
    assert problems == [] and contract is not None
    json_headers = {"content-type": "application/json"}
    ok = check_response(
        contract,
        "pets",
        method="GET",
        path="/v2/pets/3",
        status=200,
        headers=json_headers,
        body={"id": 3, "name": "Tom"},
    )
    assert ok.violations == []
    no_name = check_response(
        contract, "pets", method="GET", path="/v2/pets/3", status=200, headers=json_headers, body={"id": 3}
    )
    assert [(v.path, v.rule) for v in no_name.violations] == [("body", "required")]
    deleted = check_response(
        contract, "pets", method="DELETE", path="/v2/pets/3", status=204, headers={}, body=None
    )
    assert deleted.violations == [] and deleted.status == "204"


def test_a_31_document_of_webhooks_only_loads_with_no_operations() -> None:
    contract, problems = load_contract(FIXTURES / "webhook-example-3.1.yaml")
    assert problems == [] and contract is not None
    assert contract.version == "3.1" and contract.operations == {}
