"""One verification session: spawn, connect with the official client, list tools, shut down.

One deadline covers spawn, handshake and the whole `tools/list` walk; it is lifted before the
optional tool calls, which have their own per-call limit. Whatever happens (a command that does
not exist, a server that exits, hangs, writes garbage or breaks the protocol), the session ends
with findings, never an exception, and with no process of the server left running.
"""

from __future__ import annotations

import math
import os
import secrets
import tempfile
from collections.abc import Awaitable, Callable
from typing import IO, Any

import anyio
import anyio.to_thread
import msgspec
from mcp import Client, MCPError
from mcp_types import Implementation
from pydantic import ValidationError

from preflight_sdk._version import __version__

from .listing import list_all_tools, validation_summary
from .procs import MARKER_VARIABLE
from .result import Finding
from .spec import ServerSpec
from .transport import Recorder, stdio_transport

__all__ = ["STDERR_TAIL_LINES", "SessionOutcome", "run_session"]

STDERR_TAIL_LINES = 20

AfterListing = Callable[[Client, list[dict[str, Any]]], Awaitable[list[Finding]]]


class SessionOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one session produced.

    Attributes:
        tools: the served tool definitions, raw wire dicts in server order; None when the listing
            could not be obtained.
        findings: server-level findings plus those of `after_listing`.
        stderr_tail: the last lines of the server's stderr.
    """

    tools: list[dict[str, Any]] | None
    findings: list[Finding]
    stderr_tail: list[str]
    name: str | None = None
    version: str | None = None
    protocol_version: str | None = None


async def run_session(
    spec: ServerSpec, *, limit: float, after_listing: AfterListing | None = None
) -> SessionOutcome:
    """Run the server of `spec`, list its tools within `limit` seconds, then call `after_listing`.

    Args:
        spec: how to start the server (argv, cwd, environment).
        limit: seconds for spawn + handshake + every `tools/list` page together.
        after_listing: optional checks that talk to the server once the listing is complete
            (their findings are added to the outcome).
    """
    assert spec.argv is not None
    recorder = Recorder(secrets.token_hex(8))
    env = {**os.environ, **spec.env, MARKER_VARIABLE: recorder.marker}
    findings: list[Finding] = []
    tools: list[dict[str, Any]] | None = None
    info: dict[str, str | None] = {}
    failure: OSError | MCPError | ValidationError | None = None
    errlog: IO[bytes] = await anyio.to_thread.run_sync(lambda: tempfile.TemporaryFile("w+b"))
    try:
        with anyio.move_on_after(limit) as deadline:
            try:
                client = Client(
                    stdio_transport(spec.argv, cwd=spec.cwd, env=env, errlog=errlog, recorder=recorder),
                    mode="auto",
                    cache=None,
                    client_info=Implementation(name="preflight-verify", version=__version__),
                )
                async with client:
                    recorder.handshake_done = True
                    info = _server_info(client)
                    tools = await list_all_tools(client, recorder, findings)
                    deadline.deadline = math.inf
                    if tools is not None and after_listing is not None:
                        findings.extend(await _calls(client, tools, findings, after_listing))
            except (OSError, MCPError, ValidationError, BaseExceptionGroup) as exc:
                failure = _leaf(exc)
                if failure is None:
                    raise
        tail = await anyio.to_thread.run_sync(_tail, errlog)
    finally:
        errlog.close()  # not in a thread: this must also happen when the caller is cancelled
    last = f"; last stderr line: {tail[-1]!r}" if tail else ""
    if deadline.cancel_called:
        findings.append(
            Finding(
                severity="error",
                code="SERVER_TIMEOUT",
                message=f"no answer to {recorder.phase} within {limit:g} s; the server was stopped "
                f"(raise `timeout` if it is only slow to start){last}",
            )
        )
    elif failure is not None:
        findings.append(_failed(spec, recorder, failure, last))
    findings.extend(_stdout_findings(recorder))
    if recorder.leftovers:
        findings.append(
            Finding(
                severity="error",
                code="PROCESS_LEFT_BEHIND",
                message=f"processes {recorder.leftovers} of the server survived SIGKILL",
            )
        )
    return SessionOutcome(tools=tools, findings=findings, stderr_tail=tail, **info)


async def _calls(
    client: Client, tools: list[dict[str, Any]], findings: list[Finding], after_listing: AfterListing
) -> list[Finding]:
    if any(f.code == "PROTOCOL_ERROR" for f in findings):
        # The client would re-list (and fail again) before validating each result.
        return [
            Finding(
                severity="info",
                code="CALLS_SKIPPED",
                message="no tool was called: the client rejected the tools/list result",
            )
        ]
    return await after_listing(client, tools)


def _server_info(client: Client) -> dict[str, str | None]:
    server = client.server_info
    return {
        "name": server.name if server else None,
        "version": (server.version or None) if server else None,
        "protocol_version": client.protocol_version,
    }


def _leaf(exc: BaseException) -> OSError | MCPError | ValidationError | None:
    """Return the failure inside `exc` (task groups wrap it), or None if it is something else."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _leaf(inner)
            if found is not None:
                return found
        return None
    return exc if isinstance(exc, OSError | MCPError | ValidationError) else None


def _failed(
    spec: ServerSpec, recorder: Recorder, exc: OSError | MCPError | ValidationError, last: str
) -> Finding:
    if recorder.process is None:
        command = spec.argv[0] if spec.argv else "?"
        return Finding(
            severity="error", code="SERVER_START_FAILED", message=f"cannot start {command!r}: {exc}"
        )
    status = recorder.returncode
    if recorder.server_gone:
        how = f"exited with status {status}" if status is not None and status >= 0 else "closed its stdout"
        if not recorder.handshake_done:
            return Finding(
                severity="error",
                code="SERVER_START_FAILED",
                message=f"the server {how} before answering the handshake{last}",
            )
        return Finding(
            severity="error",
            code="SERVER_EXITED",
            message=f"the server {how} during {recorder.phase}{last}",
        )
    if isinstance(exc, MCPError):
        text = f"JSON-RPC error {exc.code}: {exc.message}"
    elif isinstance(exc, ValidationError):
        text = f"the result does not conform to MCP: {validation_summary(exc)}"
    else:
        text = str(exc) or type(exc).__name__
    return Finding(severity="error", code="PROTOCOL_ERROR", message=f"{recorder.phase} failed: {text}")


def _stdout_findings(recorder: Recorder) -> list[Finding]:
    out = [
        Finding(
            severity="error",
            code="STDOUT_POLLUTION",
            message=f"stdout line that is not a JSON-RPC message: {line!r} (log to stderr instead)",
        )
        for line in recorder.stray_lines
    ]
    if recorder.stray_count > len(recorder.stray_lines):
        out.append(
            Finding(
                severity="error",
                code="STDOUT_POLLUTION",
                message=f"{recorder.stray_count - len(recorder.stray_lines)} more non-JSON stdout lines",
            )
        )
    out.extend(
        Finding(
            severity="error",
            code="PROTOCOL_ERROR",
            message=f"stdout JSON that is not a JSON-RPC message: {line!r}",
        )
        for line in recorder.invalid_messages
    )
    return out


def _tail(errlog: IO[bytes]) -> list[str]:
    errlog.flush()
    errlog.seek(0, os.SEEK_END)
    size = errlog.tell()
    errlog.seek(max(0, size - 64 * 1024))
    text = errlog.read().decode(errors="replace")
    return [line.rstrip() for line in text.splitlines() if line.strip()][-STDERR_TAIL_LINES:]
