"""What an answer is held to besides its body: a documented path, method, media type and required headers.

The OpenAPI Initiative's petstore (tests/fixtures/openapi) for the path, the method and the media
type; a small document of our own for a required response header (the petstore has none).
"""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.contracts import Contract, check_response, load_contract

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "openapi"
JSON = {"content-type": "application/json"}

WITH_HEADER = """\
openapi: 3.1.0
info: {title: Pages, version: "1"}
paths:
  /pages:
    get:
      responses:
        "200":
          description: A page of items.
          headers:
            X-Total-Count:
              required: true
              schema: {type: integer}
            X-Next: {schema: {type: string}}
          content:
            application/json:
              schema: {type: array}
"""


def petstore() -> Contract:
    contract, problems = load_contract(FIXTURES / "petstore-3.0.yaml")
    assert problems == [] and contract is not None
    return contract


def test_an_undocumented_path_is_a_violation_naming_the_closest_documented_one() -> None:
    contract = petstore()
    checked = check_response(
        contract,
        "pets",
        method="GET",
        path="/v1/pet/7",
        status=200,
        headers=JSON,
        body={"id": 7, "name": "Rex"},
    )
    [violation] = checked.violations
    assert (violation.path, violation.rule, violation.operation) == ("path", "path", None)
    assert violation.message == "GET /v1/pet/7: the path is not in the contract (closest: /pets)"
    assert violation.line == 9 and (violation.file or "").endswith("petstore-3.0.yaml")  # `paths:`
    assert checked.operation is None


def test_an_undocumented_method_is_a_violation_naming_the_documented_ones() -> None:
    checked = check_response(
        petstore(),
        "pets",
        method="DELETE",
        path="/v1/pets/7",
        status=204,
        headers={},
        body=None,
    )
    [violation] = checked.violations
    assert (violation.path, violation.rule, violation.actual) == ("method", "method", "DELETE")
    assert violation.expected == ["GET"]
    assert "documents GET for this path, not DELETE" in violation.message


def test_an_undocumented_media_type_is_a_violation_and_its_body_is_not_read_as_json() -> None:
    checked = check_response(
        petstore(),
        "pets",
        method="GET",
        path="/v1/pets/7",
        status=200,
        headers={"Content-Type": "text/html; charset=utf-8"},
        body="<h1>Rex</h1>",
    )
    [violation] = checked.violations
    assert (violation.path, violation.rule) == ("headers.content-type", "contentType")
    assert (violation.expected, violation.actual) == (["application/json"], "text/html")
    assert violation.operation == "GET /pets/{petId} → 200"
    assert violation.line == 80  # the documented `application/json:`
    # A parameterised JSON type is the documented one; a body its schema refuses is then reported.
    typed = check_response(
        petstore(),
        "pets",
        method="GET",
        path="/v1/pets/7",
        status=200,
        headers={"Content-Type": "application/json; charset=utf-8"},
        body='{"id": 7}',
    )
    assert [(v.path, v.rule) for v in typed.violations] == [("body", "required")]


def test_a_missing_required_header_is_a_violation_and_an_optional_one_is_not(tmp_path: Path) -> None:
    (tmp_path / "pages.yaml").write_text(WITH_HEADER)
    contract, problems = load_contract(tmp_path / "pages.yaml")
    assert problems == [] and contract is not None
    missing = check_response(
        contract, "pages", method="GET", path="/pages", status=200, headers=JSON, body=[], root=str(tmp_path)
    )
    [violation] = missing.violations
    assert (violation.path, violation.rule) == ("headers.x-total-count", "required")
    assert "the required header `X-Total-Count` is missing" in violation.message
    assert (violation.file, violation.line) == ("pages.yaml", 10)
    present = check_response(
        contract,
        "pages",
        method="GET",
        path="/pages",
        status=200,
        headers={**JSON, "x-total-count": "0"},  # header names match whatever their case
        body=[],
    )
    assert present.violations == []
