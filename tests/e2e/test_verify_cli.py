"""`preflight verify` through the real console script: exit codes, human output, `--json` envelopes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PREFLIGHT = str(Path(sys.executable).parent / "preflight")
SERVERS = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_servers"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


def _command(fixture: str) -> str:
    """The start command of a fixture server, as one string for `--command`."""
    return shlex.join([sys.executable, str(SERVERS / f"{fixture}.py")])


def _project(root: Path, search_example: str = "null") -> Path:
    """A project whose `mcp:` block starts drift.py: `get_stats` is gone, `admin_reset` is extra.

    `search_example` is the YAML of `search_books`' example arguments.
    """
    (root / "e2e.yaml").write_text(
        textwrap.dedent(
            f"""\
            project: {{name: drifted}}
            mcp:
              start: [{json.dumps(sys.executable)}, drift.py]
              cwd: {json.dumps(str(SERVERS))}
              tools:
                - name: search_books
                  exampleArguments: {search_example}
                - name: get_stats
                - name: add_book
                  exampleArguments: {{id: b9, title: Dune}}
            """
        ),
        encoding="utf-8",
    )
    return root


def test_a_missing_tool_in_the_mcp_block_exits_1_with_the_missing_line(tmp_path: Path) -> None:
    done = _run("verify", "-C", str(_project(tmp_path)))

    assert done.returncode == 1, done.stderr[-3000:]
    lines = [line.split() for line in done.stdout.splitlines()]
    assert ["✗", "get_stats", "Not", "found", "in", "server"] in lines
    assert ["+", "admin_reset", "Extra", "(not", "declared)"] in lines
    assert ["✓", "search_books", "Found", "in", "server"] in lines


def test_the_mcp_block_with_json_and_calls_gives_a_failed_envelope(tmp_path: Path) -> None:
    # A stale example: `query` became a string, and the server refuses the old integer.
    done = _run("verify", "--json", "--call-readonly", "-C", str(_project(tmp_path, "{query: 42}")))

    assert done.returncode == 1, done.stderr[-3000:]
    envelope = json.loads(done.stdout)
    assert envelope["success"] is True  # verify did its job; its verdict is data.status
    result = envelope["data"]
    assert result["status"] == "failed"
    assert [(t["name"], t["status"]) for t in result["tools"]] == [
        ("search_books", "found"),
        ("get_stats", "missing"),
        ("add_book", "found"),
        ("admin_reset", "extra"),
    ]
    tools = {t["name"]: t for t in result["tools"]}
    [refused] = tools["search_books"]["findings"]
    assert (refused["severity"], refused["code"]) == ("error", "CALL_IS_ERROR")
    assert 'example arguments {"query": 42}' in refused["message"]
    assert "findings" not in tools["add_book"]  # a write tool called with its example: a right answer


def test_a_good_server_given_by_command_exits_0_with_an_envelope(tmp_path: Path) -> None:
    done = _run("verify", "--json", "--command", _command("good"), "-C", str(tmp_path))

    assert done.returncode == 0, done.stderr[-3000:]
    envelope = json.loads(done.stdout)
    assert envelope["success"] is True
    result = envelope["data"]
    assert result["status"] == "passed"
    assert result["server"]["name"] == "good-books"
    summary = result["summary"]
    assert (
        summary["found"],
        summary["missing"],
        summary["extra"],
        summary["errors"],
        summary["warnings"],
    ) == (
        0,
        0,
        3,
        0,
        0,
    )  # nothing declared: every served tool is listed as extra, without a finding


@pytest.mark.parametrize(
    "sources",
    [
        ["--self", "--command", "python server.py"],
        ["--self-check", "--manifest", "pai-manifest.yaml"],
        ["--command", "python server.py", "--manifest", "pai-manifest.yaml"],
    ],
    ids=["self+command", "self-check+manifest", "command+manifest"],
)
def test_more_than_one_server_source_exits_2_with_invalid_input(tmp_path: Path, sources: list[str]) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: sources}\n", encoding="utf-8")

    as_json = _run("verify", "--json", *sources, "-C", str(tmp_path))
    human = _run("verify", *sources, "-C", str(tmp_path))

    assert as_json.returncode == 2, as_json.stderr[-3000:]
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "INVALID_INPUT"
    assert "give only one" in error["message"] and error["hint"]
    assert human.returncode == 2
    assert "INVALID_INPUT" in human.stderr and human.stdout == ""
