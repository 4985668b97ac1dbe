"""Bad input met by the real faces: a coded error with a hint, never INTERNAL, a traceback or an
absolute path (a long artifact name, a test with a CRLF method or an unparsable URL, a `wait` of
thousands of years)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN

CONFIG = """\
project: {name: bad-inputs}
tests:
  suites:
    - {id: ok, runner: shell, command: ["true"]}
"""


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    done = subprocess.run(
        [str(BIN / "preflight"), "run", "-C", str(root), "--json"], capture_output=True, text=True, timeout=120
    )
    return root, json.loads(done.stdout)["data"]["runId"]


@pytest.mark.parametrize("name", ["a" * 256, "cases/" + "b" * 300 + ".json", "c/" * 600])
def test_a_long_artifact_name_is_invalid_input_on_the_cli(project: tuple[Path, str], name: str) -> None:
    root, run_id = project
    done = subprocess.run(
        [str(BIN / "preflight"), "get-artifact", run_id, "--name", name, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "INVALID_INPUT" and error["details"]["field"] == "name", error
    assert "Traceback" not in done.stderr and str(root) not in done.stdout
    assert done.returncode == 2


async def _session(root: Path, tmp_path: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=["--project", str(root)], env=dict(os.environ), cwd=tmp_path
    )
    replies: list[dict[str, Any]] = []
    with anyio.fail_after(90), (tmp_path / "server.log").open("w", encoding="utf-8") as err:
        async with Client(stdio_client(params, errlog=err)) as client:  # type: ignore[arg-type]
            for tool, arguments in calls:
                reply = await client.call_tool(tool, arguments)
                assert reply.structured_content is not None
                replies.append(reply.structured_content)
    return replies


@pytest.mark.anyio
async def test_bad_tests_names_and_waits_are_refused_over_mcp(project: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = project
    crlf = {"request": {"method": "GET\r\nX-Injected: 1", "url": "http://[::1/health"}, "expect": {"status": 200}}
    replies = await _session(
        root,
        tmp_path,
        [
            ("preflight_save_test", {"id": "crlf", "name": "crlf", "test": crlf}),
            ("preflight_save_test", {"id": "ftp", "name": "ftp", "test": {"request": {"url": "ftp://host/x"}}}),
            ("preflight_get_artifact", {"runId": run_id, "name": "a" * 256}),
            ("preflight_run", {"wait": "99999999999h"}),
            ("preflight_get_run", {"runId": run_id, "wait": "25h"}),
            ("preflight_list_tests", {}),
        ],
    )
    saved, ftp, artifact, run, polled, listed = replies
    assert saved["error"]["code"] == "INVALID_INPUT", saved
    paths = [p["path"] for p in saved["error"]["details"]["problems"]]
    assert paths == ["$.test.request.method", "$.test.request.url"]
    assert ftp["error"]["code"] == "INVALID_INPUT"
    assert ftp["error"]["details"]["problems"][0]["path"] == "$.test.request.url"
    assert artifact["error"]["code"] == "INVALID_INPUT" and str(root) not in json.dumps(artifact)
    for refused in (run, polled):
        assert refused["success"] is False and refused["error"]["code"] == "INVALID_INPUT", refused
        assert "24h" in refused["error"]["message"]
    assert listed["data"]["tests"] == []  # nothing was saved


@pytest.mark.anyio
async def test_path_like_artifact_names_are_coded_errors_over_mcp(project: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = project
    names = [".", "", "..", "/", "./", "./.", "cases/", "cases", "cases/.", "//"]
    replies = await _session(root, tmp_path, [("preflight_get_artifact", {"runId": run_id, "name": n}) for n in names])
    for name, reply in zip(names, replies, strict=True):
        error = reply["error"]
        assert error["code"] in ("INVALID_INPUT", "ARTIFACT_NOT_FOUND"), (name, error)
        assert error["hint"] and str(root) not in json.dumps(reply), (name, reply)
    by_name = dict(zip(names, replies, strict=True))
    # A name that is no file at all is refused as input; a folder of the run is no artifact of it.
    for name in (".", "", "..", "/", "./", "./.", "//"):
        assert by_name[name]["error"]["code"] == "INVALID_INPUT", name
        assert by_name[name]["error"]["details"]["field"] == "name", name
    for name in ("cases/", "cases", "cases/."):
        assert by_name[name]["error"]["code"] == "ARTIFACT_NOT_FOUND", name
        assert "report.json" in by_name[name]["error"]["details"]["artifacts"], name
