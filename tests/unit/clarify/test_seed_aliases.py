"""The `preflights` tool aliases: its argument names in, its reply shapes out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest
from mcp import Client

from preflight_sdk.clarify import clarify, read_architecture
from preflight_sdk.core.errors import InputError, PreflightError, StateError
from preflight_sdk.faces.mcp.aliases import (
    READ_ARCHITECTURE_ALIAS,
    REQUIRE_CLARIFICATION_ALIAS,
    AliasSpec,
    seed_error,
)
from preflight_sdk.faces.mcp.server import PreflightMcp


async def _call(alias: AliasSpec, repo: Path, arguments: dict[str, Any]) -> dict[str, Any]:
    """Do what the MCP face does with an alias: decode, call the operation, convert, encode."""
    args = msgspec.convert(arguments, alias.input_type)
    kwargs = alias.to_kwargs(args, str(repo))
    project = Path(kwargs.pop("project_path", repo))  # the alias may name the project
    result = await (
        clarify(project, **kwargs) if alias is REQUIRE_CLARIFICATION_ALIAS else read_architecture(project)
    )
    reply = alias.from_result(result)
    assert isinstance(reply, alias.output_type)
    data = json.loads(msgspec.json.encode(reply))
    assert isinstance(data, dict)
    return data


def test_the_input_schemas_use_the_seed_argument_names() -> None:
    schema = msgspec.json.schema(REQUIRE_CLARIFICATION_ALIAS.input_type)
    body = schema["$defs"][schema["$ref"].split("/")[-1]]
    assert set(body["properties"]) == {
        "user_intention",
        "optional_context",
        "session_id",
        "answers",
        "preferences",
        "repo_path",
    }
    assert body["required"] == ["user_intention"]
    read = msgspec.json.schema(READ_ARCHITECTURE_ALIAS.input_type)
    assert set(read["$defs"][read["$ref"].split("/")[-1]]["properties"]) == {"repo_path"}
    assert REQUIRE_CLARIFICATION_ALIAS.name == "require_clarification"
    assert READ_ARCHITECTURE_ALIAS.name == "read_architecture"


@pytest.mark.anyio
async def test_the_seed_example_7_2_runs_through_the_alias(repo: Path) -> None:
    turn1 = await _call(REQUIRE_CLARIFICATION_ALIAS, repo, {"user_intention": "Add authentication"})
    assert turn1["status"] == "needs_clarification"
    assert set(turn1) == {"status", "session_id", "questions", "progress"}
    assert turn1["progress"] == {"asked_so_far": len(turn1["questions"]), "answered": 0}
    assert turn1["questions"][0] == {
        "id": "auth_strategy",
        "type": "single_choice",
        "question": "Which authentication strategy should the project use?",
        "options": ["OAuth", "Email/Password", "Magic Links", "SAML", "Other (specify)"],
    }
    turn2 = await _call(
        REQUIRE_CLARIFICATION_ALIAS,
        repo,
        {
            "user_intention": "Add authentication",
            "session_id": turn1["session_id"],
            "answers": {"auth_strategy": "OAuth", "auth_library": "next-auth"},
            "repo_path": None,
        },
    )
    assert turn2["status"] == "completed"
    assert [a["type"] for a in turn2["artifacts_created"]] == ["adr", "task", "projection"]
    assert turn2["artifacts_created"][0]["path"].startswith("docs/adr/")
    assert "summary" in turn2 and "warning" not in turn2

    arch = await _call(READ_ARCHITECTURE_ALIAS, repo, {})
    assert arch == {
        "status": "success",
        "architecture": {
            "uid": turn2["artifacts_created"][0]["uid"],
            "categories": {"Authentication": {"Library": "NextAuth.js", "Strategy": "OAuth"}},
        },
        "source_file": "docs/ARCHITECTURE_STATE.md",
    }


@pytest.mark.anyio
async def test_read_architecture_alias_without_adr_has_a_null_uid(repo: Path) -> None:
    assert await _call(READ_ARCHITECTURE_ALIAS, repo, {"repo_path": str(repo)}) == {
        "status": "success",
        "architecture": {"uid": None, "categories": {}},
        "source_file": "docs/ARCHITECTURE_STATE.md",
    }


@pytest.mark.anyio
async def test_preferences_force_adr_and_non_string_answers_are_mapped(repo: Path) -> None:
    args = msgspec.convert(
        {
            "user_intention": "Fix typo in login button",
            "preferences": {"force_adr": True},
            "answers": {"n": 3, "flag": True, "none": None},
            "optional_context": "ctx",
        },
        REQUIRE_CLARIFICATION_ALIAS.input_type,
    )
    assert REQUIRE_CLARIFICATION_ALIAS.to_kwargs(args, None) == {
        "intention": "Fix typo in login button",
        "answers": {"n": "3", "flag": "true"},
        "session_id": None,
        "context": "ctx",
        "force_adr": True,
    }
    turn1 = await _call(
        REQUIRE_CLARIFICATION_ALIAS,
        repo,
        {"user_intention": "Fix typo in login button", "preferences": {"force_adr": True}},
    )
    assert turn1["questions"][0]["id"] == "auth_strategy"


@pytest.mark.anyio
async def test_the_llm_fallback_warning_uses_the_seed_shape(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_LLM_PROVIDER", "openai")
    reply = await _call(REQUIRE_CLARIFICATION_ALIAS, repo, {"user_intention": "Add authentication"})
    assert reply["warning"] == "llm_fallback"
    assert "OPENAI_API_KEY" in reply["message"]


def _git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.mark.anyio
async def test_repo_path_chooses_the_repository_the_aliases_work_in(repo: Path, tmp_path: Path) -> None:
    other = _git_repo(tmp_path / "other")
    (other / "src" / "auth").mkdir(parents=True)
    # The server's own project is `repo`; repo_path names a repository beside it.
    app = PreflightMcp(default_project=str(repo), allow_other_projects=True)
    try:
        async with Client(app.server) as client:

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                reply = await client.call_tool(name, arguments)
                assert reply.structured_content is not None
                return reply.structured_content

            start = {"user_intention": "Add authentication", "repo_path": str(other / "src" / "auth")}
            first = await call("require_clarification", start)
            assert first["status"] == "needs_clarification"
            answers = {"auth_strategy": "OAuth", "auth_library": "Clerk"}
            done = await call(
                "require_clarification", {**start, "session_id": first["session_id"], "answers": answers}
            )
            assert done["status"] == "completed"
            theirs = await call("read_architecture", {"repo_path": str(other)})
            ours = await call("read_architecture", {})
            missing = await call("require_clarification", {**start, "repo_path": str(tmp_path / "nowhere")})
            no_git = await call("read_architecture", {"repo_path": str(tmp_path)})
    finally:
        await app.shutdown()
    # Walked up from other/src/auth to `other`: every file is there, none in the server's project.
    assert all((other / a["path"]).is_file() for a in done["artifacts_created"])
    assert not (repo / "docs").exists()
    assert theirs["architecture"]["categories"] == {
        "Authentication": {"Library": "Clerk", "Strategy": "OAuth"}
    }
    assert ours["architecture"] == {"uid": None, "categories": {}}
    assert missing["status"] == no_git["status"] == "error"
    assert missing["error"]["code"] == no_git["error"]["code"] == "REPO_NOT_FOUND"
    assert missing["error"]["details"] == {"path": str(tmp_path / "nowhere")}


def test_without_repo_path_the_server_project_is_used() -> None:
    args = msgspec.convert({"user_intention": "x", "repo_path": ""}, REQUIRE_CLARIFICATION_ALIAS.input_type)
    assert "project_path" not in REQUIRE_CLARIFICATION_ALIAS.to_kwargs(args, None)
    assert READ_ARCHITECTURE_ALIAS.to_kwargs(msgspec.convert({}, READ_ARCHITECTURE_ALIAS.input_type), None) == {}


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (StateError("gone", code="SESSION_EXPIRED", hint="restart"), "SESSION_EXPIRED"),
        (InputError("no repo", code="REPO_NOT_FOUND", hint="git init"), "REPO_NOT_FOUND"),
        (PreflightError("disk", code="INTERNAL", details={"path": "p", "errno": 28}), "FILESYSTEM_ERROR"),
    ],
)
def test_errors_convert_to_the_seed_error_reply(error: PreflightError, code: str) -> None:
    data = json.loads(msgspec.json.encode(seed_error(error)))
    assert data["status"] == "error"
    assert data["error"]["code"] == code
    assert data["error"]["message"] == error.message
    assert data["error"].get("recovery_hint") == error.hint
