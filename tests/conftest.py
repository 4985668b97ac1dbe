"""Shared test set-up: the anyio backend, the Docker switch, and markers by folder.

Tests under `tests/integration/` need Docker and are marked `docker`. Without a daemon they are
skipped on a developer machine, but with `--require-docker` (what CI passes, CI=true) they fail:
a missing daemon in CI is a broken build, never a silent skip.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from support.engines import SecondEngine, start_second_dockerd
from support.sshd import SshServer, start_sshd

REPO = Path(__file__).resolve().parent.parent
# Projects the tests run (their own pytest suites among them) are data, not tests of preflight.
collect_ignore = ["fixtures"]

# A run that keeps its environment starts a warm pytest server after a pytest suite; most tests
# run a project once, so it would only load the machine. The tests of that server turn it on.
os.environ.setdefault("PREFLIGHT_WARM_PYTEST", "0")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--require-docker",
        action="store_true",
        default=os.environ.get("CI") == "true",
        help="fail (instead of skipping) tests that need Docker when no daemon answers",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).relative_to(REPO).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.docker)
        if "e2e" in parts:
            item.add_marker(pytest.mark.e2e)


_docker_state: dict[str, str | None] = {}


def _docker_problem() -> str | None:
    if "problem" not in _docker_state:
        try:
            done = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=20)
            _docker_state["problem"] = (
                None if done.returncode == 0 else (done.stderr.strip() or "docker info failed")
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            _docker_state["problem"] = str(exc)
    return _docker_state["problem"]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("docker") is None:
        return
    problem = _docker_problem()
    if problem is None:
        return
    message = f"no Docker daemon answers ({problem.splitlines()[0]}); run scripts/ensure-docker"
    if item.config.getoption("--require-docker"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def second_engine(request: pytest.FixtureRequest) -> Iterator[SecondEngine]:
    """A second Docker daemon (own socket, data, bridge; also on tcp://<this machine>:<port>).

    Started once per test process and stopped, bridge and files removed, at the end. It fails the
    test in CI (`--require-docker`) when it cannot start, and skips it elsewhere.
    """
    if os.geteuid() != 0:
        _missing(request, "a second dockerd needs root (its own bridge and data root)")
    try:
        engine = start_second_dockerd()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        _missing(request, f"could not start a second dockerd: {exc}")
    try:
        yield engine
    finally:
        engine.stop()


@pytest.fixture(scope="session")
def ssh_engine(request: pytest.FixtureRequest, second_engine: SecondEngine) -> Iterator[SshServer]:
    """An OpenSSH server at the second daemon's address whose sessions talk to that daemon.

    Reach it with `host()` (`ssh://root@<address>:<port>`) and its `client_bin` first in PATH.
    It fails the test in CI when sshd is missing or cannot start, and skips it elsewhere.
    """
    try:
        server = start_sshd(second_engine.address, second_engine.unix_host)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        _missing(request, f"could not start sshd: {exc}")
    try:
        yield server
    finally:
        server.stop()


def _missing(request: pytest.FixtureRequest, message: str) -> NoReturn:
    if request.config.getoption("--require-docker"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
