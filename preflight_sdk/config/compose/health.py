"""A compose `healthcheck` → a host-side HTTP probe, or Docker's own check with every timing sub-key.

Where the test only GETs a local URL with curl or wget, preflight probes it from the host (every
few milliseconds, instead of Docker's 30 s default interval) and publishes the port if it was not;
a warning says so, since the test's own command (and whether the image has curl) is not checked.
Any other test stays Docker's check, at a 1 s interval unless the file gives one.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from preflight_sdk.core.durations import parse_duration

from .values import Reader

__all__ = ["translate_healthcheck"]

# `curl -f http://localhost:8080/health`, `wget -qO- http://127.0.0.1/ready || exit 1`: probed from the host.
_HTTP_PROBE = re.compile(r"^https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::(\d{1,5}))?(/\S*)?$")
_OPTION_WITH_VALUE = frozenset(
    {"-o", "-O", "--output", "--output-document", "-m", "--max-time", "-T", "--timeout"}
)
_TIMINGS = (("interval", "interval"), ("timeout", "timeout"), ("start_period", "startPeriod"))


def translate_healthcheck(
    health: Mapping[str, Any],
    container: dict[str, Any],
    ports: list[str],
    read: Reader,
    path: tuple[str | int, ...],
    warn: Callable[[tuple[str | int, ...], str, str], None],
) -> list[str]:
    """Fill `container`'s check from `health`; return `ports`, with the probed one added when needed.

    A test replaced by the host's probe is said (`warn`): its command does not run in the
    container, which may not even have curl, so a pass is the host probe's, named there.
    """
    test = health.get("test")
    argv = ["CMD-SHELL", test] if isinstance(test, str) else [str(part) for part in test or []]
    disabled = read.boolean(health.get("disable", False), (*path, "disable"))
    if disabled or argv[:1] == ["NONE"] or not argv:
        return ports
    timing: dict[str, Any] = {}
    for key, target in _TIMINGS:
        if health.get(key) is not None:
            written = read.duration(health[key], (*path, key))
            if written is not None:
                timing[target] = written
    if health.get("start_interval") is not None:
        # Docker's own start interval needs Engine 25 (older ones drop it without a word): the check
        # runs at the shorter of the two all along instead, which only checks a running service more often.
        start = read.duration(health["start_interval"], (*path, "start_interval"))
        current = timing.get("interval", "1s")
        if start is not None and parse_duration(start) < parse_duration(current):
            timing["interval"] = start
    if health.get("retries") is not None:
        retries = read.integer(health["retries"], (*path, "retries"))
        if retries is not None and retries < 1:
            read.report((*path, "retries"), "`retries` must be at least 1")
        elif retries is not None:
            timing["retries"] = retries
    if argv[0] not in ("CMD", "CMD-SHELL"):
        read.report((*path, "test"), f"a health test starts with CMD, CMD-SHELL or NONE, not `{argv[0]}`")
        return ports
    if len(argv) < 2:
        read.report((*path, "test"), "the health test has no command after its CMD or CMD-SHELL")
        return ports
    command = shlex.join(argv[1:]) if argv[0] == "CMD" else " ".join(argv[1:])
    probe = _http_probe(command)
    if probe is not None:
        port, probe_path = probe
        container["healthcheck"] = {"path": probe_path, "port": port, **timing}
        warn(
            (*path, "test"),
            "healthcheck.test",
            f"`{command}` is not run in the container (whose image may have no {Path(shlex.split(command)[0]).name}): "
            f"preflight probes GET {probe_path} on container port {port}, from the host, and the service is "
            "ready when it answers below 400",
        )
        if not any(_container_port(spec) == port for spec in ports):
            ports = [*ports, f"0:{port}"]  # the host probe needs a published port
        return ports
    # Docker's own probe, at a test-friendly interval unless the file says otherwise.
    container["dockerHealthcheck"] = {"test": argv, "interval": "1s", **timing}
    return ports


def _http_probe(command: str) -> tuple[int, str] | None:
    """Return (port, path) when the test only GETs a local URL with curl or wget."""
    text = re.sub(r"\s*\|\|\s*(exit\s+1|false)\s*$", "", command.strip())
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if not words or Path(words[0]).name not in ("curl", "wget"):
        return None
    url = None
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in _OPTION_WITH_VALUE:
            skip = True
        elif word.startswith("-"):
            continue
        elif url is None:
            url = word
        else:
            return None
    match = _HTTP_PROBE.match(url or "")
    if match is None:
        return None
    return int(match.group(1) or 80), match.group(2) or "/"


def _container_port(spec: str) -> int | None:
    tail = spec.rsplit(":", 1)[-1].split("/", 1)[0]
    return int(tail) if tail.isdigit() else None
