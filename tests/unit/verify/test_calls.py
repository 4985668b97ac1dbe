"""`call_readonly` against real fixture servers: failed and refused calls, unknown tools, and
tools declared with example arguments (called even when they are not read-only)."""

from __future__ import annotations

import json
import re
import shlex
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from preflight_sdk.config.model import McpConfig, McpToolDecl
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.faces.notebook.static.verify_view import verify_text
from preflight_sdk.verify import ExpectedTool, VerifyResult, verify

if TYPE_CHECKING:
    from conftest import Tagged

pytestmark = pytest.mark.anyio
SERVERS = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers"

CARELESS = [ExpectedTool(name=n) for n in ("count_loans", "find_overdue", "list_holds")]
QUIRKY = ("bad_output", "no_mirror", "needs_pattern", "typed", "write_thing")
# What quirky.py always earns with calls, whatever is declared about write_thing and needs_pattern.
QUIRKY_BASE = {
    ("error", "STRUCTURED_CONTENT_INVALID", "bad_output"),
    ("warning", "TEXT_MIRROR_MISSING", "no_mirror"),
    ("warning", "BAD_ARGUMENT_HANDLING", "typed"),
    ("warning", "UNKNOWN_TOOL_HANDLING", None),
}


def server(name: str, *args: str) -> list[str]:
    """The argv that runs fixture server `name` with this interpreter."""
    return [sys.executable, str(SERVERS / f"{name}.py"), *args]


def triples(result: VerifyResult) -> set[tuple[str, str, str | None]]:
    """Every finding of `result` as (severity, code, tool)."""
    return {(f.severity, f.code, f.tool) for f in result.all_findings()}


def calls(result: VerifyResult) -> dict[str, object]:
    """The arguments of each call quirky.py logged on stderr (`call <name> <json>`), by tool."""
    logged = [line.split(" ", 2) for line in result.stderr_tail if line.startswith("call ")]
    return {name: json.loads(arguments) for _, name, arguments in logged}


def message(result: VerifyResult, code: str, tool: str | None = None) -> str:
    return next(f.message for f in result.all_findings() if f.code == code and f.tool == tool)


async def test_failed_and_refused_calls_and_an_accepted_unknown_tool_are_each_reported(
    tagged: Tagged,
) -> None:
    result = await verify(
        root=None, command=server("careless"), expected_tools=CARELESS, call_readonly=True, env=tagged.env
    )

    assert result.status == "failed"
    assert triples(result) == {
        ("error", "CALL_FAILED", "count_loans"),
        ("info", "CALL_IS_ERROR", "find_overdue"),
        ("info", "CALL_IS_ERROR", "list_holds"),
        ("warning", "ERROR_TEXT_MISSING", "list_holds"),
        ("error", "UNKNOWN_TOOL_ACCEPTED", None),
        ("info", "BAD_ARGUMENT_NOT_CHECKED", None),
    }
    assert "-32603" in message(result, "CALL_FAILED", "count_loans")
    assert "database is locked" in message(result, "CALL_FAILED", "count_loans")
    assert "closed for maintenance" in message(result, "CALL_IS_ERROR", "find_overdue")
    assert "preflight_verify_no_such_tool" in message(result, "UNKNOWN_TOOL_ACCEPTED")
    assert tagged.leftovers() == []


async def test_a_call_without_an_answer_fails_after_the_per_call_limit(tagged: Tagged) -> None:
    result = await verify(
        root=None,
        command=server("careless", "--slow"),
        expected_tools=CARELESS,
        call_readonly=True,
        call_timeout="4s",
        env=tagged.env,
    )

    assert ("error", "CALL_FAILED", "count_loans") in triples(result)
    assert "no answer within 4 s" in message(result, "CALL_FAILED", "count_loans")
    assert result.duration >= 4000
    assert tagged.leftovers() == []


async def test_without_call_readonly_nothing_is_called(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("careless"), expected_tools=CARELESS, env=tagged.env)

    assert result.status == "passed"
    assert triples(result) == set()


async def test_example_arguments_call_a_write_tool_and_a_tool_whose_arguments_cannot_be_built(
    tagged: Tagged,
) -> None:
    declared = [
        ExpectedTool(name="write_thing", example_arguments={"label": "shelf 9"}),
        ExpectedTool(name="needs_pattern", example_arguments={"year": "1999"}),
        *(ExpectedTool(name=n) for n in QUIRKY if n not in ("write_thing", "needs_pattern")),
    ]

    result = await verify(
        root=None, command=server("quirky"), expected_tools=declared, call_readonly=True, env=tagged.env
    )

    assert triples(result) == QUIRKY_BASE  # no CALL_SKIPPED for needs_pattern, nothing for write_thing
    called = calls(result)
    assert called["write_thing"] == {"label": "shelf 9"}  # exactly the declared arguments
    assert called["needs_pattern"] == {"year": "1999"}
    assert tagged.leftovers() == []


async def test_example_arguments_without_call_readonly_call_nothing(tagged: Tagged) -> None:
    declared = [
        ExpectedTool(name=n, example_arguments={"label": "x"} if n == "write_thing" else None) for n in QUIRKY
    ]

    result = await verify(root=None, command=server("quirky"), expected_tools=declared, env=tagged.env)

    assert result.status == "passed"
    assert triples(result) == set()


async def test_the_output_of_a_tool_called_with_example_arguments_is_checked_against_its_output_schema(
    tagged: Tagged, tmp_path: Path
) -> None:
    block = McpConfig(
        start=server("quirky"),
        tools=[
            McpToolDecl(name=n, example_arguments={"label": 9} if n == "write_thing" else None)
            for n in QUIRKY
        ],
    )

    result = await verify(root=tmp_path, mcp=block, call_readonly=True, env=tagged.env)

    assert triples(result) == {
        *QUIRKY_BASE,
        ("info", "CALL_SKIPPED", "needs_pattern"),
        ("error", "STRUCTURED_CONTENT_INVALID", "write_thing"),
    }
    assert calls(result)["write_thing"] == {"label": 9}
    assert "9 is not of type 'string'" in message(result, "STRUCTURED_CONTENT_INVALID", "write_thing")
    assert tagged.leftovers() == []


async def test_an_is_error_answer_to_example_arguments_is_an_error(tagged: Tagged) -> None:
    declared = [
        ExpectedTool(name=t.name, example_arguments={} if t.name == "find_overdue" else None)
        for t in CARELESS
    ]

    result = await verify(
        root=None, command=server("careless"), expected_tools=declared, call_readonly=True, env=tagged.env
    )

    assert ("error", "CALL_IS_ERROR", "find_overdue") in triples(result)
    assert "example arguments {}" in message(result, "CALL_IS_ERROR", "find_overdue")
    assert ("info", "CALL_IS_ERROR", "list_holds") in triples(result)  # synthesised: still an info


async def test_a_manifest_declares_example_arguments(tagged: Tagged, tmp_path: Path) -> None:
    command = shlex.join(server("quirky"))
    (tmp_path / "pai-manifest.yaml").write_text(
        textwrap.dedent(
            f"""\
            name: quirky
            mcp_start: {command}
            provides:
              mcp:
                - tool: write_thing
                  example_arguments: {{label: from the manifest}}
                - bad_output
                - no_mirror
                - needs_pattern
                - typed
            """
        )
    )

    result = await verify(root=tmp_path, manifest="pai-manifest.yaml", call_readonly=True, env=tagged.env)

    assert calls(result)["write_thing"] == {"label": "from the manifest"}
    assert not any(f.tool == "write_thing" for f in result.all_findings())


@pytest.mark.parametrize("value", ["[1, 2]", "just text"])
async def test_example_arguments_in_a_manifest_must_be_a_mapping(tmp_path: Path, value: str) -> None:
    (tmp_path / "m.yaml").write_text(
        f"name: x\nmcp_start: python s.py\nprovides:\n  mcp:\n    - tool: t\n      example_arguments: {value}\n"
    )

    with pytest.raises(ConfigError) as caught:
        await verify(root=tmp_path, manifest="m.yaml")

    assert caught.value.code == "MANIFEST_INVALID"
    problem = caught.value.problems[0]
    assert (problem.path, problem.line) == ("$.provides.mcp[0].example_arguments", 6)
    assert "mapping" in problem.message


async def test_a_slow_call_that_reports_progress_outlives_its_call_timeout(tagged: Tagged) -> None:
    # 4 s of work in four steps, each followed by progress, against a 2 s call limit: the limit
    # starts again at each notification, so the call answers; the start-up limit is not the call's.
    result = await verify(
        root=None,
        command=server("longrun", "--seconds", "4"),
        call_readonly=True,
        timeout="10s",
        call_timeout="2s",
        env=tagged.env,
    )

    report = next(c for c in result.calls if c.tool == "build_report")
    assert report.outcome == "answered"
    assert report.duration is not None and report.duration >= 4000
    assert not any(f.code == "CALL_FAILED" for f in result.all_findings())
    assert tagged.leftovers() == []


async def test_a_call_without_progress_times_out_after_the_call_timeout_not_the_start_up_one(
    tagged: Tagged,
) -> None:
    result = await verify(
        root=None,
        command=server("longrun", "--stall"),
        call_readonly=True,
        timeout="20s",
        call_timeout="2s",
        env=tagged.env,
    )

    report = next(c for c in result.calls if c.tool == "stall")
    assert report.outcome == "timed_out"
    assert report.duration is not None and 2000 <= report.duration < 10000
    assert "no answer within 2 s" in message(result, "CALL_FAILED", "stall")
    assert tagged.leftovers() == []


async def test_open_world_tools_are_never_called_unless_asked(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("longrun"), call_readonly=True, env=tagged.env)

    assert "fetch_page" not in calls(result) and "ask_registry" not in calls(result)
    skipped = {c.tool: c.reason or "" for c in result.calls if c.outcome == "skipped"}
    assert "openWorldHint is true" in skipped["fetch_page"]
    assert "openWorldHint is not set" in skipped["ask_registry"]
    assert "--call-open-world" in skipped["fetch_page"]

    asked = await verify(
        root=None, command=server("longrun"), call_readonly=True, call_open_world=True, env=tagged.env
    )

    assert {"fetch_page", "ask_registry"} <= set(calls(asked))
    assert tagged.leftovers() == []


async def test_every_tool_is_listed_as_called_with_its_arguments_or_skipped_with_why(tagged: Tagged) -> None:
    result = await verify(
        root=None, command=server("longrun", "--seconds", "0.4"), call_readonly=True, env=tagged.env
    )

    by_tool = {c.tool: c for c in result.calls}
    assert list(by_tool) == [
        "build_report",
        "stall",
        "fetch_page",
        "ask_registry",
        "find_member",
        "find_by_isbn",
    ]
    assert by_tool["build_report"].outcome == "answered"
    assert by_tool["build_report"].arguments == {}
    assert by_tool["build_report"].arguments_from == "invented"
    assert by_tool["build_report"].duration is not None
    # The invented id is refused: the report and the finding say its answer went unchecked.
    member = by_tool["find_member"]
    assert (member.outcome, member.arguments) == ("is_error", {"id": 0})
    assert "invented arguments were refused" in (member.reason or "")
    assert "not checked" in message(result, "CALL_IS_ERROR", "find_member")
    isbn = by_tool["find_by_isbn"]
    assert isbn.outcome == "skipped" and "no valid arguments" in (isbn.reason or "")

    text = verify_text(result)
    assert "Calls (3 called, 3 skipped):" in text
    assert re.search(r'find_member +is_error +\{"id": 0\}', text)
    assert re.search(r"fetch_page +skipped: openWorldHint is true", text)
    assert tagged.leftovers() == []


async def test_an_unprobed_typed_read_only_tool_is_named_not_denied(tagged: Tagged) -> None:
    result = await verify(
        root=None, command=server("longrun", "--isbn-only"), call_readonly=True, env=tagged.env
    )

    said = message(result, "BAD_ARGUMENT_NOT_CHECKED")
    assert "no read-only tool has a typed argument" not in said
    assert "find_by_isbn" in said
    assert tagged.leftovers() == []
