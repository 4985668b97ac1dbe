"""Shared pieces of the verify tests: where the fixture servers are, and a process tag.

`tagged` gives each test an environment variable to pass to the server (`env=tagged.env`);
`tagged.leftovers()` scans /proc for live processes still carrying it, which is how the tests
prove that nothing the server started survives `verify`, whatever the server did.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVERS = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers"
TAG = "PREFLIGHT_TEST_TAG"


def tagged_processes(tag: str) -> list[int]:
    """Pids of live processes whose environment carries `PREFLIGHT_TEST_TAG=<tag>`."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if state not in ("Z", "X") and needle in environ:
            found.append(int(entry.name))
    return found


class Tagged:
    """An environment tag for one test; `leftovers()` lists the processes still carrying it."""

    def __init__(self) -> None:
        self.value = secrets.token_hex(6)
        self.env = {TAG: self.value}

    def leftovers(self) -> list[int]:
        return tagged_processes(self.value)


@pytest.fixture
def tagged() -> Iterator[Tagged]:
    tag = Tagged()
    yield tag
    # Whatever the test asserted, never leave its processes running.
    for pid in tag.leftovers():
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
