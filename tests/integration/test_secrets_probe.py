"""No secret value reaches any output: the CLI (text and JSON), every run file, the MCP replies, the
container logs and every table of the run store (real Docker, real console scripts, real SQLite).

The fixture project's service prints each request's headers as a Python mapping and as JSON, and
its whole environment; a pytest suite compares its secret-named `env:` value; a shell suite's
command carries `password=…` and echoes the bare value; an inline test sends an API key.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN

SECRETS = (
    "svc-value-Q7pL2x",  # a service's `environment:` (SVC_SECRET_VALUE)
    "pin-value-8Wm3",  # a service variable named by `redact: [pin]`
    "hdr-bearer-K2v9Qx",  # an Authorization header, logged by the service
    "hdr-token-P5s1Lw",  # an X-Auth-Token header, logged by the service
    "pysuite-tok-V3n8Kd",  # a suite's `env:` (PYSUITE_TOKEN), in an assertion message
    "shell-pw-R4t9Zm",  # `password=` in a shell command, echoed bare by it
    "inline-key-J8d3Ws",  # an inline test's X-Api-Key header, logged by the service
)

INLINE = {
    "name": "inline key",
    "request": {"method": "GET", "url": "{{services.echo.url}}/inline", "headers": {"X-Api-Key": SECRETS[-1]}},
    "expect": {"status": 200},
}


def _leaks(text: str) -> list[str]:
    lowered = text.lower()
    return [secret for secret in SECRETS if secret.lower() in lowered]


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )


def _store_dump(path: Path) -> str:
    """Every row of every table of the SQLite store, as text."""
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert {"runs", "cases"} <= set(tables)
        return "\n".join(f"{table}: {row!r}" for table in tables for row in db.execute(f'SELECT * FROM "{table}"'))


async def _mcp_session(root: Path, log: Path) -> list[Any]:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(root)], env=dict(os.environ), cwd=root
    )
    replies: list[Any] = []
    with anyio.fail_after(240), log.open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            run = await client.call_tool("preflight_run", {"wait": "120s"})
            assert run.structured_content is not None, run.content
            run_id = run.structured_content["data"]["runId"]
            replies.append(run)
            replies.append(await client.call_tool("preflight_run_test", {"test": INLINE, "wait": "60s"}))
            replies.append(await client.call_tool("preflight_get_run", {"runId": run_id}))
            replies.append(await client.call_tool("preflight_logs", {"container": "echo", "lines": 200}))
            replies.append(await client.call_tool("preflight_clean", {}))
    return replies


@pytest.mark.anyio
async def test_no_secret_value_in_any_output_artifact_reply_or_store(
    project_dir: Callable[..., Path], tmp_path: Path
) -> None:
    root = project_dir("secrets-probe")
    text_run = _cli(root, "run", "--keep")
    json_run = _cli(root, "run", "--keep", "--json")
    run_id = json.loads(json_run.stdout)["data"]["runId"]
    text_logs = _cli(root, "logs", "echo", "--lines", "200")
    json_logs = _cli(root, "logs", "echo", "--json")
    done = [text_run, json_run, text_logs, json_logs, _cli(root, "get-run", run_id, "--json")]
    replies = await _mcp_session(root, tmp_path / "mcp.log")
    outputs = [part for d in done for part in (d.stdout, d.stderr)]
    outputs.append((tmp_path / "mcp.log").read_text(encoding="utf-8"))

    # The probe exercised what it means to: failures with logs, the service's dumps, three runs.
    assert text_run.returncode == 1 and "password=[redacted]" in text_run.stdout, text_run.stdout[-3000:]
    texts = [line["text"] for line in json.loads(json_logs.stdout)["data"]["lines"]]
    assert any(t.startswith("headers: {") and "'Authorization': '[redacted]'" in t for t in texts), texts
    assert any(t.startswith("headers json: {") and '"Authorization": "[redacted]"' in t for t in texts)
    assert any("'SVC_SECRET_VALUE': '[redacted]'" in t and "'GREETING': 'hello'" in t for t in texts)
    for reply in replies:
        assert reply.structured_content is not None and reply.structured_content["success"], reply.content
    assert len(list((root / ".preflight" / "runs").iterdir())) == 4

    for number, text in enumerate(outputs):
        assert _leaks(text) == [], (number, text[-3000:])
    for reply in replies:
        assert _leaks(json.dumps(reply.structured_content)) == []
        assert _leaks("".join(getattr(part, "text", "") for part in reply.content)) == []
    files = [p for p in (root / ".preflight").rglob("*") if p.is_file()]
    assert any(p.name == "junit.xml" for p in files) and any(p.parent.name == "cases" for p in files)
    for path in files:
        assert _leaks(path.read_bytes().decode("utf-8", "replace")) == [], path
    assert _leaks(_store_dump(root / ".preflight" / "preflight.db")) == []
