"""The set-up scripts wait for apt's lock instead of failing at once (scripts/_apt).

Each test holds the real dpkg frontend lock from another process, as a second apt would, and
installs a package that is already installed (`hostname`, which every Debian has), so apt takes
its locks and does nothing else: no download, no change to the machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCK = "/var/lib/dpkg/lock-frontend"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("apt-get") is None or not os.path.exists(LOCK),
    reason="needs root on Debian (apt-get and its dpkg lock)",
)

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
deadline = time.monotonic() + 120
while True:  # another apt may hold it right now: wait for our turn, as apt would
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        break
    except BlockingIOError:
        if time.monotonic() > deadline:
            sys.exit("could not take the lock")
        time.sleep(0.1)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


@contextmanager
def held_lock(seconds: float) -> Iterator[int]:
    """Hold apt's dpkg frontend lock from a child process for `seconds`; yield its pid."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, LOCK, str(seconds)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child.pid
    finally:
        child.kill()
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()


def install_hostname(tmp_path: Path, wait: int) -> tuple[subprocess.CompletedProcess[str], float]:
    script = f'say() {{ printf "test: %s\\n" "$*" >&2; }}; source {REPO}/scripts/_apt; apt_install {tmp_path}/apt.log hostname'
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PREFLIGHT_APT_LOCK_WAIT": str(wait)},
    )
    return done, time.monotonic() - started


def test_an_install_waits_for_apt_lock_and_says_who_holds_it(tmp_path: Path) -> None:
    with held_lock(2.0) as holder:
        done, took = install_hostname(tmp_path, wait=60)
    assert done.returncode == 0, done.stderr
    assert f"waiting for apt's lock, held by process {holder} (python" in done.stderr
    assert "apt's lock is free after" in done.stderr
    assert took >= 1.5  # it waited for the holder rather than failing at once
    assert "Could not get lock" not in (tmp_path / "apt.log").read_text()


def test_a_lock_held_past_the_wait_fails_with_what_to_do(tmp_path: Path) -> None:
    with held_lock(30.0) as holder:
        done, took = install_hostname(tmp_path, wait=1)
    assert done.returncode == 1
    assert f"apt's lock is still held by process {holder} after 1s" in done.stderr
    assert "Traceback" not in done.stderr
    assert took < 20  # it gave up at its own limit, not apt's default
