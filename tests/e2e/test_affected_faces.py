"""A carried case names the run its verdict comes from on every face: `preflight test --affected` at
a terminal (text and `--json`), `preflight_run` with `affected: true` over real stdio (the official
MCP client), the run's report.html (opened in Chromium) and its junit.xml. The project's
environment is one HTTP mock, so no Docker is needed: it outlives each command in the detached
mock host until `clean`.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.browser import CHROMIUM_ARGS, ensure_chromium
from support.cli import BIN, preflight_json

pytestmark = pytest.mark.anyio


def _project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    routes = [{"method": "GET", "path": "/ok/:n", "response": {"status": 200, "body": {"ok": True}}}]
    (root / "e2e.yaml").write_text(
        json.dumps(
            {
                "version": "1",
                "project": {"name": "affected-faces"},
                "mocks": {"api": {"port": 0, "routes": routes}},
                "tests": {
                    "suites": [
                        {"id": "api", "file": "tests/api.yaml"},
                        {"id": "other", "file": "tests/other.yaml"},
                    ]
                },
            }
        )
    )
    for suite, count in (("api", 3), ("other", 2)):
        cases = [
            {
                "name": f"{suite} {i}",
                "request": {"url": "{{mocks.api.url}}/ok/" + str(i)},
                "expect": {"status": 200},
            }
            for i in range(count)
        ]
        (root / "tests" / f"{suite}.yaml").write_text(json.dumps({"name": suite, "cases": cases}))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Any:
    root = _project(tmp_path / "p")
    yield root
    subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=120)


def test_the_cli_names_the_run_each_carried_verdict_comes_from(project: Path) -> None:
    first = preflight_json(project, "test")["data"]
    assert first["status"] == "passed"
    text = subprocess.run(
        [str(BIN / "preflight"), "test", "--affected", "-C", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert text.returncode == 0, text.stderr
    assert f"5 case(s) carried from run {first['runId']}" in text.stderr  # the verdict line
    assert f"5 cases carried from run {first['runId']}" in text.stdout  # the affected block
    assert "0 passed, 0 failed, 3 carried" in text.stdout  # the api suite's line
    # an edit of one suite's file: it runs, the other is carried
    other = project / "tests" / "other.yaml"
    other.write_text(other.read_text().replace('"other 1"', '"other one"'))
    reply = preflight_json(project, "test", "--affected")["data"]
    cases = {c["id"]: c for s in reply["suites"] for c in s["cases"]}
    assert {c["status"] for i, c in cases.items() if i.startswith("api.")} == {"carried"}
    assert {cases[i]["carried"]["runId"] for i in cases if i.startswith("api.")} == {first["runId"]}
    assert {c["status"] for i, c in cases.items() if i.startswith("other.")} == {"passed"}
    assert reply["totals"] == {"passed": 2, "failed": 0, "skipped": 0, "total": 2, "carried": 3}
    assert (
        reply["affected"]["changes"][0]["kind"] == "suite"
        and reply["affected"]["changes"][0]["name"] == "other"
    )


async def test_mcp_run_with_affected_carries_verdicts_naming_their_run(project: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(project)],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(120), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["preflight_run"].input_schema["properties"]
            assert (
                schema["affected"]["type"] == "boolean"
                and "failFast" in schema
                and "affectedWithin" in schema
            )
            first = (await client.call_tool("preflight_run", {})).structured_content
            assert first is not None and first["data"]["status"] == "passed"
            again = (await client.call_tool("preflight_run", {"affected": True})).structured_content
            assert again is not None and again["success"] is True
            data = again["data"]
            carried = [c for s in data["suites"] for c in s["cases"]]
            assert {c["status"] for c in carried} == {"carried"} and len(carried) == 5
            assert {c["carried"]["runId"] for c in carried} == {first["data"]["runId"]}
            assert data["affected"]["carriedFrom"][0] == {
                "runId": first["data"]["runId"],
                "startedAt": carried[0]["carried"]["startedAt"],
                "age": data["affected"]["carriedFrom"][0]["age"],
                "cases": 5,
            }
            assert f"carried from run {first['data']['runId']}" in data["summary"]
            bad = (
                await client.call_tool("preflight_run", {"affected": True, "affectedWithin": "later"})
            ).structured_content
            assert bad is not None and bad["success"] is False and bad["error"]["code"] == "INVALID_INPUT"
            await client.call_tool("preflight_clean", {})


@contextmanager
def _page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(ensure_chromium()), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_report_html_and_junit_show_each_carried_case_with_its_run(project: Path) -> None:
    first = preflight_json(project, "test")["data"]
    again = preflight_json(project, "test", "--affected")["data"]
    junit = next(a["path"] for a in again["artifacts"] if a["name"] == "junit.xml")
    tests = ElementTree.parse(junit).getroot().iter("testcase")
    sources = [
        p.get("value")
        for case in tests
        for p in case.iter("property")
        if p.get("name") == "preflight.carriedFrom"
    ]
    assert sources == [first["runId"]] * 5
    page_path = next(a["path"] for a in again["artifacts"] if a["name"] == "report.html")
    with _page() as page:
        page.goto(Path(page_path).as_uri())
        rows = page.locator("tr[data-status=carried]")
        assert rows.count() == 5
        assert "carried from run" in rows.first.inner_text() and first["runId"] in rows.first.inner_text()
        link = rows.first.locator("a").first.get_attribute("href")
        assert link == f"../{first['runId']}/report.html"
        page.goto(Path(page_path).parent.joinpath(link).resolve().as_uri())
        assert first["runId"] in page.title()
        page.goto(Path(page_path).as_uri())
        assert "5 carried" in page.locator(".pfr-meta").inner_text()
        assert "could be affected" in page.locator(".pfr-affected-line").inner_text()
