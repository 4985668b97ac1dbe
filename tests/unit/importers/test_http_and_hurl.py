""".http and Hurl files import into test files that load, with what does not convert listed by line.

The `.http` files are httpyac's examples (JetBrains and REST Client syntax), the Hurl files Hurl's
own integration tests (see tests/fixtures/imports/README.md); shop.http is ours.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from preflight_sdk.config import load_test_file
from preflight_sdk.core.errors import InputError
from preflight_sdk.importers import convert_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for folder in ("http", "hurl"):
        for source in (FIXTURES / folder).iterdir():
            shutil.copy(source, tmp_path / source.name)
    return tmp_path


def _cases(path: str) -> dict[str, dict[str, Any]]:
    load_test_file(path)  # it loads as the runner loads it
    return {case["name"]: case for case in yaml.safe_load(Path(path).read_text())["cases"]}


def test_a_jetbrains_http_file_imports_with_several_requests_per_block_and_its_handler(project: Path) -> None:
    result = convert_file("intellij.http", root=project, loaded=None)
    cases = _cases(result.path)
    assert list(cases) == [
        "POST /anything",
        "POST /anything (2)",
        "POST /anything?test=test",  # the URL continued on indented lines
        "POST /anything (3)",
        "POST /anything (4)",
        "POST /anything (5)",
    ]
    assert cases["POST /anything"]["request"]["form"] == {"email": "user@domain.loc", "password": "1"}
    assert cases["POST /anything (4)"]["save"] == {
        "email": "form.email"
    }  # client.global.set(…, response.body.form.email)
    assert [(n.place, n.source) for n in result.not_converted] == [
        ("intellij.http:35", "> ./intellij.js"),
        ("intellij.http:49", "# @injectVariables"),
        ("intellij.http:57", "< ../assets/variables.json"),
    ]


def test_a_named_requests_response_becomes_a_saved_value(project: Path) -> None:
    result = convert_file("shop.http", root=project, loaded=None)
    cases = _cases(result.path)
    assert cases["Log in"]["save"] == {"login_token": "token"}
    assert cases["Log in"]["expect"] == {"status": 201, "body": {"user": {"name": "ann"}}}
    assert cases["Who am I"]["request"]["headers"] == {"Authorization": "Bearer {{login_token}}"}
    assert cases["Who am I"]["expect"] == {"status": 200}  # client.assert(response.status === 200)
    assert cases["The JSON document"]["request"]["url"] == "{{base}}/assert-json?trace={{uuid}}"
    assert cases["The JSON document"]["expect"] == {
        "headers": {"content-type": {"contains": "json"}},
        "body": {"count": 5},
        "responseTime": {"lt": 5000},
    }
    assert [(n.place, n.source) for n in result.not_converted] == [
        ("shop.http:23", "client.log(response.body);")
    ]


def test_file_variables_that_look_secret_are_read_from_the_environment(project: Path) -> None:
    result = convert_file("login.http", root=project, loaded=None)
    text = Path(result.path).read_text()
    assert "client_secret\n" not in text and "pwd" not in text
    assert "user_auth_client_secret" in result.variables_needed
    assert [(n.place, n.source) for n in result.not_converted] == [("login.http:23", "> ./login.js")]


def test_hurls_asserts_and_captures_convert_and_the_rest_is_listed_by_line(project: Path) -> None:
    result = convert_file("assert_json.hurl", root=project, loaded=None)
    cases = _cases(result.path)
    first = cases["GET /assert-json (entry 1)"]
    assert first["expect"]["status"] == 200
    body = first["expect"]["body"]
    assert body["count"] == {"eq": 5, "ne": 4, "not": 4, "gt": 1}  # ==, !=, not ==, >
    assert body["success"] == {"eq": False, "ne": None, "exists": True, "type": "boolean"}
    assert body["toto"] == {"exists": False}
    assert {"count": "{{five}}"} in first["expect"]["all"]  # a second check on `count`, with a variable
    assert 'body.errors[0].id == "error1"' in first["expect"]["expr"]  # an index: as an expression
    assert first["save"] == {"count": "count"}
    assert yaml.safe_load(Path(result.path).read_text())["variables"]["five"] == 5  # [Options] variable
    reasons = Counter(n.reason for n in result.not_converted)
    assert reasons["this JSONPath has no equivalent (wildcards, filters and slices do not convert)"] == 34
    assert reasons["the `toDate` filter has no equivalent"] == 8
    places = {n.place: n.source for n in result.not_converted}
    assert places["assert_json.hurl:9"] == "insecure: false"
    assert places["assert_json.hurl:13"] == 'date0: jsonpath "$.dates[0]" toDate "%+"'
    assert (
        "a JSON response body Hurl checks exactly is checked as a partial match (keys it lists must match)"
        in result.notes
    )


def test_hurl_status_lines_and_comments_name_and_check_the_cases(project: Path) -> None:
    result = convert_file("assert_status_code.hurl", root=project, loaded=None)
    cases = _cases(result.path)
    assert {name: case["expect"] for name, case in cases.items()} == {
        "GET /assert-status-code (entry 1)": {"status": 201},
        "Assert HTTP 1.1": {"status": 201},
        "Simply check that the status code is not 200": {"expr": ["status != 200"]},
        "Simply check that the status code is OK": {"expr": ["status >= 200", "status < 300"]},
    }
    assert result.not_converted == []


def test_a_file_with_no_request_or_an_unknown_format_is_refused(project: Path) -> None:
    (project / "empty.http").write_text("# only a comment\n")
    with pytest.raises(InputError) as empty:
        convert_file("empty.http", root=project, loaded=None)
    assert empty.value.message == "empty.http holds no request to convert"
    (project / "notes.txt").write_text("hello\n")
    with pytest.raises(InputError) as unknown:
        convert_file("notes.txt", root=project, loaded=None)
    assert unknown.value.message == "cannot tell the format of notes.txt"
    (project / "session.txt").write_text("GET http://localhost:8000/a\nHTTP 200\n[Asserts]\nstatus == 200\n")
    assert convert_file("session.txt", root=project, loaded=None).format == "hurl"  # told by its content


def test_a_written_out_secret_header_is_read_from_the_environment_and_never_copied(project: Path) -> None:
    (project / "admin.http").write_text(
        "### Admin\n"
        "GET http://localhost:8000/admin\n"
        "Authorization: Bearer sk-live-0123456789\n"
        "X-Trace: abc\n"
        "\n"
        "> {% client.global.set('password', 'hunter2-secret'); %}\n"
    )
    result = convert_file("admin.http", root=project, loaded=None)
    text = Path(result.path).read_text()
    assert "sk-live-0123456789" not in text and "hunter2-secret" not in text
    [case] = _cases(result.path).values()
    assert case["request"]["headers"] == {"Authorization": "{{env.AUTHORIZATION}}", "X-Trace": "abc"}
    assert result.variables_needed == ["AUTHORIZATION"]
    [left] = result.not_converted  # the handler line is listed, with the secret value redacted
    assert left.place == "admin.http:6" and "hunter2-secret" not in left.source


def test_the_list_of_what_did_not_convert_is_bounded(project: Path) -> None:
    asserts = "".join(f'xpath "//p[{i}]" exists\n' for i in range(700))
    (project / "many.hurl").write_text(f"GET http://localhost:8000/x\nHTTP 200\n[Asserts]\n{asserts}")
    result = convert_file("many.hurl", root=project, loaded=None)
    assert len(result.not_converted) == 501
    assert result.not_converted[-1].reason == "200 more parts not listed here"
    assert "# Not converted (700):" in Path(result.path).read_text()
