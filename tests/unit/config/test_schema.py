"""The committed JSON Schemas match the Structs, accept every good fixture and reject broken ones."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator, ValidationError

from preflight_sdk.config import json_schema
from preflight_sdk.config.schema import SCHEMA_FILES, schema_text

REPO = Path(__file__).resolve().parents[3]
SCHEMA_DIR = REPO / "docs" / "schema"
FIXTURES = REPO / "tests" / "fixtures" / "config"
GOOD_CONFIGS = sorted([*(FIXTURES / "good").rglob("e2e.y*ml"), *(FIXTURES / "origin").rglob("e2e.yaml")])
GOOD_CONFIGS.append(FIXTURES / "good" / "config-file" / "ci.e2e.yaml")
TEST_FILES = sorted(
    [
        *(p for p in (FIXTURES / "good").rglob("*.yaml") if p.parent.name in ("tests", "suites")),
        *(FIXTURES / "origin").rglob("tests/*.yaml"),
        FIXTURES / "broken" / "tests" / "ok-cases.yaml",
    ]
)


@functools.cache
def validator(kind: str) -> Draft202012Validator:
    schema = json_schema(kind)  # type: ignore[arg-type]
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def read(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def leaves(errors: list[ValidationError]) -> list[ValidationError]:
    """Return the innermost errors: a failed `anyOf` (an optional section) hides the real one."""
    found: list[ValidationError] = []
    for error in errors:
        found.extend(leaves(list(error.context)) if error.context else [error])
    return found


def label(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_the_committed_schema_is_up_to_date(kind: str) -> None:
    committed = SCHEMA_DIR / SCHEMA_FILES[kind]  # type: ignore[index]
    assert committed.is_file(), f"{committed} is missing: run scripts/gen-schema"
    assert committed.read_text(encoding="utf-8") == schema_text(kind), (  # type: ignore[arg-type]
        f"{committed.relative_to(REPO)} is out of date with preflight_sdk.config: run scripts/gen-schema"
    )


def test_gen_schema_writes_the_committed_files(tmp_path: Path) -> None:
    script = tmp_path / "scripts" / "gen-schema"
    script.parent.mkdir()
    shutil.copy2(REPO / "scripts" / "gen-schema", script)
    assert os.access(REPO / "scripts" / "gen-schema", os.X_OK)
    env = {**os.environ, "PREFLIGHT_VENV": str(Path(sys.executable).parent.parent)}
    done = subprocess.run([str(script)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    for name in SCHEMA_FILES.values():
        assert (tmp_path / "docs" / "schema" / name).read_text(encoding="utf-8") == (
            SCHEMA_DIR / name
        ).read_text(encoding="utf-8")
    assert "wrote docs/schema/e2e.schema.json" in done.stderr


def test_the_schemas_are_draft_2020_12_and_object_rooted() -> None:
    for kind in SCHEMA_FILES:
        schema = json_schema(kind)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"].endswith(SCHEMA_FILES[kind])
        assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert json_schema("e2e")["required"] == ["project"]
    assert set(json_schema("test")["required"]) == {"name", "cases"}


@pytest.mark.parametrize("config", GOOD_CONFIGS, ids=label)
def test_every_good_config_is_valid_against_the_schema(config: Path) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator("e2e").iter_errors(read(config))]
    assert errors == []


@pytest.mark.parametrize("test_file", TEST_FILES, ids=label)
def test_every_test_file_fixture_is_valid_against_the_schema(test_file: Path) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator("test").iter_errors(read(test_file))]
    assert errors == []


@pytest.mark.parametrize(
    ("broken", "where", "words"),
    [
        ("unknown-key-healthcheck.yaml", ["service", "container"], "healthCheck"),
        ("unknown-key-nested-extension.yaml", ["service"], "x-defaults"),
        ("unknown-key-top-level.yaml", [], "servics"),
        ("mock-port-out-of-range.yaml", ["mocks", "payments", "port"], "70000"),
        ("mock-port-string.yaml", ["mocks", "payments", "port"], "9081"),
        ("retry-max-attempts.yaml", ["tests", "retry", "maxAttempts"], "11"),
        ("runner-vitest.yaml", ["tests", "suites", 0, "runner"], "vitest"),
        ("missing-project.yaml", [], "project"),
        ("missing-build-image.yaml", ["service", "build"], "image"),
        ("service-and-services.yaml", [], "should not be valid"),
        ("list-instead-of-map.yaml", ["mocks"], "object"),
    ],
)
def test_broken_configs_are_rejected_by_the_schema_too(broken: str, where: list[Any], words: str) -> None:
    errors = leaves(list(validator("e2e").iter_errors(read(FIXTURES / "broken" / broken))))
    assert errors, f"{broken} passes the schema"
    assert any(list(e.absolute_path) == where and words in e.message for e in errors), [
        (list(e.absolute_path), e.message) for e in errors
    ]


def test_invalid_durations_are_rejected_by_the_schema() -> None:
    errors = leaves(list(validator("e2e").iter_errors(read(FIXTURES / "broken" / "invalid-durations.yaml"))))
    assert {tuple(e.absolute_path) for e in errors if e.validator == "pattern"} == {
        ("service", "container", "healthcheck", "interval"),
        ("service", "container", "healthcheck", "startPeriod"),
        ("tests", "suites", 0, "timeout"),
        ("tests", "retry", "delay"),
    }


def test_a_broken_test_file_is_rejected_by_the_test_schema() -> None:
    errors = leaves(
        list(validator("test").iter_errors(read(FIXTURES / "broken" / "tests" / "broken-cases.yaml")))
    )
    assert any(list(e.absolute_path) == ["cases", 0, "expect"] and "staus" in e.message for e in errors)


def test_templates_may_stand_for_numbers_only_in_e2e_yaml() -> None:
    config = {"project": {"name": "p"}, "mocks": {"m": {"port": "{{env.PORT}}"}}}
    assert list(validator("e2e").iter_errors(config)) == []
    config["mocks"]["m"]["port"] = "80"
    assert list(validator("e2e").iter_errors(config))
