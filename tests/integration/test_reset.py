"""A kept environment gives the verdict a fresh one would (real Docker).

Runs on a kept environment, from the SDK and from `preflight run --keep` in other processes, see
each service as setup left it: a counter held in memory, a counter kept in a named volume, the
shop-db example's orders in PostgreSQL. With `reset: none` a second run sees what the first left.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

from preflight_sdk import PreflightError, Project
from preflight_sdk.config import load_config
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.lifecycle.session.state import read_state
from preflight_sdk.lifecycle.setup.reset import snapshot_volume

pytestmark = [pytest.mark.anyio, pytest.mark.docker]

REPO = Path(__file__).resolve().parents[2]
PREFLIGHT = str(Path(sys.executable).parent / "preflight")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, env=dict(os.environ), timeout=300
    )


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1))


def _setup_of(run: RunResult) -> dict[str, tuple[str | None, str | None]]:
    assert run.setup is not None
    return {s.name: (s.action, s.reset) for s in run.setup.services}


def _failed(run: RunResult) -> list[str]:
    return [f"{case.name}: {case.failure.summary if case.failure else ''}" for case in run.failures()]


async def test_a_counter_in_memory_counts_from_one_on_every_run_of_a_kept_environment(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir("counter")
    project = Project.open(root)
    try:
        first = await project.run(keep=True)
        begun = time.monotonic()
        second = await project.run(keep=True)
        took = time.monotonic() - begun
        third = await project.run(keep=True)
        # A suite run alone, and a saved test, on the environment as it runs: reset as well.
        suite = await project.run_suite("count")
        hit = {"request": {"method": "POST", "url": "{{services.counter.url}}/"},
               "expect": {"status": 200, "body": {"count": 1}}}  # fmt: skip
        await project.save_test(id="one-hit", name="one hit", test=hit)
        saved = [await project.run_test(test_id="one-hit") for _ in range(2)]
    finally:
        await project.clean()
    assert [r.status for r in (first, second, third)] == ["passed"] * 3, _failed(second) + _failed(third)
    assert suite.status == "passed" and _setup_of(suite) == {"counter": ("reset", "recreate")}
    assert [r.status for r in saved] == ["passed", "passed"], _failed(saved[1])
    assert saved[1].setup is not None and saved[1].setup.environment is not None
    assert saved[1].setup.environment.runs_served == 5  # three runs, the suite, the first saved run
    assert second.setup is not None and second.setup.environment is not None
    assert second.setup.environment.reset == f"served run {first.run_id} since setup"
    assert second.setup.environment.set_up_by == first.run_id and second.setup.environment.runs_served == 1
    assert third.setup is not None and third.setup.environment is not None
    assert third.setup.environment.runs_served == 2
    print(f"counter: a run with its reset took {took:.2f}s")


async def test_with_reset_none_a_second_run_sees_what_the_first_left(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir("counter")
    _edit(
        root / "e2e.yaml", "      healthcheck: {path: /}\n", "      healthcheck: {path: /}\n    reset: none\n"
    )
    project = Project.open(root)
    try:
        first = await project.run(keep=True)
        second = await project.run(keep=True)
    finally:
        await project.clean()
    assert first.status == "passed", _failed(first)
    assert second.status == "failed" and _setup_of(second) == {"counter": ("reused", None)}
    assert second.setup is not None and second.setup.environment is not None
    assert second.setup.environment.reset is None and second.setup.environment.runs_served == 1
    assert len(second.failures()) == 2  # it counted 3 and 4


def test_preflight_run_keep_in_other_processes_resets_what_the_previous_one_used(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir("counter")
    try:
        runs = [_cli("run", "--keep", "-C", str(root)) for _ in range(3)]
        state = read_state(root)
        last = _cli("run", "-C", str(root))  # not kept: removed afterwards, still reset first
    finally:
        force_clean(root)
    for done in [*runs, last]:
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert "2 passed, 0 failed" in done.stdout
    assert "environment: set up for this run" in runs[0].stdout
    assert "reset first (served run" in runs[1].stdout and "since setup)" in runs[1].stdout
    assert "reset (recreate)" in runs[2].stdout and "since its last reset" in runs[2].stdout
    assert state is not None and state.runs_served == 3 and state.served_by is not None
    assert labelled(root) == ([], [])


async def test_a_counter_in_a_named_volume_is_restored_from_the_snapshot_taken_at_setup(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir("counter")
    volume = f"pftest-counter-{uuid.uuid4().hex[:8]}"
    _edit(
        root / "e2e.yaml",
        "      healthcheck: {path: /}\n",
        f"      healthcheck: {{path: /}}\n      environment: {{STORE: /data/count}}\n      volumes: ['{volume}:/data']\n",
    )
    snapshot = snapshot_volume(load_config(root), volume)
    project = Project.open(root)
    try:
        first = await project.run(keep=True)
        begun = time.monotonic()
        second = await project.run(keep=True)
        took = time.monotonic() - begun
        third = await project.run(keep=True)
        # Without its snapshot the volume cannot be put back: a clear error, the volume untouched.
        subprocess.run(["docker", "volume", "rm", snapshot], capture_output=True, check=True)
        with pytest.raises(PreflightError) as caught:
            await project.run(keep=True)
        kept = subprocess.run(
            ["docker", "run", "--rm", "-v", f"{volume}:/data", "preflight-base/busybox", "cat", "/data/count"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        await project.clean()
    finally:
        force_clean(root)
        subprocess.run(["docker", "volume", "rm", "-f", volume, snapshot], capture_output=True)
    assert [r.status for r in (first, second, third)] == ["passed"] * 3, _failed(second) + _failed(third)
    assert _setup_of(second) == {"counter": ("reset", "snapshot")}
    assert caught.value.code == "RESET_FAILED" and "has no snapshot" in caught.value.message
    assert "fresh=true" in (caught.value.hint or "")
    assert kept == "2", "the volume keeps what the last run left"
    print(f"counter in a volume: a run with its reset took {took:.2f}s")


async def test_the_shop_db_example_gives_the_same_verdict_on_every_run_of_a_kept_environment(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shop-db"
    shutil.copytree(REPO / "docs" / "examples" / "shop-db", root, ignore=shutil.ignore_patterns(".preflight"))
    project = Project.open(root)
    try:
        first = await project.run(keep=True)
        begun = time.monotonic()
        second = await project.run(keep=True)
        took = time.monotonic() - begun
        third = _cli("run", "--keep", "-C", str(root))  # another process: it resets as well
        fourth = await project.run(keep=True)
        await project.clean()
    finally:
        force_clean(root)
    for run in (first, second, fourth):
        assert run.status == "passed" and run.totals.passed == 4, _failed(run)
    assert third.returncode == 0 and "4 passed, 0 failed" in third.stdout, third.stdout[-2000:]
    # The db is reset by running the seed's SQL in it (it empties and refills the table):
    # PostgreSQL, the jobs and the API are left as they are.
    assert _setup_of(second) == {
        "db": ("reset", "exec"),
        "migrate": ("reused", None),
        "seed": ("reused", None),
        "orders": ("reused", None),
    }
    assert fourth.setup is not None and fourth.setup.environment is not None
    assert fourth.setup.environment.runs_served == 3
    print(f"shop-db: a run with its reset took {took:.2f}s")


async def test_the_shop_db_example_without_its_reset_fails_on_the_rows_the_first_run_left(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shop-db"
    shutil.copytree(REPO / "docs" / "examples" / "shop-db", root, ignore=shutil.ignore_patterns(".preflight"))
    config = root / "e2e.yaml"
    config.write_text(re.sub(r"(?m)^    reset: \{exec: .*$", "    reset: none", config.read_text(), count=1))
    project = Project.open(root)
    try:
        first = await project.run(keep=True)
        second = await project.run(keep=True)
        await project.clean()
    finally:
        force_clean(root)
    assert first.status == "passed", _failed(first)
    assert second.status == "failed" and len(second.failures()) == 3, _failed(second)


_PROCESSES = """
import os
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        print(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode())
    except OSError:
        pass
"""


def _processes(container: str) -> list[str]:
    """The command lines running in `container` (the image has python3, not ps)."""
    done = subprocess.run(
        ["docker", "exec", container, "python3", "-c", _PROCESSES], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


async def test_a_reset_exec_past_its_timeout_fails_is_killed_and_its_service_is_recreated_next_time(
    project_dir: Callable[..., Path],
) -> None:
    root = project_dir("counter")
    _edit(
        root / "e2e.yaml",
        "      healthcheck: {path: /}\n",
        '      healthcheck: {path: /}\n    reset: {exec: [sleep, "600"], timeout: 2s}\n',
    )
    project = Project.open(root)
    try:
        first = await project.run(keep=True)
        state = read_state(root)
        assert state is not None
        [container] = [r.name for r in state.containers]
        begun = time.monotonic()
        with pytest.raises(PreflightError) as caught:
            await project.run(keep=True)
        took = time.monotonic() - begun
        # The command no longer runs in the container, which still serves.
        left = [line for line in _processes(container) if "sleep" in line]
        marked = read_state(root)
        third = await project.run(keep=True)
        after = read_state(root)
    finally:
        await project.clean()
    assert first.status == "passed", _failed(first)
    error = caught.value
    assert error.code == "RESET_FAILED" and took < 60, (error, took)
    assert error.details["service"] == "counter" and error.details["timedOut"] is True, error.details
    assert error.details["timeout"] == 2.0 and error.details["killed"] is True, error.details
    assert "2s" in error.message and "recreate" in (error.hint or ""), error
    assert left == [], left
    assert marked is not None and marked.recreate == ["counter"]
    # The next run recreates the service instead of running its reset again; the mark is gone.
    assert third.status == "passed", _failed(third)
    assert third.setup is not None
    [service] = third.setup.services
    assert service.action == "recreated" and "did not finish" in (service.reason or ""), service
    assert after is not None and after.recreate == []
