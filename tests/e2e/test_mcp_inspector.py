"""Every tool called through the MCP Inspector CLI with every optional argument, as `key=value` text.

A generic client knows only the tool's input schema: the Inspector turns `keep=500` into the
number 500 only when `type` is one plain string. Every argument of every tool must arrive in the
type its schema declares (no INVALID_INPUT), and the Inspector's portability check (`--strict`)
finds nothing to object to in any input schema.
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support.cli import BIN
from support.node import require_node_tools

REPO = Path(__file__).resolve().parents[2]
RUN_ID = "01JDQ8ZK5X7N3V9G2H4M6P8R0T"  # well formed, names no run

# A value for each argument name, written as on a command line (the Inspector converts it).
VALUES = {
    "configFile": "e2e.yaml",
    "service": "none",
    "wait": "0s",
    "idempotencyKey": "inspector-key",
    "timeout": "30s",
    "callTimeout": "20s",
    "since": "5m",
    "followFor": "1s",
    "filter": "quick",
    "maxAge": "30d",
    "status": "passed",
    "suite": "quick",
    "kind": "test",
    "before": RUN_ID,
    "testId": "health",
    "tag": "smoke",
    "description": "checks health",
    "mockName": "payments",
    "manifest": "manifest.yaml",
    "command": "python3 -m mcp_server_that_is_not_there",
    "intention": "Add authentication",
    "sessionId": "s-none",
    "session_id": "s-none",
    "context": "from the inspector",
    "user_intention": "Add authentication",
    "optional_context": "from the inspector",
    "runId": RUN_ID,
    "base": RUN_ID,
    "head": RUN_ID,
    "name": "report.json",
    "id": "health",
    "path": "saved.yaml",
    "suiteId": "smoke",
    "container": "api",
    "lines": "5",
    "limit": "5",
    "offset": "0",
    "keep": "500",
    "tags": '["smoke"]',
    "testIds": '["health"]',
    "shards": '["local"]',
    "test": '{"request": {"url": "http://127.0.0.1:9/health"}}',
    "answers": "{}",
    "preferences": "{}",
    "record": "payments=http://127.0.0.1:9",
    "upstream": "http://127.0.0.1:9",
    "headers": '["Authorization: Bearer sk_test_inspector"]',
    "affectedWithin": "1d",
    "source": "collection.json",
    "output": "tests/imported.yaml",
    "hosts": '{"api.example.test": "payments"}',
    "environment": "env.json",
}
BOOLEANS = {"keep": "true", "force": "true", "images": "false", "fresh": "false", "selfCheck": "false"}
# Arguments a tool accepts only one at a time: each gets a call of its own.
APART = {
    "preflight_verify": ("command", "manifest"),
    "preflight_run_test": ("testId", "test"),
    "preflight_export_tests": ("testIds", "suiteId"),
    "preflight_run": ("record", "shards"),
}


def inspector(node_dir: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(node_dir / "node_modules" / ".bin" / "inspector"),
            "--cli",
            "--connect-timeout",
            "60000",  # a busy machine starts a server slowly
            str(BIN / "preflight-mcp"),
            "--project",
            str(project),
            "--allow-verify-command",  # so that verify's `command` is tried, not refused
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=project,
        env={**os.environ, "PREFLIGHT_WARM_PYTEST": "0"},
    )


def value_of(name: str, schema: dict[str, Any], project: Path) -> str:
    if name in ("projectPath", "repo_path"):
        return str(project)
    if schema.get("type") == "boolean":
        return BOOLEANS.get(name, "true")
    return VALUES[name]


def calls(tool: dict[str, Any], project: Path) -> list[dict[str, str]]:
    """Argument sets whose union holds every argument of `tool` (all of them, bar `APART` ones)."""
    properties: dict[str, Any] = tool["inputSchema"]["properties"]
    apart = APART.get(tool["name"], ())
    common = {k: value_of(k, v, project) for k, v in properties.items() if k not in apart}
    return [{**common, name: value_of(name, properties[name], project)} for name in apart] or [common]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one mock and no services, in a git repository (clarify writes its files there),
    with a Postman collection and environment to import."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: inspected}\nmocks:\n  payments: {port: 0}\ntests:\n  suites:\n'
        "    - {id: quick, runner: shell, command: [sh, -c, 'echo quick ok']}\n"
    )
    collection = {
        "info": {"name": "inspected"},
        "item": [{"name": "health", "request": {"method": "GET", "url": "https://api.example.test/health"}}],
    }
    (root / "collection.json").write_text(json.dumps(collection))
    (root / "env.json").write_text('{"name": "local", "values": []}')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_the_inspector_cli_calls_every_tool_with_every_optional_argument(project: Path) -> None:
    node_dir = require_node_tools()
    listed = inspector(node_dir, project, "--method", "tools/list", "--strict")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "Path: inputSchema" not in listed.stderr  # no portability problem in any input schema
    tools = json.loads(listed.stdout)["tools"]
    assert len(tools) > 20
    planned = [(tool["name"], arguments) for tool in tools for arguments in calls(tool, project)]

    def call(name: str, arguments: dict[str, str]) -> str | None:
        pairs = [f"{k}={v}" for k, v in arguments.items()]
        done = inspector(
            node_dir, project, "--method", "tools/call", "--tool-name", name, "--tool-arg", *pairs
        )
        if not done.stdout:
            return f"{name}: no reply: {done.stderr[-1500:]}"
        reply = json.loads(done.stdout)
        text = json.dumps(reply.get("structuredContent") or reply)
        return f"{name} {pairs}: {text[:600]}" if "INVALID_INPUT" in text or "Expected `" in text else None

    # Each call is a new Inspector and a new server (about 4 s): three at a time.
    with ThreadPoolExecutor(max_workers=3) as pool:
        refused = [problem for problem in pool.map(lambda c: call(*c), planned) if problem]
    assert not refused, "\n".join(refused)
    assert len(planned) > len(tools)


def test_the_inspectors_strict_check_finds_nothing_in_any_input_or_output_schema(project: Path) -> None:
    node_dir = require_node_tools()
    listed = inspector(node_dir, project, "--method", "tools/list", "--strict")
    assert listed.returncode == 0, listed.stderr[-2000:]
    findings = [line for line in listed.stderr.splitlines() if line.startswith(("Warning:", "Error:"))]
    paths = [line.strip() for line in listed.stderr.splitlines() if line.strip().startswith("Path:")]
    assert not findings, f"{len(findings)} findings, e.g. {paths[:5]}"


def test_every_input_property_carries_its_own_type(project: Path) -> None:
    node_dir = require_node_tools()
    listed = inspector(node_dir, project, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr[-2000:]
    # A client that resolves no `$ref` (the Inspector before 2.x, many hosts) converts a
    # `key=value` argument by the `type` written on the property itself.
    untyped = [
        f"{tool['name']}.{name}"
        for tool in json.loads(listed.stdout)["tools"]
        for name, prop in tool["inputSchema"].get("properties", {}).items()
        if not {"type", "enum", "const"} & set(prop)
    ]
    assert not untyped, untyped


def test_require_clarification_takes_preferences_as_an_object_from_the_inspector(project: Path) -> None:
    node_dir = require_node_tools()
    pairs = ["user_intention=Fix a typo in the README", 'preferences={"force_adr": true}']
    done = inspector(
        node_dir,
        project,
        "--method",
        "tools/call",
        "--tool-name",
        "require_clarification",
        "--tool-arg",
        *pairs,
    )
    reply = json.loads(done.stdout)["structuredContent"]
    assert reply["status"] in ("needs_clarification", "completed"), reply
