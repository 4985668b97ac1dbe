"""The `file`, `process` and `port` steps of the YAML runner, without Docker.

These steps run their probes (a `sh` script, `/proc`) inside a service's container through the
engine's `exec`. Here the engine is the fake one, except that `exec` runs the command on this
machine: the host plays the container, so the real scripts run against real files, processes
and sockets, and a wrong parse (of `stat`, of `/proc/net/tcp`'s hexadecimal ports) fails a test.
"""

from __future__ import annotations

import getpass
import json
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.fake_engine import FakeEngine
from support.stub import case

from preflight_sdk import Project
from preflight_sdk.core.results.run import CaseResult, RunResult
from preflight_sdk.engine.base import ExecResult

pytestmark = pytest.mark.anyio

IMAGE = "busybox:test"


class HostExecEngine(FakeEngine):
    """The fake engine, with `exec` running the command on this machine (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(images=[IMAGE])
        self.executed: list[tuple[str, list[str]]] = []

    async def exec(self, ref: str, command: Sequence[str], *, timeout: float) -> ExecResult:
        await super().exec(ref, command, timeout=timeout)  # records the call, checks the daemon
        self.executed.append((ref, list(command)))
        started = time.perf_counter()
        with anyio.fail_after(timeout):
            done = await anyio.run_process(list(command), check=False)
        return ExecResult(
            exit_code=done.returncode,
            stdout=done.stdout.decode(),
            stderr=done.stderr.decode(),
            duration=time.perf_counter() - started,
        )


@pytest.fixture
async def engine() -> AsyncIterator[HostExecEngine]:
    async with HostExecEngine() as fake:
        yield fake


@pytest.fixture
def sleeper() -> Iterator[str]:
    """A process running on this machine whose command line holds a unique marker (returned)."""
    marker = f"preflight-marker-{uuid.uuid4().hex[:10]}"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", marker])
    try:
        yield marker
    finally:
        child.kill()
        child.wait()


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP socket listening on a free port above 4095 (its hexadecimal and decimal forms differ)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port: int = sock.getsockname()[1]
        assert port > 4095
        yield port


def write_project(root: Path, steps: str) -> Path:
    """A project with one service `box` (a fake container) and one YAML suite of `steps`."""
    root.mkdir(parents=True, exist_ok=True)
    document = {
        "version": "1",
        "project": {"name": "local-steps"},
        "services": {"box": {"build": {"image": IMAGE}}},
        "tests": {"suites": [{"id": "s", "file": "tests/s.yaml"}]},
    }
    (root / "e2e.yaml").write_text(json.dumps(document))
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "s.yaml").write_text(
        "name: Local\ncases:\n" + textwrap.indent(textwrap.dedent(steps), "  ")
    )
    return root


async def run_steps(engine: HostExecEngine, root: Path) -> RunResult:
    project = Project.open(root, engine=engine)
    await project.setup()
    try:
        return await project.run()
    finally:
        await project.clean()


def checks(item: CaseResult) -> list[tuple[str, Any, Any, bool]]:
    """The case's assertions as (path, expected, actual, passed); empty for a passing case."""
    if item.failure is None:
        return []
    return [(a.path, a.expected, a.actual, a.passed) for a in item.failure.assertions]


# -- file -------------------------------------------------------------------------------------


async def test_file_steps_check_existence_content_json_mode_owner_and_size(
    engine: HostExecEngine, tmp_path: Path
) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"mode": "fast", "workers": 4}\n')
    config.chmod(0o640)
    size = config.stat().st_size
    me = getpass.getuser()
    root = write_project(
        tmp_path / "p",
        f"""
        - name: the config is right
          file:
            path: {config}
            exists: true
            contains: ['"mode"', fast]
            notContains: slow
            matches: '"workers": [0-9]+'
            json: {{mode: fast, workers: {{gte: 2}}}}
            permissions: "-rw-r-----"
            owner: {me}
            size: "> 10"
        - name: an absent file is absent
          file: {{path: {tmp_path}/nothing.txt, exists: false}}
        - name: the config is wrong
          file:
            path: {config}
            contains: slow
            json: {{workers: 8}}
            permissions: "-rw-r--r--"
            size: {size + 1}
        - name: a missing file
          file: {{path: {tmp_path}/nothing.txt, contains: anything}}
        - name: not JSON
          file: {{path: {tmp_path / "p" / "tests" / "s.yaml"}, json: {{a: 1}}}}
        """,
    )
    result = await run_steps(engine, root)

    assert case(result, "the config is right").status == "passed", checks(case(result, "the config is right"))
    assert case(result, "an absent file is absent").status == "passed"
    # Every probe went through the engine's exec, into the one service container.
    assert len({ref for ref, _ in engine.executed}) == 1

    base = f"file:{config}"
    assert [c for c in checks(case(result, "the config is wrong")) if not c[3]] == [
        (f"{base}.permissions", "-rw-r--r--", "-rw-r-----", False),
        (f"{base}.size", size + 1, size, False),
        (f"{base}.content", "slow", config.read_text(), False),
        (f"{base}.json.workers", 8, 4, False),
    ]
    assert checks(case(result, "a missing file")) == [
        (f"file:{tmp_path}/nothing.txt.exists", True, False, False)
    ]
    [not_json] = [c for c in checks(case(result, "not JSON")) if not c[3]]
    assert not_json[0].endswith("s.yaml.json") and not_json[1] == {"a": 1}


# -- process ----------------------------------------------------------------------------------


async def test_process_steps_find_a_running_process_by_its_command_line(
    engine: HostExecEngine, tmp_path: Path, sleeper: str
) -> None:
    me = getpass.getuser()
    root = write_project(
        tmp_path / "p",
        f"""
        - name: it runs
          process: {{name: {sleeper}, count: 1, user: {me}}}
        - name: nothing else runs
          process: {{name: {sleeper}-other, running: false}}
        - name: it runs as another user
          process: {{name: {sleeper}, user: nobody-{me}}}
        - name: a process that is not there
          process: {{name: {sleeper}-other, count: ">= 1"}}
        """,
    )
    result = await run_steps(engine, root)

    assert case(result, "it runs").status == "passed", checks(case(result, "it runs"))
    assert case(result, "nothing else runs").status == "passed"
    # The listing script itself holds the name on its command line: it must not count.
    assert checks(case(result, "it runs as another user")) == [
        (f"process:{sleeper}.running", True, False, False)
    ]
    assert checks(case(result, "a process that is not there")) == [
        (f"process:{sleeper}-other.running", True, False, False),
        (f"process:{sleeper}-other.count", ">= 1", 0, False),
    ]
    failure = case(result, "a process that is not there").failure
    assert failure is not None
    assert failure.summary == f"expected process:{sleeper}-other.running = true, got false"


# -- port -------------------------------------------------------------------------------------


async def test_port_steps_read_listening_ports_in_the_container_and_connect_from_the_host(
    engine: HostExecEngine, tmp_path: Path, listener: int
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    root = write_project(
        tmp_path / "p",
        f"""
        - name: listening inside
          port: {{port: {listener}, container: box}}
        - name: listening from the host
          port: {{port: {listener}, host: 127.0.0.1, timeout: 2s}}
        - name: closed from the host
          port: {{port: {closed}, host: 127.0.0.1, listening: false, timeout: 500ms}}
        - name: closed inside
          port: {{port: {closed}, container: box}}
        """,
    )
    result = await run_steps(engine, root)

    for name in ("listening inside", "listening from the host", "closed from the host"):
        assert case(result, name).status == "passed", (name, checks(case(result, name)))
    assert checks(case(result, "closed inside")) == [(f"port:{closed}.listening", True, False, False)]


# -- errors -----------------------------------------------------------------------------------


async def test_a_step_naming_an_unknown_container_says_which_ones_exist(
    engine: HostExecEngine, tmp_path: Path
) -> None:
    root = write_project(
        tmp_path / "p",
        f"""
        - name: wrong container
          file: {{path: {tmp_path}, container: bx}}
        """,
    )
    result = await run_steps(engine, root)
    failure = case(result, "wrong container").failure
    assert failure is not None
    assert "no running container for `bx`" in failure.error
    assert failure.suggested_fix == "name one of the project's services in the step's `container`"
    assert engine.executed == []
