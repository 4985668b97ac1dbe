"""Run a suite's command as a child process group: its environment, its deadline, its retries.

Shared by the pytest and shell runners: `execute` runs one argv in the e2e.yaml directory with the
run's environment and records its process group (so a `clean` stops it should this process die),
and `with_retries` runs it again by the suite's retry policy, every attempt within one deadline.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, SuiteConfig
from preflight_sdk.config.model import ShellExpect
from preflight_sdk.core.assertions import AssertionResult, check
from preflight_sdk.processes.commands import Completed, run_command
from preflight_sdk.processes.groups import ProcessGroups

from ..context import RunContext
from ..retry import Policy

__all__ = [
    "CANNOT_START",
    "DEFAULT_TIMEOUT",
    "Ran",
    "epoch_ms",
    "execute",
    "expect_checks",
    "one_line",
    "seconds_text",
    "short",
    "suite_environment",
    "tail",
    "with_retries",
]

DEFAULT_TIMEOUT = 300.0
CANNOT_START = 127

_T = TypeVar("_T")


class Ran(msgspec.Struct, frozen=True, kw_only=True):
    """One run of a command: its result (None when stopped at the deadline) and when it ran."""

    done: Completed | None
    started: datetime
    ended: datetime

    @property
    def seconds(self) -> float:
        return (self.ended - self.started).total_seconds()


def suite_environment(run: RunContext, loaded: LoadedConfig, suite: SuiteConfig) -> dict[str, str]:
    env = {**loaded.environ, **run.env.process_env()}
    chosen = run.env.base_url(suite.service) if suite.service is not None else None
    if chosen:
        env["BASE_URL"] = chosen  # the suite's `service`, not the first one
    env.update({key: str(value) for key, value in suite.env.items()})
    env.setdefault("TRACEPARENT", run.traceparent(suite.id))
    return env


async def execute(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float, groups: ProcessGroups
) -> Ran:
    started = datetime.now(UTC)
    pgids: list[int] = []

    def started_as(pgid: int) -> None:  # recorded, so a `clean` stops it should this process die
        pgids.append(pgid)
        groups.record(pgid, "suite")

    try:
        done: Completed | None = await run_command(
            argv, cwd=str(cwd), env={**env, **groups.mark()}, timeout=timeout, on_start=started_as
        )
    except TimeoutError:
        done = None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        done = Completed(returncode=CANNOT_START, stdout="", stderr=f"cannot start {argv[0]}: {reason}")
    finally:
        for pgid in pgids:  # run_command killed whatever was left of it
            groups.forget(pgid)
    return Ran(done=done, started=started, ended=datetime.now(UTC))


async def with_retries(
    policy: Policy, timeout: float, once: Callable[[float], Awaitable[_T]], ok: Callable[[_T], bool]
) -> list[_T]:
    """Run `once(seconds left)` until `ok` holds or `policy` is spent; return every attempt.

    All attempts and the waits between them share the suite's `timeout`: no attempt starts when
    its wait would end past it.
    """
    deadline = time.monotonic() + timeout
    tries: list[_T] = []
    for number in range(1, policy.max_attempts + 1):
        if number > 1:
            wait = policy.waits[number - 2]
            if time.monotonic() + wait >= deadline:
                break
            await anyio.sleep(wait)
        tries.append(await once(deadline - time.monotonic()))
        if ok(tries[-1]):
            break
    return tries


def expect_checks(done: Completed, expect: ShellExpect | None) -> list[AssertionResult]:
    """A finished command checked by a shell suite's `expect` (exit status 0 when none is given)."""
    assertions = check(done.returncode, expect.exit_code if expect else 0, "exitCode")
    if expect is not None:
        for stream, wanted in (("stdout", expect.stdout), ("stderr", expect.stderr)):
            if wanted is not None:
                text = done.stdout if stream == "stdout" else done.stderr
                assertions += check(text, {"contains": wanted} if isinstance(wanted, str) else wanted, stream)
    return assertions


def seconds_text(value: float) -> str:
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:g}s"


def tail(stdout: str, stderr: str, limit: int = 20_000) -> str:
    text = stdout + (("\n[stderr]\n" + stderr) if stderr else "")
    return text if len(text) <= limit else "…" + text[-limit:]


def one_line(text: str) -> str:
    return text.replace("\r", "").replace("\n", "\\n")


def short(text: str) -> str:
    return text if len(text) <= 60 else text[:59] + "…"


def epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
