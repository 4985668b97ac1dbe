"""verify against real fixture servers over stdio: exact findings, bounded time, nothing left running."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from preflight_sdk.verify import ExpectedTool, VerifyResult, verify
from preflight_sdk.verify.listing import MAX_PAGES
from preflight_sdk.verify.transport import MAX_RECORDED, STDIN_GRACE, TERM_GRACE

if TYPE_CHECKING:
    from conftest import Tagged

pytestmark = pytest.mark.anyio
SERVERS = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers"

GOOD = [ExpectedTool(name=n) for n in ("search_books", "get_stats", "add_book")]
# Python starting and importing the SDK, plus scheduling noise on a busy machine.
SLACK_MS = 1500


def server(name: str, *args: str) -> list[str]:
    """The argv that runs fixture server `name` with this interpreter."""
    return [sys.executable, str(SERVERS / f"{name}.py"), *args]


def triples(result: VerifyResult) -> set[tuple[str, str, str | None]]:
    """Every finding of `result` as (severity, code, tool)."""
    return {(f.severity, f.code, f.tool) for f in result.all_findings()}


async def test_the_good_server_passes_with_no_finding_even_when_its_tools_are_called(tagged: Tagged) -> None:
    result = await verify(
        root=None, command=server("good"), expected_tools=GOOD, call_readonly=True, env=tagged.env
    )

    assert result.status == "passed" and result.ok
    assert triples(result) == set()
    assert [(t.name, t.status) for t in result.tools] == [
        ("search_books", "found"),
        ("get_stats", "found"),
        ("add_book", "found"),
    ]
    assert result.server is not None
    assert (result.server.name, result.server.version) == ("good-books", "1.2.3")
    assert result.server.protocol_version == "2026-07-28"
    assert result.stderr_tail == []
    assert tagged.leftovers() == []


async def test_a_small_healthy_server_is_verified_in_under_two_seconds(tagged: Tagged) -> None:
    await verify(root=None, command=server("good"), env=tagged.env)  # warm the imports and pyc files

    # The best of three, so that a busy machine measures the verifier rather than the scheduler.
    results = [
        await verify(root=None, command=server("good"), expected_tools=GOOD, env=tagged.env) for _ in range(3)
    ]

    assert all(r.status == "passed" for r in results)
    assert min(r.duration for r in results) < 2000


async def test_a_missing_tool_fails_and_an_extra_one_only_warns(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("drift"), expected_tools=GOOD, env=tagged.env)

    assert result.status == "failed" and not result.ok
    assert triples(result) == {
        ("error", "TOOL_MISSING", "get_stats"),
        ("warning", "TOOL_EXTRA", "admin_reset"),
    }
    assert [(t.name, t.status, t.declared, t.in_server) for t in result.tools] == [
        ("search_books", "found", True, True),
        ("get_stats", "missing", True, False),
        ("add_book", "found", True, True),
        ("admin_reset", "extra", False, True),
    ]
    assert (result.summary.found, result.summary.missing, result.summary.extra) == (2, 1, 1)
    assert tagged.leftovers() == []


async def test_extra_tools_alone_pass_unless_strict(tagged: Tagged) -> None:
    declared = [ExpectedTool(name=n) for n in ("search_books", "add_book")]

    lenient = await verify(root=None, command=server("drift"), expected_tools=declared, env=tagged.env)
    strict = await verify(
        root=None, command=server("drift"), expected_tools=declared, strict=True, env=tagged.env
    )

    assert lenient.status == "passed" and lenient.ok
    assert triples(lenient) == {("warning", "TOOL_EXTRA", "admin_reset")}
    assert strict.status == "failed" and not strict.ok
    assert triples(strict) == {("error", "TOOL_EXTRA", "admin_reset")}


async def test_broken_definitions_and_stdout_pollution_are_each_reported(tagged: Tagged) -> None:
    declared = [
        ExpectedTool(name=n) for n in ("root_not_object", "dangling_ref", "required_ghost", "undocumented")
    ]

    result = await verify(
        root=None, command=server("broken"), expected_tools=declared, call_readonly=True, env=tagged.env
    )

    assert result.status == "error"  # a conforming client rejects this listing outright
    assert triples(result) == {
        ("error", "PROTOCOL_ERROR", None),
        ("info", "CALLS_SKIPPED", None),
        ("error", "STDOUT_POLLUTION", None),
        ("error", "INPUT_SCHEMA_NOT_OBJECT", "root_not_object"),
        ("error", "SCHEMA_REF_UNRESOLVED", "dangling_ref"),
        ("error", "REQUIRED_NOT_IN_PROPERTIES", "required_ghost"),
        ("error", "DESCRIPTION_MISSING", "undocumented"),
    }
    pollution = [f.message for f in result.findings if f.code == "STDOUT_POLLUTION"]
    assert len(pollution) == 2
    assert "Catalogue MCP server v0.1 starting on stdio" in pollution[0]
    assert "DEBUG: listing tools" in pollution[1]
    protocol = next(f for f in result.findings if f.code == "PROTOCOL_ERROR")
    assert "root_not_object" in protocol.message and "inputSchema.type" in protocol.message
    assert all(t.status == "found" for t in result.tools)
    assert tagged.leftovers() == []


async def test_a_server_that_never_answers_tools_list_times_out_within_the_deadline(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("hang"), timeout="1s", env=tagged.env)

    assert result.status == "error"
    assert triples(result) == {("error", "SERVER_TIMEOUT", None)}
    assert "tools/list" in result.findings[0].message
    assert result.tools == []  # unknown, not "all missing"
    assert 1000 <= result.duration < 1000 + STDIN_GRACE * 1000 + SLACK_MS
    assert tagged.leftovers() == []


async def test_a_server_that_exits_at_start_is_reported_with_its_stderr(tagged: Tagged) -> None:
    declared = [ExpectedTool(name="search_books")]

    result = await verify(root=None, command=server("crash"), expected_tools=declared, env=tagged.env)

    assert result.status == "error"
    assert triples(result) == {("error", "SERVER_START_FAILED", None)}
    assert "status 3" in result.findings[0].message
    assert result.stderr_tail == [
        "starting catalogue server",
        "fatal: cannot open database /nonexistent/catalogue.sqlite: no such file",
    ]
    assert result.tools == [] and result.summary.missing == 0
    assert result.duration < SLACK_MS + 1000
    assert tagged.leftovers() == []


async def test_a_server_that_exits_while_a_child_holds_its_stdout_is_still_reported_at_once(
    tagged: Tagged,
) -> None:
    result = await verify(root=None, command=server("crash", "--orphan"), timeout="20s", env=tagged.env)

    assert result.status == "error"
    assert triples(result) == {("error", "SERVER_START_FAILED", None)}
    assert result.duration < SLACK_MS + 1000  # not the 20 s deadline
    assert tagged.leftovers() == []  # the child holding the pipe is stopped too


async def test_a_command_that_does_not_exist_is_a_start_failure(tagged: Tagged) -> None:
    result = await verify(root=None, command=["/nonexistent/mcp-server", "--stdio"], env=tagged.env)

    assert result.status == "error"
    assert triples(result) == {("error", "SERVER_START_FAILED", None)}
    assert "/nonexistent/mcp-server" in result.findings[0].message


async def test_tools_list_is_followed_through_every_cursor_including_an_empty_one(tagged: Tagged) -> None:
    declared = [ExpectedTool(name=n) for n in ("shelf_a", "shelf_b", "shelf_c")]

    result = await verify(root=None, command=server("paged"), expected_tools=declared, env=tagged.env)

    assert result.status == "passed"
    assert triples(result) == set()
    assert [(t.name, t.status) for t in result.tools] == [
        ("shelf_a", "found"),
        ("shelf_b", "found"),
        ("shelf_c", "found"),
    ]
    assert tagged.leftovers() == []


async def test_a_repeated_cursor_stops_the_walk_with_an_error(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("paged", "--loop"), env=tagged.env)

    assert result.status == "failed"
    assert triples(result) == {("error", "PAGINATION_LOOP", None), ("info", "NO_DECLARATIONS", None)}
    assert [t.name for t in result.tools] == ["shelf_1", "shelf_2"]


async def test_a_cursor_that_never_ends_stops_after_the_page_limit(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("paged", "--endless"), env=tagged.env)

    assert result.status == "failed"
    assert triples(result) == {("error", "PAGINATION_LOOP", None), ("info", "NO_DECLARATIONS", None)}
    assert len(result.tools) == MAX_PAGES


async def test_a_server_ignoring_sigterm_is_killed_with_its_children_even_one_outside_the_group(
    tagged: Tagged,
) -> None:
    result = await verify(
        root=None,
        command=server("stubborn"),
        expected_tools=[ExpectedTool(name="ping_catalogue")],
        env=tagged.env,
    )

    assert result.status == "passed"
    assert triples(result) == set()
    assert tagged.leftovers() == []
    # stdin closed, then the grace, then SIGTERM (ignored), then the grace, then SIGKILL.
    escalation = (STDIN_GRACE + TERM_GRACE) * 1000
    assert escalation <= result.duration < escalation + SLACK_MS


async def test_calling_read_only_tools_checks_results_and_error_handling(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("quirky"), call_readonly=True, env=tagged.env)

    assert result.status == "failed"
    assert triples(result) == {
        ("info", "NO_DECLARATIONS", None),
        ("error", "STRUCTURED_CONTENT_INVALID", "bad_output"),
        ("warning", "TEXT_MIRROR_MISSING", "no_mirror"),
        ("info", "CALL_SKIPPED", "needs_pattern"),
        ("warning", "BAD_ARGUMENT_HANDLING", "typed"),
        ("warning", "UNKNOWN_TOOL_HANDLING", None),
    }
    called = [line.split()[1] for line in result.stderr_tail if line.startswith("call ")]
    assert "write_thing" not in called  # never call a tool that is not read-only
    assert "needs_pattern" not in called  # nor one whose arguments could not be built
    assert called[:3] == ["bad_output", "no_mirror", "typed"]
    bad = next(f for t in result.tools for f in t.findings if f.code == "BAD_ARGUMENT_HANDLING")
    assert "-32603" in bad.message and "'count'" in bad.message
    assert tagged.leftovers() == []


async def test_a_server_that_dies_during_tools_list_is_distinct_from_one_that_never_started(
    tagged: Tagged,
) -> None:
    result = await verify(root=None, command=server("misbehave", "exit"), expected_tools=GOOD, env=tagged.env)

    assert result.status == "error"
    assert triples(result) == {("error", "SERVER_EXITED", None)}
    assert "status 70" in result.findings[0].message and "tools/list" in result.findings[0].message
    assert result.stderr_tail == ["panic: tool registry is corrupt"]
    assert result.tools == []  # unknown, not "all missing"


async def test_an_error_reply_to_tools_list_is_a_protocol_error_not_missing_tools(tagged: Tagged) -> None:
    result = await verify(
        root=None, command=server("misbehave", "refuse"), expected_tools=GOOD, env=tagged.env
    )

    assert result.status == "error"
    assert triples(result) == {("error", "PROTOCOL_ERROR", None)}
    assert "-32601" in result.findings[0].message
    assert result.tools == [] and result.summary.missing == 0


async def test_json_that_is_not_json_rpc_on_stdout_is_a_protocol_error(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("misbehave", "not-jsonrpc"), env=tagged.env)

    assert result.status == "error"
    assert triples(result) == {("error", "PROTOCOL_ERROR", None), ("info", "NO_DECLARATIONS", None)}
    assert '{"log": "listing"}' in next(f.message for f in result.findings if f.code == "PROTOCOL_ERROR")
    assert [t.name for t in result.tools] == ["count_books"]


async def test_a_chatty_stdout_is_reported_line_by_line_up_to_a_limit(tagged: Tagged) -> None:
    result = await verify(root=None, command=server("misbehave", "chatty"), env=tagged.env)

    pollution = [f.message for f in result.findings if f.code == "STDOUT_POLLUTION"]
    assert result.status == "failed"
    assert len(pollution) == MAX_RECORDED + 1
    assert "'log line 0'" in pollution[0] and f"'log line {MAX_RECORDED - 1}'" in pollution[MAX_RECORDED - 1]
    assert pollution[-1].startswith(f"{25 - MAX_RECORDED} more")


async def test_cancelling_verify_still_stops_the_server(tagged: Tagged) -> None:
    with anyio.move_on_after(1.0) as scope:
        await verify(root=None, command=server("hang"), timeout="30s", env=tagged.env)

    assert scope.cancelled_caught
    assert tagged.leftovers() == []


async def test_concurrent_verifications_do_not_interfere(tagged: Tagged) -> None:
    results: dict[str, VerifyResult] = {}

    async def one(name: str, timeout: str) -> None:
        results[name] = await verify(
            root=None, command=server(name), expected_tools=GOOD, timeout=timeout, env=tagged.env
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "good", "20s")
        tg.start_soon(one, "drift", "20s")
        tg.start_soon(one, "hang", "3s")

    assert results["good"].status == "passed"
    assert results["drift"].status == "failed"
    assert results["hang"].status == "error"
    assert tagged.leftovers() == []
