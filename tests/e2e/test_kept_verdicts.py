"""A kept environment gives the verdict a fresh one would, on every face.

One project stands for the state a run leaves behind: a copy of the shop-db example (orders its
suite writes to PostgreSQL) with a `counter` service holding a count in memory (each POST adds
one; its suite expects 1, then 2) and a `payments` mock whose `POST /charges` answers a sequence
(its suite expects the first two steps). A fresh environment passes every case; without a reset
the second run would see three orders more, a count of 3 and the sequence's third step.

The same environment serves every face in turn, each running three times in a row, so every run
after the very first is on an environment that already served one: `preflight run --keep`
(subprocesses), a real `preflight-mcp` over stdio (an official MCP client; `run` keeps by
default), `preflight watch --keep` (a file edit between verdicts) and `Project.run` (keep by
default). A last test shows the opt-out: with `reset: none` the second run sees the first's count,
while the mock's sequence, started afresh by every run, still begins at its first step.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.docker import force_clean, labelled

from preflight_sdk import Project
from preflight_sdk.core.results.run import RunResult

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

COUNTER = """\
import json
from http.server import BaseHTTPRequestHandler, HTTPServer

count = 0


class Handler(BaseHTTPRequestHandler):
    def reply(self):
        data = json.dumps({"count": count}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply()

    def do_POST(self):
        global count
        count += 1
        self.reply()

    def log_message(self, *args):
        pass


HTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
"""

COUNTER_SUITE = """\
name: A count kept in memory
service: counter
cases:
  - name: the first count is one
    request: {method: POST, path: /count}
    expect: {status: 200, body: {count: 1}}
  - name: the second count is two
    request: {method: POST, path: /count}
    expect: {status: 200, body: {count: 2}}
"""

SEQUENCE_SUITE = """\
name: A mock's sequence
cases:
  - name: the first charge gets the first answer
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
    expect: {status: 201, body: {n: 1}}
  - name: the second charge gets the second answer
    request: {method: POST, url: "{{mocks.payments.url}}/charges", json: {amount: 5}}
    expect: {status: 201, body: {n: 2}}
"""

SEQUENCE = [
    {"status": 201, "body": {"n": 1}},
    {"status": 201, "body": {"n": 2}},
    {"status": 409, "body": {"n": 3}},
]

Verdict = dict[str, list[tuple[str, str]]]


def write_project(root: Path, *, tag: str, db_reset: Any = None, counter_reset: Any = None) -> Path:
    """A copy of shop-db with the counter service, the payments mock and their suites.

    Its images get their own tags, so that nothing else on the daemon rebuilds them; `*_reset`
    set a service's `reset:` (left as the example has it when None).
    """
    shutil.copytree(REPO / "docs" / "examples" / "shop-db", root, ignore=shutil.ignore_patterns(".preflight"))
    config: dict[str, Any] = yaml.safe_load((root / "e2e.yaml").read_text())
    for service in config["services"].values():
        image = service["build"]["image"]
        if image.startswith("preflight-example/"):
            service["build"]["image"] = image.replace("preflight-example/", tag)
    if db_reset is not None:
        config["services"]["db"]["reset"] = db_reset
    config["services"]["counter"] = {
        "build": {"image": "preflight-base/python"},
        "container": {
            "command": ["python3", "/srv/counter.py"],
            "volumes": ["./counter:/srv:ro"],
            "ports": ["0:8000"],
            "healthcheck": {"path": "/count"},
        },
    }
    if counter_reset is not None:
        config["services"]["counter"]["reset"] = counter_reset
    config["mocks"] = {
        "payments": {"port": 0, "routes": [{"method": "POST", "path": "/charges", "sequence": SEQUENCE}]}
    }
    config["tests"]["suites"] += [
        {"id": "counter", "file": "tests/counter.yaml"},
        {"id": "sequence", "file": "tests/sequence.yaml"},
    ]
    (root / "e2e.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (root / "counter").mkdir()
    (root / "counter" / "counter.py").write_text(COUNTER)
    (root / "tests" / "counter.yaml").write_text(COUNTER_SUITE)
    (root / "tests" / "sequence.yaml").write_text(SEQUENCE_SUITE)
    return root


def fresh_verdict(root: Path) -> Verdict:
    """What a fresh environment gives: every case of every suite passes."""
    config = yaml.safe_load((root / "e2e.yaml").read_text())
    return {
        suite["id"]: [
            (case["name"], "passed") for case in yaml.safe_load((root / suite["file"]).read_text())["cases"]
        ]
        for suite in config["tests"]["suites"]
    }


def assert_fresh(root: Path, runs: list[dict[str, Any]]) -> None:
    """Every run (a RunResult as JSON) gave the fresh verdict; else say which run had which case wrong."""
    fresh = fresh_verdict(root)
    verdicts = [verdict_of(run) for run in runs]
    wrong = {
        f"run {number}": [
            f"{suite}: {case} {status}"
            for suite, cases in verdict.items()
            for case, status in cases
            if status != "passed"
        ]
        or verdict
        for number, verdict in enumerate(verdicts, 1)
        if verdict != fresh
    }
    assert not wrong, wrong
    assert len(verdicts) == 3


RESET = {
    "db": ("reset", "jobs"),  # `reset: {jobs: [seed]}`
    "migrate": ("reused", None),
    "seed": ("reset", "jobs"),
    "orders": ("reused", None),  # it holds nothing (`reset: none` in the example)
    "counter": ("reset", "recreate"),  # the default for a service that says nothing
}
# After an edit of orders/app.py: orders alone is rebuilt (the jobs have an image of their own);
# the db and the counter are reset all the same.
RESET_AFTER_EDIT = {**RESET, "orders": ("rebuilt", None)}


def assert_reset_reported(runs: list[dict[str, Any]], expected: dict[str, Any] = RESET) -> None:
    """Each run says how it found the environment: the run that set it up, how many runs it had
    served, and, after the first, what was done to each service (`expected`), how and why."""
    uses = [run["setup"]["environment"] for run in runs]
    assert len({use["setUpBy"] for use in uses}) == 1, uses
    served = [use.get("runsServed", 0) for use in uses]
    assert served == list(range(served[0], served[0] + len(runs))), served
    for before, run, use in zip([None, *runs], runs, uses, strict=False):
        acted = {s["name"]: (s["action"], s.get("reset")) for s in run["setup"]["services"]}
        if use.get("runsServed", 0) == 0:
            assert "reset" not in use and all(action != "reset" for action, _ in acted.values()), run["setup"]
            continue
        assert use["reset"], use
        if before is not None:
            assert before["runId"] in use["reset"], (use, before["runId"])
        assert acted == expected


def verdict_of(data: dict[str, Any]) -> Verdict:
    """The cases of a run (a RunResult as JSON) by suite, with their status."""
    return {s["id"]: [(c["name"], c["status"]) for c in s["cases"]] for s in data["suites"]}


def as_json(result: RunResult) -> dict[str, Any]:
    """A RunResult of the SDK as the CLI and the MCP server reply it."""
    data: dict[str, Any] = json.loads(msgspec.json.encode(result))
    return data


def remove(root: Path, tag: str) -> None:
    subprocess.run(
        [str(BIN / "preflight"), "clean", "-C", str(root), "--json"], capture_output=True, timeout=120
    )
    force_clean(root)
    images = subprocess.run(
        ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    leftovers = [i for i in images if i.startswith(tag)]
    if leftovers:
        subprocess.run(["docker", "rmi", "-f", *leftovers], capture_output=True)


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The project every face runs in turn; its environment is kept between the tests."""
    tag = f"preflight-test/kept-{uuid.uuid4().hex[:8]}-"
    # The db resets by running its seed job again (the example itself runs the seed's SQL with
    # an exec, tested in tests/integration/test_reset.py): each kind is seen on a real database.
    root = write_project(tmp_path_factory.mktemp("kept") / "shop-db", tag=tag, db_reset={"jobs": ["seed"]})
    yield root
    remove(root, tag)


def test_preflight_run_keep_three_times_gives_the_fresh_verdict_each_time(kept: Path) -> None:
    runs = []
    for _ in range(3):
        done = subprocess.run(
            [str(BIN / "preflight"), "run", "--keep", "--json", "-C", str(kept)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.stdout, done.stderr[-3000:]
        envelope = json.loads(done.stdout)
        assert envelope["success"], envelope
        runs.append(envelope["data"])
    assert_fresh(kept, runs)
    assert_reset_reported(runs)
    assert labelled(kept)[0], "--keep left the environment running"


@pytest.mark.anyio
async def test_the_mcp_run_tool_three_times_gives_the_fresh_verdict_each_time(
    kept: Path, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"),
        args=["--project", str(kept), "--keep-on-exit"],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    runs = []
    with anyio.fail_after(600), (tmp_path / "server.log").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            for _ in range(3):
                reply = await client.call_tool("preflight_run", {})  # `keep` is true by default
                assert reply.structured_content is not None and reply.structured_content["success"], reply
                runs.append(reply.structured_content["data"])
    assert_fresh(kept, runs)
    assert_reset_reported(runs)


def test_preflight_watch_gives_the_fresh_verdict_after_each_edit(kept: Path) -> None:
    lines: queue.Queue[str] = queue.Queue()

    def next_run(child: subprocess.Popen[str]) -> dict[str, Any]:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                assert child.poll() is None, "watch ended early"
                continue
            envelope = json.loads(line)
            assert envelope["success"], envelope
            data: dict[str, Any] = envelope["data"]
            return data
        raise AssertionError("no verdict within 240 s")

    runs = []
    with subprocess.Popen(
        [str(BIN / "preflight"), "watch", "--keep", "--json", "-C", str(kept)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as child:
        try:
            assert child.stdout is not None
            stdout = child.stdout

            def read() -> None:
                for line in stdout:
                    lines.put(line)

            threading.Thread(target=read, daemon=True).start()
            runs.append(next_run(child))
            for edit in (1, 2):  # one line of the orders service
                with (kept / "orders" / "app.py").open("a") as source:
                    source.write(f"# edit {edit}\n")
                runs.append(next_run(child))
        finally:
            child.terminate()
            child.wait(120)
    assert_fresh(kept, runs)
    assert_reset_reported(runs[:1])
    assert_reset_reported(runs[1:], RESET_AFTER_EDIT)
    assert labelled(kept)[0], "watch --keep left the environment running"


@pytest.mark.anyio
async def test_project_run_three_times_gives_the_fresh_verdict_each_time(kept: Path) -> None:
    async with Project.open(kept) as project:
        runs = [as_json(await project.run()) for _ in range(3)]
    assert_fresh(kept, runs)
    assert_reset_reported(runs)


@pytest.mark.anyio
async def test_with_reset_none_a_second_run_sees_what_the_first_left(tmp_path: Path) -> None:
    tag = f"preflight-test/none-{uuid.uuid4().hex[:8]}-"
    root = write_project(tmp_path / "shop-db", tag=tag, db_reset="none", counter_reset="none")
    try:
        async with Project.open(root) as project:
            first = as_json(await project.run())
            second = as_json(await project.run())
    finally:
        remove(root, tag)
    fresh = fresh_verdict(root)
    assert verdict_of(first) == fresh
    # The services opted out: the count goes on from 2, the orders of the first run are still there.
    after = verdict_of(second)
    assert after["counter"] == [("the first count is one", "failed"), ("the second count is two", "failed")]
    assert after["orders"] != fresh["orders"]
    # A mock's sequence starts over with every run whatever the services say.
    assert after["sequence"] == fresh["sequence"]
    # And the result says so: the environment served a run, nothing was reset.
    assert second["setup"]["environment"]["runsServed"] == 1 and "reset" not in second["setup"]["environment"]
    assert {s["name"]: s["action"] for s in second["setup"]["services"]} == {
        "db": "reused",
        "migrate": "reused",
        "seed": "reused",
        "orders": "reused",
        "counter": "reused",
    }
