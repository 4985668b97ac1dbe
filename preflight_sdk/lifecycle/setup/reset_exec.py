"""A service's `reset: {exec}`: its command run in the running container, bounded by a timeout.

`docker exec` has no way to stop what it started: a command cut short by its client runs on in
the container. So the command runs under a small `sh` wrapper that first writes its process id
to stderr (a marker line, taken out of the output) and then becomes the command (`exec`). The
engine starts every exec as the leader of a process group of its own, so past the timeout one
more exec kills that group: the command and whatever it started. The reset then fails with
`RESET_FAILED` (`details.timedOut`), and the setup marks the service for its container to be
recreated by the next run (`recreate_next`), since a command killed halfway may leave it in any
state.

An image without `sh` still runs a list command, unwrapped (it cannot be killed at its timeout,
and the error says so).
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import msgspec

from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import InfrastructureError, PreflightError, single_error
from preflight_sdk.core.redaction import Redactor

from ...config import LoadedConfig, ServiceConfig
from ...engine.base import Engine, ExecResult
from ..session.state import SessionState

__all__ = ["RESET_TIMEOUT", "exec_resets", "recreate_next", "reset_timeout", "timed_out_reset"]

RESET_TIMEOUT = 60.0
"""Seconds a reset's `exec` may run when its `reset.timeout` says nothing (docs/e2e-yaml.md)."""

_TAIL = 20
_KILL_TIMEOUT = 10.0
_MARK = "preflight-reset-pid="
# `$0` is the marker's prefix; "$@" the command, which takes the wrapper's process (and group).
_WRAPPER = 'echo "$0$$" >&2; exec "$@"'
_NO_SHELL = (126, 127)  # the exit codes of an exec whose program could not be started


def reset_timeout(service: ServiceConfig) -> float:
    """Seconds the `exec` reset of `service` may run (its `reset.timeout`, else `RESET_TIMEOUT`)."""
    reset = service.reset
    given = None if isinstance(reset, str) else reset.timeout
    return RESET_TIMEOUT if given is None else parse_duration(given, field="reset.timeout")


def timed_out_reset(error: BaseException | None) -> str | None:
    """The service whose reset `exec` was stopped at its timeout, when that is what `error` is."""
    if isinstance(error, PreflightError) and error.code == "RESET_FAILED" and error.details:
        if error.details.get("timedOut") is True and isinstance(error.details.get("service"), str):
            return str(error.details["service"])
    return None


def recreate_next(session: SessionState, error: BaseException | None) -> SessionState:
    """`session` marking the service whose reset timed out (in `error`) for the next setup to recreate."""
    name = timed_out_reset(error)
    if name is None or name in session.recreate:
        return session
    return msgspec.structs.replace(session, recreate=[*session.recreate, name])


async def exec_resets(
    engine: Engine, loaded: LoadedConfig, session: SessionState, names: Sequence[str], redactor: Redactor
) -> None:
    """Run each named service's `reset: {exec}` in its running container, all at once.

    Raises:
        InfrastructureError: `RESET_FAILED` when a command exits non-zero, or does not finish within
            its timeout (then it is killed, and `details.timedOut` is true).
    """
    containers = {r.service: r.name for r in session.containers}

    async def one(service: ServiceConfig) -> None:
        assert not isinstance(service.reset, str) and service.reset.exec is not None
        command = service.reset.exec
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        container = containers[service.name]
        timeout = reset_timeout(service)
        outcome, pid = await _run(engine, container, argv, timeout, wrapped=True)
        if pid is None and outcome.exit_code in _NO_SHELL and not isinstance(command, str):
            outcome, pid = await _run(engine, container, argv, timeout, wrapped=False)  # no `sh` there
        if outcome.exit_code == 0 and not outcome.timed_out:
            return
        lines = redactor.lines((outcome.stdout + outcome.stderr).splitlines()[-_TAIL:])
        details = {"service": service.name, "exitCode": outcome.exit_code, "output": lines}
        if not outcome.timed_out:
            raise InfrastructureError(
                f"the reset of `{service.name}` exited {outcome.exit_code}"
                + (f": {lines[-1]}" if lines else ""),
                code="RESET_FAILED",
                hint=f"read details.output; fix `reset.exec` of {service.name} in e2e.yaml (it must exit 0), "
                "or call `run` with fresh=true to start the environment anew",
                details=details,
            )
        killed = pid is not None and await _kill_group(engine, container, pid)
        shown = f"{timeout:g}s"
        raise InfrastructureError(
            f"the reset of `{service.name}` did not finish within {shown}"
            + (
                " and was killed" if killed else "; it could not be killed and may still run in its container"
            ),
            code="RESET_FAILED",
            hint=f"make `reset.exec` of {service.name} finish sooner, or give it more time with "
            f"`reset.timeout` (now {shown}); the next run will recreate {service.name}'s container "
            "(or call run with fresh=true to start the environment anew)",
            details={**details, "timedOut": True, "timeout": timeout, "killed": killed},
        )

    try:
        async with anyio.create_task_group() as tg:
            for name in names:
                service = loaded.service(name)
                assert service is not None
                tg.start_soon(one, service)
    except BaseExceptionGroup as group:
        raise single_error(group) from None


async def _run(
    engine: Engine, container: str, argv: list[str], timeout: float, *, wrapped: bool
) -> tuple[ExecResult, int | None]:
    """Run `argv` (under the wrapper that says its pid, when `wrapped`); the outcome without the
    marker line, and the command's pid when it said it."""
    command = ["sh", "-c", _WRAPPER, _MARK, *argv] if wrapped else argv
    outcome = await engine.exec(container, command, timeout=timeout)
    if not wrapped:
        return outcome, None
    pid: int | None = None
    kept: list[str] = []
    for line in outcome.stderr.splitlines(keepends=True):
        if pid is None and line.startswith(_MARK) and line.strip().removeprefix(_MARK).isdigit():
            pid = int(line.strip().removeprefix(_MARK))
        else:
            kept.append(line)
    return msgspec.structs.replace(outcome, stderr="".join(kept)), pid


async def _kill_group(engine: Engine, container: str, pid: int) -> bool:
    """Kill the process group `pid` leads in `container` (the process alone, if it leads none)."""
    script = f"kill -KILL -- -{pid} 2>/dev/null || kill -KILL {pid}"
    try:
        done = await engine.exec(container, ["sh", "-c", script], timeout=_KILL_TIMEOUT)
    except PreflightError:
        return False
    return done.exit_code == 0 and not done.timed_out
