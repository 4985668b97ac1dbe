"""Identical failures told once, on the shop-broken example with a suite of sixty cases.

Sixty orders without a price each crash the orders API the same way (500, KeyError in its log):
the MCP reply holds one full failure with `sameCause.count` 60 and the other 59 case ids and
names, in at most 10 kB. Three reads of missing orders (404) are another cause and stay another group. The CLI
tells the same in text and JSON; junit.xml keeps one entry per case.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN, preflight_json
from support.docker import force_clean

pytestmark = [pytest.mark.anyio, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
CRASHES = 60
MISSING = 3
REPLY_LIMIT = 10_000


@pytest.fixture
def broken(tmp_path: Path) -> Any:
    """shop-broken with two suites: sixty orders without a price, three reads of missing orders."""
    shutil.copytree(REPO / "docs" / "examples" / "shop", tmp_path / "shop")
    root = tmp_path / "shop-broken"
    shutil.copytree(REPO / "docs" / "examples" / "shop-broken", root)
    crashes = {
        "name": "Orders without a price",
        "cases": [
            {
                "name": f"order {n} without a price",
                "request": {
                    "method": "POST",
                    "path": "/orders",
                    "service": "orders",
                    "json": {"sku": "book", "qty": 1, "note": f"order {n}"},
                },
                "expect": {"status": 400},
            }
            for n in range(1, CRASHES + 1)
        ],
    }
    missing = {
        "name": "Missing orders",
        "cases": [
            {
                "name": f"order {n} is found",
                "request": {"method": "GET", "path": f"/orders/missing-{n}", "service": "orders"},
                "expect": {"status": 200},
            }
            for n in range(1, MISSING + 1)
        ],
    }
    (root / "tests" / "crashes.yaml").write_text(yaml.safe_dump(crashes, sort_keys=False))
    (root / "tests" / "missing.yaml").write_text(yaml.safe_dump(missing, sort_keys=False))
    config = yaml.safe_load((root / "e2e.yaml").read_text())
    config["tests"]["suites"] = [
        {"id": "crashes", "file": "tests/crashes.yaml"},
        {"id": "missing", "file": "tests/missing.yaml"},
    ]
    (root / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        yield root
    finally:
        subprocess.run([str(BIN / "preflight"), "clean", "-C", str(root)], capture_output=True, timeout=180)
        force_clean(root)


def heads(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The failures that tell a group (with `sameCause`)."""
    return [
        c["failure"]
        for s in data["suites"]
        for c in s["cases"]
        if c["status"] == "failed" and c["failure"].get("sameCause")
    ]


def named(data: dict[str, Any]) -> set[str]:
    """Every failed case the reply names: listed ones and those named by their group."""
    listed = {c["id"] for s in data["suites"] for c in s["cases"] if c["status"] == "failed"}
    return listed | {case for f in heads(data) for case in f["sameCause"]["cases"]}


async def test_sixty_failures_of_one_cause_are_told_once_and_two_causes_stay_two(
    broken: Path, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(broken), "--call-budget", "300"],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    with anyio.fail_after(600), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            reply = await client.call_tool("preflight_run", {"filter": "crashes"}, read_timeout_seconds=400)
            text = reply.content[0].text  # type: ignore[union-attr]
            data = json.loads(text)["data"]
            assert data["status"] == "failed" and data["totals"]["failed"] == CRASHES
            assert len(text.encode()) <= REPLY_LIMIT, len(text.encode())
            [group] = heads(data)
            assert group["sameCause"]["count"] == CRASHES and len(group["sameCause"]["cases"]) == CRASHES - 1
            assert "status 500" in group["sameCause"]["cause"] and "KeyError" in group["sameCause"]["cause"]
            assert group["response"]["status"] == 500 and group["assertions"]  # told in full
            assert len(named(data)) == CRASHES  # every case still named, by id and by name
            others = [f"order {n} without a price" for n in range(2, CRASHES + 1)]
            assert group["sameCause"]["names"] == others
            crash_run = data["runId"]

            both = json.loads(
                (await client.call_tool("preflight_run", {}, read_timeout_seconds=400)).content[0].text
            )  # type: ignore[union-attr]
            data = both["data"]
            assert data["totals"]["failed"] == CRASHES + MISSING
            counts = sorted(f["sameCause"]["count"] for f in heads(data))
            assert counts == [MISSING, CRASHES]  # two causes, two groups: never merged
            assert len(named(data)) == CRASHES + MISSING

    # the CLI tells it the same way, in JSON and in text
    shown = preflight_json(broken, "runs", "show", crash_run)
    assert [f["sameCause"]["count"] for f in heads(shown["data"])] == [CRASHES]
    text_out = subprocess.run(
        [str(BIN / "preflight"), "runs", "show", crash_run, "-C", str(broken)], capture_output=True, text=True
    ).stdout
    assert f"the same cause failed {CRASHES} cases; the {CRASHES - 1} others:" in text_out
    assert text_out.count("✗ crashes.") == 1  # one failure told, not sixty
    # junit keeps one entry per case
    junit = ET.parse(broken / ".preflight" / "runs" / crash_run / "junit.xml")
    cases = junit.getroot().iter("testcase")
    assert sum(1 for case in cases if case.find("failure") is not None) == CRASHES
