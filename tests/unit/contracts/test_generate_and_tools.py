"""Starter cases from a contract, `check_response` on a held response, coverage across two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from preflight_sdk import PreflightError, Project
from preflight_sdk.contracts import load_contract
from preflight_sdk.contracts.generate import starter_cases
from preflight_sdk.core.results.contracts import ContractCoverage, OperationCoverage
from preflight_sdk.runs.coverage_diff import coverage_changes
from preflight_sdk.runs.report_html.contracts_html import contracts_html

pytestmark = pytest.mark.anyio

SHOP = Path(__file__).resolve().parents[3] / "docs" / "examples" / "shop"


def test_starter_cases_use_the_documents_examples_and_expect_its_statuses() -> None:
    contract, problems = load_contract(SHOP / "contracts" / "orders.openapi.yaml")
    assert problems == [] and contract is not None
    cases = {c.operation: c for c in starter_cases(contract)}
    create = cases["POST /orders"]
    assert (create.body, create.statuses) == ({"sku": "book", "qty": 1, "price": 12.5}, [201])
    read = cases["GET /orders/{id}"]
    assert (read.path, read.statuses) == ("/orders/0a1b2c3d", [200, 404])  # a made-up id may name nothing
    assert cases["GET /health"].statuses == [200]


def test_a_value_is_made_from_the_schema_when_the_document_has_no_example(tmp_path: Path) -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "paths": {
            "/users": {
                "post": {
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["email", "age", "id", "tags"],
                                    "properties": {
                                        "email": {"type": "string", "format": "email"},
                                        "age": {"type": "integer", "minimum": 18},
                                        "id": {"type": "string", "readOnly": True},
                                        "tags": {
                                            "type": "array",
                                            "minItems": 1,
                                            "items": {"enum": ["a", "b"]},
                                        },
                                    },
                                }
                            }
                        },
                    },
                    "responses": {"201": {"description": "Created."}, "400": {"description": "Bad."}},
                }
            }
        },
    }
    (tmp_path / "api.json").write_text(json.dumps(document))
    contract, _ = load_contract(tmp_path / "api.json")
    assert contract is not None
    [case] = starter_cases(contract)
    assert case.body == {"email": "user@example.com", "age": 18, "tags": ["a"]}  # readOnly left out
    assert case.statuses == [201]


def write_shop_copy(root: Path) -> Path:
    import shutil

    shutil.copytree(SHOP, root, ignore=shutil.ignore_patterns(".preflight"))
    return root


async def test_generate_cases_writes_a_valid_test_file_and_never_writes_over_one(tmp_path: Path) -> None:
    root = write_shop_copy(tmp_path / "shop")
    project = Project.open(root)
    written = await project.generate_cases("orders")
    assert written.file == "tests/generated/orders.yaml"
    assert written.suite == "- {id: orders-generated, file: tests/generated/orders.yaml}"
    text = (root / written.file).read_text()
    document = yaml.safe_load(text)
    assert document["service"] == "orders" and len(document["cases"]) == 4
    from preflight_sdk.config import load_test_file

    load_test_file(root / written.file)  # a valid test file
    with pytest.raises(PreflightError) as caught:
        await project.generate_cases("orders")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.hint == "pass another `output`, e.g. tests/generated/orders-2.yaml"
    assert (root / written.file).read_text() == text  # untouched
    with pytest.raises(PreflightError) as caught:
        await project.generate_cases("inventory")
    assert caught.value.code == "INVALID_INPUT" and "has no `contract:`" in caught.value.message


async def test_check_response_checks_a_held_response_without_an_environment(tmp_path: Path) -> None:
    project = Project.open(write_shop_copy(tmp_path / "shop"))
    good = await project.check_response("orders", "GET", "/health", 200, body='{"status": "ok"}')
    assert good.ok and good.operation == "GET /health" and good.status == "200"
    bad = await project.check_response(
        "orders", "POST", "/orders", 201, body='{"id": "x"}', headers=["Content-Type: application/json"]
    )
    assert not bad.ok
    assert {(v.path, v.rule) for v in bad.violations} >= {("body", "required")}
    assert all(v.file == "contracts/schemas.yaml" and v.line for v in bad.violations)
    assert bad.summary.startswith(
        "POST /orders → 201 breaks orders's contract: body: 'sku' is a required property"
    )
    with pytest.raises(PreflightError) as caught:
        await project.check_response("orders", "GET", "/health", 200, headers=["no colon"])
    assert caught.value.code == "INVALID_INPUT"


def coverage(covered: list[str], violations: int = 0) -> ContractCoverage:
    items = [
        OperationCoverage(
            operation=op,
            documented=["200"],
            exercised=[200] if op in covered else [],
            calls=int(op in covered),
        )
        for op in ("GET /a", "GET /b", "GET /c")
    ]
    return ContractCoverage(
        contract="api", kind="service", file="openapi.yaml", operations=3, covered=len(covered),
        statuses=3, statuses_covered=len(covered), violations=violations, items=items,
    )  # fmt: skip


def test_coverage_changes_name_the_operations_newly_and_no_longer_covered() -> None:
    [change] = coverage_changes(
        [coverage(["GET /a", "GET /b"])], [coverage(["GET /b", "GET /c"], violations=2)]
    )
    assert (change.base_covered, change.head_covered, change.operations) == (2, 2, 3)
    assert (change.newly_covered, change.no_longer_covered) == (["GET /c"], ["GET /a"])
    assert (change.base_violations, change.head_violations) == (0, 2)
    [gone] = coverage_changes([coverage(["GET /a"])], None)
    assert (gone.base_covered, gone.head_covered) == (1, 0)


def test_the_report_page_lists_every_operation_and_greys_the_uncovered() -> None:
    html = contracts_html([coverage(["GET /a"])])
    assert "1/3 operations" in html and html.count("pfr-uncovered") == 2
    assert "<code>GET /b</code>" in html
