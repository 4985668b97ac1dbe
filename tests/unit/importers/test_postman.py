"""Postman collections import into test files that load: a real public collection, an environment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from preflight_sdk.config import load_test_file
from preflight_sdk.core.errors import InputError
from preflight_sdk.importers import convert_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports" / "postman"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in (
        "Conduit.postman_collection.json",
        "env-var-test.postman_collection.json",
        "env.postman_environment.json",
        "shop.postman_collection.json",
    ):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path


def _cases(path: str) -> dict[str, dict[str, object]]:
    document = yaml.safe_load(Path(path).read_text())
    return {case["name"]: case for case in document["cases"]}


def test_the_realworld_collection_imports_into_a_file_that_loads_with_every_left_part_listed(
    project: Path,
) -> None:
    result = convert_file("Conduit.postman_collection.json", root=project, loaded=None)
    assert result.path == str(project / "tests" / "conduit.yaml")
    test = load_test_file(result.path)
    assert (result.format, result.cases, len(test.cases)) == ("postman", 32, 32)
    assert [c.name for c in test.cases][:3] == [
        "Auth / Register",
        "Auth / Login",
        "Auth / Login and Remember Token",
    ]
    cases = _cases(result.path)
    remember = cases["Auth / Login and Remember Token"]
    # `pm.globals.set('token', user.token)` under `if (tests['User has "token" property'])`: kept
    assert remember["save"] == {"token": "user.token"}
    assert remember["expect"]["body"]["user"]["token"] == {"exists": True}
    assert cases["Auth / Current User"]["request"]["headers"]["Authorization"] == "Token {{token}}"
    assert cases["Articles / All Articles"]["expect"]["status"] == 200
    assert cases["Articles / All Articles"]["expect"]["body"]["articlesCount"] == {
        "exists": True,
        "type": "integer",
    }
    # what did not convert is listed with its place, and in the file's header
    places = {(n.place, n.reason) for n in result.not_converted}
    condition = "it is under a condition, and a test file has none: check it by hand"
    assert (
        "Auth / Register › test script line 4",
        condition,
    ) in places  # `if (!(environment.isIntegrationTest))`
    assert any(
        n.source.startswith("tests['Global variable \"token\" has been set']") for n in result.not_converted
    )
    header = Path(result.path).read_text().split("\nname:")[0]
    assert f"# Not converted ({len(result.not_converted)}):" in header
    assert "Auth / Register › test script line 4" in header
    # no host to place: the base URL is read from the environment, and said so
    assert [(h.found, h.target, h.requests) for h in result.hosts] == [("{{APIURL}}", None, 32)]
    assert result.variables_needed == ["APIURL", "EMAIL", "PASSWORD", "USERNAME"]
    assert result.suite_entry == {"id": "conduit", "file": "tests/conduit.yaml"}


def test_an_environment_overrides_the_collection_and_a_disabled_value_is_not_used(project: Path) -> None:
    result = convert_file(
        "env-var-test.postman_collection.json",
        root=project,
        loaded=None,
        environment="env.postman_environment.json",
    )
    load_test_file(result.path)
    [case] = _cases(result.path).values()
    assert case["expect"] == {
        "body": {"contains": "bar2"}
    }  # pm.expect(pm.response.text()).to.include("bar2")
    assert result.variables_needed == ["dummyVar"]  # the environment's value is disabled
    enabled = json.loads((project / "env.postman_environment.json").read_text())
    enabled["values"][0]["enabled"] = True
    (project / "on.json").write_text(json.dumps(enabled))
    again = convert_file(
        "env-var-test.postman_collection.json",
        root=project,
        loaded=None,
        environment="on.json",
        output="tests/on.yaml",
    )
    assert yaml.safe_load(Path(again.path).read_text())["variables"] == {"dummyVar": "bar"}
    assert again.variables_needed == []


def test_folders_auth_scripts_and_saved_values_convert(project: Path) -> None:
    result = convert_file("shop.postman_collection.json", root=project, loaded=None)
    cases = _cases(result.path)
    assert list(cases) == ["Auth / Log in", "Auth / Who am I", "Documents / JSON"]
    assert cases["Auth / Log in"]["save"] == {"token": "token"}
    assert cases["Auth / Log in"]["expect"] == {"status": 201, "body": {"user": {"name": "ann"}}}
    assert cases["Auth / Who am I"]["request"]["headers"] == {
        "Authorization": "Bearer {{token}}"
    }  # bearer auth
    assert cases["Documents / JSON"]["expect"]["headers"] == {"Content-Type": {"contains": "json"}}
    assert {(n.place, n.reason) for n in result.not_converted} == {
        ("Auth / Who am I › test script line 5", "a script statement with no equivalent in the test grammar"),
        ("Documents / JSON › prerequest script", "pre-request scripts do not convert"),
    }


def test_a_secret_variable_is_never_written_into_the_file(project: Path) -> None:
    collection = json.loads((project / "shop.postman_collection.json").read_text())
    collection["variable"].append({"key": "apiKey", "value": "sk-live-4242"})
    collection["item"][1]["item"][0]["request"]["header"] = [{"key": "X-Api-Key", "value": "{{apiKey}}"}]
    (project / "secret.json").write_text(json.dumps(collection))
    result = convert_file("secret.json", root=project, loaded=None)
    text = Path(result.path).read_text()
    assert "sk-live-4242" not in text
    assert yaml.safe_load(text)["variables"]["apiKey"] == "{{env.apiKey}}"
    assert "apiKey" in result.variables_needed


def test_an_existing_file_is_not_replaced_unless_asked(project: Path) -> None:
    first = convert_file("shop.postman_collection.json", root=project, loaded=None)
    Path(first.path).write_text("# edited by hand\n")
    with pytest.raises(InputError) as caught:
        convert_file("shop.postman_collection.json", root=project, loaded=None)
    assert caught.value.code == "INVALID_INPUT" and "already exists" in str(caught.value)
    assert Path(first.path).read_text() == "# edited by hand\n"
    convert_file("shop.postman_collection.json", root=project, loaded=None, overwrite=True)
    assert "Auth / Log in" in Path(first.path).read_text()
    assert sorted(p.name for p in (project / "tests").iterdir()) == ["shop.yaml"]  # no scratch file left


def test_a_dry_run_writes_nothing_and_returns_the_text(project: Path) -> None:
    result = convert_file("shop.postman_collection.json", root=project, loaded=None, dry_run=True)
    assert not result.written and result.text is not None and "Auth / Log in" in result.text
    assert not (project / "tests").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "the file is not a Postman collection (v2.1): Expected `object`, got `array`"),
        (
            '{"info": {"name": "x"}}',
            "the file is not a Postman collection (v2.1): Object missing required field `item`",
        ),
        ('{"info": {"name": "x", "schema": "v1.0.0"}, "item": []}', "this is a Postman collection v1"),
        ("{not json", "the file is not JSON: JSON is malformed: object keys must be strings (byte 1)"),
    ],
)
def test_what_is_not_a_collection_is_refused_with_a_reason(project: Path, content: str, message: str) -> None:
    (project / "bad.json").write_text(content)
    with pytest.raises(InputError) as caught:
        convert_file("bad.json", root=project, loaded=None)
    assert caught.value.message.startswith(message)


def test_an_output_outside_the_project_or_a_missing_source_is_refused(project: Path) -> None:
    with pytest.raises(InputError) as outside:
        convert_file("shop.postman_collection.json", root=project, loaded=None, output="../elsewhere.yaml")
    assert "is outside the project" in str(outside.value)
    with pytest.raises(InputError) as missing:
        convert_file("nope.json", root=project, loaded=None)
    assert "does not exist" in str(missing.value)


def test_postman_dynamic_variables_become_the_grammars_own_or_are_listed(project: Path) -> None:
    collection = {
        "info": {
            "name": "dyn",
            "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
        },
        "item": [
            {
                "name": "create",
                "request": {
                    "method": "POST",
                    "url": "http://localhost:8000/orders?id={{$guid}}",
                    "header": [{"key": "X-Request-Id", "value": "{{$randomUUID}}"}],
                    "body": {"mode": "raw", "raw": '{"n": "{{$randomInt}}", "at": "{{$isoTimestamp}}"}'},
                },
            }
        ],
    }
    (project / "dyn.json").write_text(json.dumps(collection))
    result = convert_file("dyn.json", root=project, loaded=None)
    [case] = _cases(result.path).values()
    assert case["request"]["url"] == "http://localhost:8000/orders?id={{uuid}}"
    assert case["request"]["headers"] == {"X-Request-Id": "{{uuid}}"}
    assert case["request"]["json"] == {"n": "{{randomInt}}", "at": "{{now}}"}
    assert [(n.place, n.source) for n in result.not_converted] == [("create", "{{$randomInt}}")]
    assert result.variables_needed == ["randomInt"]
