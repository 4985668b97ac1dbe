"""clarify through the real faces: a terminal session under a pseudo-terminal, and MCP over stdio
with both our tool names and the seed's own (`require_clarification`, `read_architecture`)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = Path(sys.executable).parent


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _read_until(fd: int, marker: str, seen: list[str], timeout: float = 30, *, after: int = 0) -> None:
    """Read until `marker` shows up in the transcript past its first `after` characters."""
    deadline = time.monotonic() + timeout
    while marker not in "".join(seen)[after:]:
        assert time.monotonic() < deadline, f"never saw {marker!r} in:\n{''.join(seen)}"
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen.append(os.read(fd, 4096).decode(errors="replace"))
            except OSError:
                return


def test_in_a_terminal_clarify_asks_each_question_and_writes_the_files(repo: Path) -> None:
    main, secondary = pty.openpty()
    with subprocess.Popen(
        [str(BIN / "preflight"), "clarify", "Add authentication", "-C", str(repo)],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env={**os.environ, "TERM": "dumb"},
    ) as child:
        os.close(secondary)
        seen: list[str] = []
        try:
            _read_until(main, "Which authentication strategy", seen)
            _read_until(main, ">", seen)
            os.write(main, b"1\n")  # OAuth
            _read_until(main, "Which authentication library", seen)
            _read_until(main, ">", seen)
            os.write(main, b"Other: Lucia\n")
            answered = len("".join(seen))
            while child.poll() is None:
                # A new prompt, not one already answered: writing ahead of the prompts would fill
                # the terminal's input buffer while the command finishes, and block this test.
                _read_until(main, ">", seen, timeout=30, after=answered)
                answered = len("".join(seen))
                if child.poll() is None:
                    os.write(main, b"\n")  # leave the optional questions unanswered
        finally:
            child.wait(30)
            os.close(main)
    transcript = "".join(seen)
    assert child.returncode == 0, transcript
    adrs = list((repo / "docs" / "adr").glob("*.md"))
    assert len(adrs) == 1
    text = adrs[0].read_text()
    assert "OAuth" in text and "Lucia" in text
    assert (repo / "docs" / "CURRENT_TASK.md").is_file()
    assert (repo / "docs" / "ARCHITECTURE_STATE.md").is_file()


def test_architecture_command_reads_what_clarify_wrote(repo: Path) -> None:
    env = dict(os.environ)
    first = subprocess.run(
        [
            str(BIN / "preflight"),
            "clarify",
            "Add authentication",
            "-C",
            str(repo),
            "--json",
            "--answers",
            json.dumps({"auth_strategy": "OAuth", "auth_library": "NextAuth.js"}),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["data"]["status"] == "completed"
    # The command is named like the tool (preflight_read_architecture); `architecture` is its alias.
    for name in ("read-architecture", "architecture"):
        done = subprocess.run(
            [str(BIN / "preflight"), name, "-C", str(repo), "--json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        categories = json.loads(done.stdout)["data"]["categories"]
        assert categories["Authentication"]["Strategy"] == "OAuth"


@pytest.mark.anyio
@pytest.mark.parametrize("names", ["ours", "seed"])
async def test_an_agent_clarifies_in_two_calls_over_stdio(repo: Path, tmp_path: Path, names: str) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(repo)], env=dict(os.environ), cwd=tmp_path
    )
    with anyio.fail_after(60), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                reply = await client.call_tool(name, arguments)
                assert reply.structured_content is not None and not reply.is_error, reply
                jsonschema.Draft202012Validator(tools[name].output_schema or {}).validate(
                    reply.structured_content
                )
                return reply.structured_content

            if names == "ours":
                first = (await call("preflight_clarify", {"intention": "Add authentication"}))["data"]
                assert first["status"] == "needs_clarification" and first["questions"]
                second = await call(
                    "preflight_clarify",
                    {
                        "intention": "Add authentication",
                        "sessionId": first["sessionId"],
                        "answers": {"auth_strategy": "OAuth", "auth_library": "NextAuth.js"},
                    },
                )
                assert second["data"]["status"] == "completed"
                kinds = sorted(a["type"] for a in second["data"]["artifacts"])
                state = (await call("preflight_read_architecture", {}))["data"]
            else:
                first = await call("require_clarification", {"user_intention": "Add authentication"})
                assert first["status"] == "needs_clarification" and first["questions"]
                second = await call(
                    "require_clarification",
                    {
                        "user_intention": "Add authentication",
                        "session_id": first["session_id"],
                        "answers": {"auth_strategy": "OAuth", "auth_library": "NextAuth.js"},
                    },
                )
                assert second["status"] == "completed"
                kinds = sorted(a["type"] for a in second["artifacts_created"])
                state = (await call("read_architecture", {}))["architecture"]
    assert kinds == ["adr", "projection", "task"]
    assert state["categories"]["Authentication"]["Strategy"] == "OAuth"
    assert len(list((repo / "docs" / "adr").glob("*.md"))) == 1


def _mcp_params(repo: Path, tmp_path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(repo)], env=dict(os.environ), cwd=tmp_path
    )


@pytest.mark.anyio
async def test_the_cli_continues_a_session_an_mcp_client_started(repo: Path, tmp_path: Path) -> None:
    with anyio.fail_after(60), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(_mcp_params(repo, tmp_path), errlog=errlog)) as client:  # type: ignore[arg-type]
            reply = await client.call_tool("preflight_clarify", {"intention": "Add authentication"})
    assert reply.structured_content is not None and not reply.is_error, reply
    first = reply.structured_content["data"]
    assert first["status"] == "needs_clarification"
    # The MCP server has exited: the session lives on disk, in the repository.
    assert (repo / ".preflight" / "clarify" / "sessions").is_dir()
    done = subprocess.run(
        [
            str(BIN / "preflight"),
            "clarify",
            "Add authentication",
            "-C",
            str(repo),
            "--session-id",
            first["sessionId"],
            "--answers",
            json.dumps({"auth_strategy": "Magic Links", "auth_library": "Clerk"}),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["success"] is True and envelope["data"]["status"] == "completed"
    assert sorted(a["type"] for a in envelope["data"]["artifacts"]) == ["adr", "projection", "task"]
    assert all((repo / a["path"]).is_file() for a in envelope["data"]["artifacts"])
    adr = next(a["path"] for a in envelope["data"]["artifacts"] if a["type"] == "adr")
    assert "Magic Links" in (repo / adr).read_text() and "Clerk" in (repo / adr).read_text()
    # Completed: the session is gone, for the CLI and for MCP alike.
    again = subprocess.run(
        [
            str(BIN / "preflight"),
            "clarify",
            "x",
            "-C",
            str(repo),
            "--session-id",
            first["sessionId"],
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode != 0 and json.loads(again.stdout)["error"]["code"] == "SESSION_NOT_FOUND"


@pytest.mark.anyio
async def test_an_unknown_session_is_an_error_reply_over_stdio(repo: Path, tmp_path: Path) -> None:
    unknown = "0123456789abcdef0123456789abcdef"
    with anyio.fail_after(60), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(_mcp_params(repo, tmp_path), errlog=errlog)) as client:  # type: ignore[arg-type]
            ours = await client.call_tool(
                "preflight_clarify",
                {
                    "intention": "Add authentication",
                    "sessionId": unknown,
                    "answers": {"auth_strategy": "OAuth"},
                },
            )
            seed = await client.call_tool(
                "require_clarification", {"user_intention": "Add authentication", "session_id": unknown}
            )
            alive = await client.call_tool("preflight_read_architecture", {})  # the server carries on
    assert ours.is_error is True and ours.structured_content is not None
    envelope = ours.structured_content
    assert envelope["success"] is False and "data" not in envelope
    error = envelope["error"]
    assert error["code"] == "SESSION_NOT_FOUND" and error["retryable"] is False
    assert unknown in error["message"] and "session_id" in error["hint"]
    assert json.loads(ours.content[0].text) == envelope  # type: ignore[union-attr]
    assert seed.is_error is True and seed.structured_content is not None
    assert seed.structured_content["status"] == "error"
    assert seed.structured_content["error"]["code"] == "SESSION_NOT_FOUND"
    assert seed.structured_content["error"]["recovery_hint"]
    assert alive.is_error is False
    assert not (repo / "docs").exists()


@pytest.mark.anyio
async def test_repo_path_is_named_as_itself_and_relative_to_the_servers_project(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"  # the server's working directory: no repository there
    outside = tmp_path / "outside"
    elsewhere.mkdir()
    outside.mkdir()
    (repo / "sub").mkdir()
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(repo)], env=dict(os.environ), cwd=elsewhere
    )
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_architecture", {"repo_path": "."}),
        ("read_architecture", {"repo_path": "sub"}),
        ("read_architecture", {"repo_path": str(outside)}),
        ("require_clarification", {"user_intention": "Add authentication", "repo_path": "x" * 5000}),
        ("read_architecture", {"repo_path": "missing/folder"}),
    ]
    with anyio.fail_after(60), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            replies = [(await client.call_tool(name, arguments)).structured_content or {} for name, arguments in calls]
    here, sub, out, long, missing = replies
    assert here["status"] == "success" and sub["status"] == "success", (here, sub)
    for refused in (out, long):
        error = refused["error"]
        assert refused["status"] == "error" and error["details"]["field"] == "repo_path", refused
        assert "projectPath" not in json.dumps(refused), refused
        assert "repo_path" in error["message"] + error["recovery_hint"], refused
    assert out["error"]["code"] == "PROJECT_NOT_ALLOWED" and long["error"]["code"] == "INVALID_INPUT"
    assert missing["error"]["code"] == "REPO_NOT_FOUND"
    assert missing["error"]["details"]["path"] == str(repo / "missing" / "folder"), missing
