"""pytest suites run warm: a kept interpreter forks a child per run (real processes, real pytest).

Projects of mocks only (no Docker). Each test first runs cold, waits for the server that run
started in the background, then checks that the warm runs match the cold ones and see every edit,
and that nothing outlives a timeout, a cancellation, a clean or a killed preflight.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from unit.suites.test_mock_project import no_docker, write_project

from preflight_sdk import Project
from preflight_sdk.core.progress import ProgressEvent
from preflight_sdk.core.results.run import RunResult
from preflight_sdk.suites.commands.warm_pytest import WarmPytest

pytestmark = pytest.mark.anyio

READY_WITHIN = 60.0  # a server warms up in 1-4 s; a loaded machine may take longer

TESTS = """
import os
from pathlib import Path

import pytest


def test_passes(label):
    assert label == "first"


def test_fails():
    print("some output")
    assert {"a": 1} == {"a": 2}


@pytest.mark.skip(reason="later")
def test_skipped():
    pass


def test_sees_the_run():
    seen = {"traceparent": os.environ["TRACEPARENT"], "pid": os.getpid(), "flag": os.environ.get("WARM_FLAG")}
    Path(os.environ["PREFLIGHT_PROJECT_ROOT"], "seen-" + Path(__file__).stem).write_text(repr(seen))
"""

CONFTEST = """
import pytest


@pytest.fixture
def label():
    return "first"
"""


def cases(result: RunResult) -> list[tuple[str, str, str | None, str | None]]:
    return sorted(
        (c.name, c.status, c.failure.error if c.failure else None, c.skip_reason)
        for suite in result.suites
        for c in suite.cases
    )


async def run(project: Project, **options: Any) -> tuple[RunResult, list[str]]:
    """Run the project; return the result and the suites its progress says ran warm."""
    lines: list[str] = []

    def sink(event: ProgressEvent) -> None:
        if "ran warm" in event.message:
            lines.append(event.message.split(":")[0].removeprefix("suite "))

    result = await project.run(progress=sink, **options)
    return result, sorted(lines)


async def ready(servers: WarmPytest | None, count: int = 1) -> list[int]:
    """Wait until `count` servers take runs; return their pids."""
    assert servers is not None
    with anyio.fail_after(READY_WITHIN):
        while len(servers.ready_pids) < count:
            await anyio.sleep(0.05)
    return servers.ready_pids


def gone(pid: int) -> bool:
    """Whether the process has ended (a zombie waiting for a parent that does not reap counts)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def all_gone(*pids: int, within: float = 10.0) -> bool:
    with anyio.move_on_after(within):
        while not all(gone(pid) for pid in pids):
            await anyio.sleep(0.05)
    return all(gone(pid) for pid in pids)


def seen(root: Path, stem: str) -> dict[str, Any]:
    value: dict[str, Any] = eval((root / f"seen-{stem}").read_text())  # written by repr()
    return value


async def test_warm_runs_match_cold_ones_see_every_edit_and_stop_on_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PREFLIGHT_WARM_PYTEST", raising=False)
    suites = [
        {"id": "one", "runner": "pytest", "file": "tests/test_one.py", "parallel": True},
        {"id": "two", "runner": "pytest", "file": "tests/test_two.py", "parallel": True},
    ]
    files = {"tests/test_one.py": TESTS, "tests/test_two.py": TESTS, "tests/conftest.py": CONFTEST}
    root = write_project(tmp_path / "p", suites, files=files)
    project = Project.open(root, engine=no_docker())
    try:
        cold, warm_suites = await run(project, parallel=True)
        assert warm_suites == []
        cold_pid = seen(root, "test_one")["pid"]
        [server] = await ready(project._ctx.pytest_servers)  # one interpreter and environment: one server

        # Both suites at once, each in its own child of the one server: the same cases as cold.
        warm, warm_suites = await run(project, parallel=True)
        assert warm_suites == ["one", "two"]
        assert cases(warm) == cases(cold)
        failed = next(c for c in warm.suites[0].cases if c.status == "failed")
        assert failed.failure is not None and "some output" in (failed.failure.output or "")
        first = seen(root, "test_one")
        assert first["pid"] != cold_pid and first["pid"] != seen(root, "test_two")["pid"]

        # An edited conftest.py and test file are seen; the run's own values (TRACEPARENT) arrive.
        (root / "tests/conftest.py").write_text(CONFTEST.replace('"first"', '"second"'))
        (root / "tests/test_one.py").write_text(TESTS.replace('label == "first"', 'label == "second"'))
        edited, warm_suites = await run(project, filter="one")
        assert warm_suites == ["one"]
        assert ("tests/test_one.py::test_passes", "passed", None, None) in cases(edited)
        assert seen(root, "test_one")["traceparent"] != first["traceparent"]
        assert project._ctx.pytest_servers is not None and project._ctx.pytest_servers.ready_pids == [server]

        # Another environment is another server: this run is cold, and the variable arrives.
        monkeypatch.setenv("WARM_FLAG", "changed")
        changed, warm_suites = await run(project, filter="one")
        assert warm_suites == []
        assert seen(root, "test_one")["flag"] == "changed"
        pids = await ready(project._ctx.pytest_servers, 2)
        again, warm_suites = await run(project, filter="one")
        assert warm_suites == ["one"] and seen(root, "test_one")["flag"] == "changed"
        assert cases(again) == cases(changed)
    finally:
        await project.clean()
    assert project._ctx.pytest_servers is None
    assert await all_gone(*pids)


PLUGIN = """
import pytest


@pytest.fixture
def plugged():
    return {value!r}
"""


async def test_an_edited_module_of_the_server_restarts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pytest plugin installed by its entry point (a *.dist-info on PYTHONPATH): the server
    # imports it while warming up, through pytest's assertion rewriting like a cold run does.
    plugins = tmp_path / "plugins"
    info = plugins / "warmplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: warmplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nwarmplug = warmplug\n")
    (info / "RECORD").write_text("warmplug.py,,\nwarmplug-1.0.dist-info/METADATA,,\n")
    (plugins / "warmplug.py").write_text(PLUGIN.format(value="one"))
    monkeypatch.setenv("PYTHONPATH", str(plugins))
    test = "def test_plugged(plugged):\n    assert plugged == 'one'\n"
    # A plugin imported without the rewriting hook would make pytest warn (here: fail) at start-up.
    suite = {
        "id": "py",
        "runner": "pytest",
        "file": "tests/test_plugged.py",
        "args": ["-W", "error::pytest.PytestAssertRewriteWarning"],
    }
    root = write_project(tmp_path / "p", [suite], files={"tests/test_plugged.py": test})
    monkeypatch.delenv("PREFLIGHT_WARM_PYTEST", raising=False)
    project = Project.open(root, engine=no_docker())
    try:
        await run(project)
        [old] = await ready(project._ctx.pytest_servers)
        warm, warm_suites = await run(project)
        assert warm_suites == ["py"] and warm.status == "passed", warm.suites[0].error

        (plugins / "warmplug.py").write_text(PLUGIN.format(value="edited"))
        cold, warm_suites = await run(project)
        assert warm_suites == []  # the server saw the change: this run went cold
        [case] = cold.suites[0].cases
        assert case.failure is not None and "'edited' == 'one'" in case.failure.error
        assert await all_gone(old)
        [new] = await ready(project._ctx.pytest_servers)
        assert new != old
        warm, warm_suites = await run(project)
        assert warm_suites == ["py"]
        assert cases(warm) == cases(cold)

        # A package installed where the server looks (what `pip install` does) is seen too.
        (plugins / "another-1.0.dist-info").mkdir()
        _, warm_suites = await run(project)
        assert warm_suites == []
    finally:
        await project.clean()


SLEEPER = """
import os
import subprocess
import sys
import time
from pathlib import Path


def test_hangs():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    Path(os.environ["PIDS"]).write_text(f"{os.getpid()} {child.pid}")
    time.sleep(300)
"""


async def _warm_server(tmp_path: Path) -> tuple[WarmPytest, dict[str, str]]:
    (tmp_path / "test_sleeper.py").write_text(SLEEPER)
    env = {"PIDS": str(tmp_path / "pids")}
    servers = WarmPytest()
    servers.prepare(sys.executable, tmp_path, env, ())
    await ready(servers)
    return servers, env


async def pids_written(path: Path) -> list[int]:
    with anyio.fail_after(30):
        while not path.exists() or len(path.read_text().split()) < 2:
            await anyio.sleep(0.05)
    return [int(pid) for pid in path.read_text().split()]


async def test_a_timeout_or_a_cancellation_kills_the_child_and_its_children(tmp_path: Path) -> None:
    servers, env = await _warm_server(tmp_path)
    args = [str(tmp_path / "test_sleeper.py"), "-q", "-p", "no:cacheprovider"]

    async def run_for(seconds: float, scratch: Path) -> object:
        # Named so it cannot be imported: a new package in the server's directory (on its
        # sys.path) would rightly make the server stale.
        scratch.mkdir()
        return await servers.run(
            sys.executable, args, cwd=tmp_path, env=env, per_run=(), timeout=seconds, scratch=scratch
        )

    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await run_for(2, tmp_path / "timed-out")
        assert time.monotonic() - started < 20
        test, grandchild = await pids_written(tmp_path / "pids")
        assert await all_gone(test, grandchild, within=5)
        (tmp_path / "pids").unlink()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_for, 60, tmp_path / "cancelled-run")
            test, grandchild = await pids_written(tmp_path / "pids")
            tg.cancel_scope.cancel()
        assert await all_gone(test, grandchild, within=5)
        assert servers.ready_pids  # the server itself serves on
    finally:
        servers.close()


KILLED = """
import json, sys, time, anyio
from pathlib import Path
from preflight_sdk.suites.commands.warm_pytest import WarmPytest

async def main():
    root = Path(sys.argv[1])
    servers = WarmPytest()
    env = {"PIDS": str(root / "pids")}
    servers.prepare(sys.executable, root, env, ())
    while not servers.ready_pids:
        await anyio.sleep(0.05)
    print(json.dumps(servers.ready_pids), flush=True)
    args = [str(root / "test_sleeper.py"), "-q", "-p", "no:cacheprovider"]
    (root / "run-out").mkdir()
    await servers.run(sys.executable, args, cwd=root, env=env, per_run=(), timeout=300, scratch=root / "run-out")

anyio.run(main)
"""


async def test_a_killed_preflight_leaves_no_server_and_no_test_behind(tmp_path: Path) -> None:
    (tmp_path / "test_sleeper.py").write_text(SLEEPER)
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED), str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        [server] = json.loads(await anyio.to_thread.run_sync(process.stdout.readline))
        test, grandchild = await pids_written(tmp_path / "pids")
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    assert await all_gone(server, test, grandchild)


async def test_only_a_kept_environment_in_a_process_that_stays_keeps_pytest_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PREFLIGHT_WARM_PYTEST", raising=False)
    suite = {"id": "sh", "runner": "shell", "command": ["true"]}
    root = write_project(tmp_path / "p", [suite])

    async def servers_after(keep: bool, keep_warm: bool = True) -> WarmPytest | None:
        project = Project.open(root, engine=no_docker())
        project.keep_warm = keep_warm
        try:
            await project.run(keep=keep)
            return project._ctx.pytest_servers
        finally:
            await project.clean()

    assert await servers_after(keep=True) is not None
    assert await servers_after(keep=False) is None
    assert await servers_after(keep=True, keep_warm=False) is None  # the CLI's one-shot `run`
    monkeypatch.setenv("PREFLIGHT_WARM_PYTEST", "0")
    assert await servers_after(keep=True) is None


async def test_past_the_limit_the_least_recently_used_idle_server_makes_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("preflight_sdk.suites.commands.warm_pytest._MAX_SERVERS", 2)
    servers = WarmPytest()
    try:
        started: list[int] = []
        for value in ("a", "b", "c"):  # another environment each: another server each
            servers.prepare(sys.executable, tmp_path, {"WARM_FLAG": value}, ())
            started += [pid for pid in servers.pids if pid not in started]
        assert len(started) == 3
        assert gone(started[0]) and servers.pids == started[1:]  # stopped while still warming up
    finally:
        servers.close()
    assert await all_gone(*started)
