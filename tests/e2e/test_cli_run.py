"""`preflight run` through the real console script on the bundled examples (real Docker)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
PREFLIGHT = str(Path(sys.executable).parent / "preflight")


def _example(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(REPO / "docs" / "examples" / name, target)
    return target


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, env=dict(os.environ), timeout=300
    )


def test_run_builds_sets_up_runs_and_cleans_the_shop_example(tmp_path: Path) -> None:
    shop = _example(tmp_path, "shop")
    try:
        done = _run("run", "-C", str(shop))
    finally:
        force_clean(shop)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "11 passed, 0 failed" in done.stdout and "PASSED" in done.stdout
    assert labelled(shop) == ([], []), "run cleans up after itself"


def test_run_json_prints_only_the_envelope_and_exits_1_on_failures(tmp_path: Path) -> None:
    broken = _example(tmp_path, "shop-broken")
    (tmp_path / "shop").symlink_to(REPO / "docs" / "examples" / "shop")  # its Dockerfiles live there
    try:
        done = _run("run", "--json", "-C", str(broken))
    finally:
        force_clean(broken)
    assert done.returncode == 1, done.stderr[-3000:]
    envelope = json.loads(done.stdout)  # nothing but the envelope on stdout
    # The run did its job: success, the verdict in data.status, and exit code 1.
    assert (envelope["success"], envelope["data"]["status"]) == (True, "failed")
    assert envelope["runId"] == envelope["data"]["runId"]
    failures = [c for s in envelope["data"]["suites"] for c in s["cases"] if c["status"] == "failed"]
    assert failures[0]["failure"]["summary"].split(";")[0] == "POST /orders returned 500, expected 400"
    assert labelled(broken) == ([], [])


def test_run_keep_leaves_the_environment_for_a_second_run_and_clean(tmp_path: Path) -> None:
    shop = _example(tmp_path, "shop")
    try:
        first = _run("run", "--keep", "--json", "-C", str(shop))
        assert first.returncode == 0, first.stderr[-3000:]
        assert len(labelled(shop)[0]) == 3, "--keep leaves the containers running"
        again = _run("run", "--json", "-C", str(shop), "--filter", "orders")
        assert again.returncode == 0, again.stderr[-3000:]
        assert json.loads(again.stdout)["data"]["totals"]["total"] == 8
        assert len(labelled(shop)[0]) == 3, "a run against a running environment leaves it running"
        status = _run("status", "--json", "-C", str(shop))
        assert json.loads(status.stdout)["data"]["state"] == "running"
        cleaned = _run("clean", "--json", "-C", str(shop))
        assert cleaned.returncode == 0
    finally:
        force_clean(shop)
    assert labelled(shop) == ([], [])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_up_serves_the_shop_until_interrupted_then_cleans(tmp_path: Path, sig: signal.Signals) -> None:
    shop = _example(tmp_path, "shop")
    try:
        with subprocess.Popen(
            [PREFLIGHT, "up", "-C", str(shop)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=dict(os.environ),
        ) as child:
            assert child.stdout is not None
            lines: list[str] = []
            while "Press Ctrl-C" not in "".join(lines):
                line = child.stdout.readline()
                assert line, f"up ended early: {''.join(lines)}"
                lines.append(line)
            urls = dict(
                line.strip().split(": ", 1) for line in lines if line.startswith("  ") and "http://" in line
            )
            # The environment and its mock serve while `up` waits in the foreground.
            with urllib.request.urlopen(urls["orders"] + "/health", timeout=10) as reply:
                assert json.load(reply) == {"status": "ok"}
            with urllib.request.urlopen(urls["payments"] + "/_mock/health", timeout=10) as reply:
                assert json.load(reply)["status"] == "ok"
            assert len(labelled(shop)[0]) == 3
            child.send_signal(sig)
            assert child.wait(60) in (0, 130)
    finally:
        force_clean(shop)
    assert labelled(shop) == ([], [])


def test_watch_prints_a_verdict_per_change_and_ctrl_c_cleans_up(tmp_path: Path) -> None:
    shop = _example(tmp_path, "shop")
    lines: queue.Queue[str] = queue.Queue()

    def verdict(child: subprocess.Popen[str]) -> str:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                assert child.poll() is None, "watch ended early"
                continue
            if "PASSED" in line or "FAILED" in line:
                return line
        raise AssertionError("no verdict within 120 s")

    try:
        with subprocess.Popen(
            [PREFLIGHT, "watch", "-C", str(shop)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=dict(os.environ),
        ) as child:
            try:
                assert child.stdout is not None
                threading.Thread(
                    target=lambda: [lines.put(line) for line in child.stdout], daemon=True
                ).start()
                first = verdict(child)
                assert "PASSED" in first and "3 suites" in first, first
                assert len(labelled(shop)[0]) == 3, "the environment stays up between runs"
                (shop / "tests" / "smoke.sh").write_text("echo broken; exit 1\n")
                second = verdict(child)
                assert "FAILED" in second and "1 suite," in second, second
            finally:
                child.send_signal(signal.SIGINT)
                code = child.wait(60)
            assert code == 1, "the exit code is the last verdict's"
    finally:
        force_clean(shop)
    assert labelled(shop) == ([], []), "Ctrl-C removed the environment"
