"""Recording mocks in a run (or a setup): which mocks, from where, and writing their routes at the end.

`record_request` checks what was asked (`record="payments"`, `upstream=...`) against e2e.yaml
before anything starts. `begin_recording` makes sure this process serves the mocks (it takes them
over from a detached host), checks each upstream answers, and puts the mocks in recording mode.
`end_recording` writes each mock's route file (only when the run finished: a cancelled one leaves
the file as it was) and serves the recorded routes from then on. A recording begun by `setup`
ends when the mocks stop (`clean`, or this process exiting) or when the next run or setup begins.
"""

from __future__ import annotations

import atexit
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig, MockConfig
from preflight_sdk.config.mocks.recorded import read_route_file, route_file_path
from preflight_sdk.core.errors import ErrorInfo, InputError, MockError, PreflightError, StateError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.recording import MockRecording

if TYPE_CHECKING:
    from preflight_sdk.mocks import MockHost
    from preflight_sdk.mocks.record import Recorder

    from ..session.context import ProjectContext

__all__ = [
    "ActiveRecording",
    "RecordRequest",
    "begin_recording",
    "checked_url",
    "end_recording",
    "end_setup_recording",
    "finish_run_recordings",
    "record_request",
    "recording_warnings",
    "replayed_mocks",
    "with_upstream",
]

_PROBE_TIMEOUT = 3.0


class RecordRequest(msgspec.Struct, frozen=True, kw_only=True):
    """The mocks to record and the upstream each forwards to."""

    upstreams: dict[str, str]


class ActiveRecording:
    """A recording going on: its mocks' recorders, and what went wrong at its start."""

    def __init__(self, owner: str, loaded: LoadedConfig, host: MockHost) -> None:
        self.owner = owner  # the run id, or "setup"
        self.loaded = loaded
        self.host = host
        self.recorders: dict[str, Recorder] = {}
        self.errors: dict[str, ErrorInfo] = {}
        self.ended = False


def record_request(loaded: LoadedConfig, record: str | None) -> RecordRequest | None:
    """Check `record` against the project's mocks: mock names, comma-separated, each with its
    upstream as `mock=URL` when it is not the mock's `proxy:` (`"payments"`,
    `"payments=https://api.example.com,github"`).

    Raises:
        MockError: `MOCK_NOT_FOUND` for a name e2e.yaml does not declare.
        InputError: `INVALID_INPUT` for a mock with no upstream, or a malformed upstream.
    """
    items = [part.strip() for part in (record or "").split(",") if part.strip()]
    if not items:
        return None
    mocks = loaded.config.mocks
    upstreams: dict[str, str] = {}
    for item in items:
        name, _, given = item.partition("=")
        name = name.strip()
        if name not in mocks:
            valid = ", ".join(mocks) or "none are declared"
            raise MockError(
                f"no mock named `{name}` to record",
                code="MOCK_NOT_FOUND",
                hint=f"valid mocks: {valid}",
                details={"mock": name, "valid": list(mocks)},
            )
        url = given.strip() or mocks[name].proxy
        if not url:
            raise InputError(
                f"mock `{name}` has no upstream to record from",
                hint=f"give its real service's base URL (`{name}=https://api.example.com`, on the command "
                f"line `--upstream URL`) or set `mocks.{name}.proxy` in e2e.yaml",
                details={"mock": name},
            )
        upstreams[name] = checked_url(url, name).rstrip("/")
    return RecordRequest(upstreams=upstreams)


def with_upstream(record: str | None, upstream: str | None) -> str | None:
    """`record` with the upstreams of `upstream` (one URL when one mock records, else `mock=URL`
    pairs) written into it as `mock=URL`: how the CLI's `--upstream` reaches `record`.

    Raises:
        InputError: `INVALID_INPUT` when `upstream` names no recorded mock, or one URL is given
            for several mocks.
    """
    if not upstream:
        return record
    names = [part.split("=", 1)[0].strip() for part in (record or "").split(",") if part.strip()]
    if not names:
        raise InputError(
            "--upstream is only used with --record", hint="e.g. --record payments --upstream URL"
        )
    parts = [p.strip() for p in upstream.split(",") if p.strip()]
    if len(parts) == 1 and "=" not in parts[0].split("://", 1)[0]:
        if len(names) > 1:
            raise InputError(
                "one --upstream URL for several recorded mocks",
                hint="give one per mock: --upstream payments=https://…,github=https://…",
                details={"mocks": names},
            )
        return f"{names[0]}={parts[0]}"
    pairs: dict[str, str] = {}
    for part in parts:
        name, _, url = part.partition("=")
        if name.strip() not in names or not url:
            raise InputError(
                f"`{part}` does not name a recorded mock and its upstream",
                hint=f"write mock=URL for each of {', '.join(names)}",
                details={"upstream": part, "record": names},
            )
        pairs[name.strip()] = url.strip()
    return ",".join(f"{n}={pairs[n]}" if n in pairs else n for n in names)


def checked_url(url: str, mock: str) -> str:
    """`url` when it is an http(s) URL with a host (`INVALID_INPUT` otherwise)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"the upstream of mock `{mock}` is not an http(s) URL: {url!r}",
            hint="e.g. https://api.example.com or http://127.0.0.1:8080",
            details={"mock": mock},
        )
    return url


async def _probe(url: str) -> str | None:
    """Why the upstream at `url` cannot be reached (None when a connection opens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with anyio.fail_after(_PROBE_TIMEOUT):
            stream = await anyio.connect_tcp(host, port)
            await stream.aclose()
    except TimeoutError:
        return f"no connection within {_PROBE_TIMEOUT:.0f}s"
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    return None


async def _served_here(ctx: ProjectContext, reporter: Reporter) -> MockHost:
    """This process's mock host, taking the mocks over from a detached host when one serves them."""
    from .host import ensure_mocks, stop_detached_mocks

    host: MockHost | None = ctx.mocks
    if host is not None and host.running():
        return host
    session = ctx.require_session()
    await stop_detached_mocks(session.mocks, ctx.state_root)
    await ensure_mocks(ctx, reporter)
    host = cast("MockHost | None", ctx.mocks)
    if host is None or not host.running():
        pids = sorted({r.pid for r in session.mocks if r.pid})
        raise StateError(
            "another process serves this project's mocks, so this one cannot record them",
            hint="record from the process that serves them (the MCP server that set the environment up), "
            "or clean and run again",
            details={"pids": pids},
        )
    return host


async def begin_recording(
    ctx: ProjectContext, request: RecordRequest | None, *, owner: str, reporter: Reporter
) -> ActiveRecording | None:
    """End a recording `setup` left going, then start `request`'s (see the module docstring)."""
    previous = ctx.recording
    if previous is not None and previous.owner == "setup":
        ctx.recording = None
        ctx.ended_recordings = await end_recording(previous, completed=True)
    if request is None:
        return None
    loaded = ctx.require_loaded()
    host = await _served_here(ctx, reporter)
    active = ActiveRecording(owner, loaded, host)
    reasons: dict[str, str | None] = {}

    async def probe(name: str, url: str) -> None:
        reasons[name] = await _probe(url)

    async with anyio.create_task_group() as group:
        for name, url in request.upstreams.items():
            group.start_soon(probe, name, url)
    for name, url in request.upstreams.items():
        shown = loaded.redactor.url(url)
        why = reasons.get(name)
        if why is not None:
            active.errors[name] = MockError(
                f"mock `{name}` cannot reach its upstream {shown} ({why}): its calls are answered 502",
                code="MOCK_UPSTREAM_UNREACHABLE",
                hint="start the upstream (or fix `upstream` / `mocks." + name + ".proxy`) and record again",
                details={"mock": name, "upstream": shown},
            ).to_info()
            reporter.step(
                f"mock {name}: upstream {shown} unreachable ({why})", scope="mocks", status="failed"
            )
        else:
            reporter.step(f"mock {name}: recording from {shown}", scope="mocks")
        active.recorders[name] = host.record(name, url)
    ctx.recording = active
    if owner == "setup":
        _flush_at_exit(active)
    return active


def _flush_at_exit(active: ActiveRecording) -> None:
    """A recording begun by `setup` is written when this interpreter exits (before its mocks move to
    a detached host: exit functions run last registered first), unless it ended before."""

    def flush() -> None:
        try:
            _end(active, completed=True)
        except (PreflightError, OSError):
            pass  # at exit: nothing to report to

    atexit.register(flush)


async def end_recording(active: ActiveRecording, *, completed: bool) -> list[MockRecording]:
    """Write each recorded mock's route file (only when `completed`) and serve its routes from then on."""
    with anyio.CancelScope(shield=True):
        done: list[MockRecording] = await anyio.to_thread.run_sync(lambda: _end(active, completed=completed))
    return done


def _end(active: ActiveRecording, *, completed: bool) -> list[MockRecording]:
    if active.ended:
        return []
    active.ended = True
    at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return [_finish(active, name, recorder, completed, at) for name, recorder in active.recorders.items()]


def _finish(
    active: ActiveRecording, name: str, recorder: Recorder, completed: bool, at: str
) -> MockRecording:
    from preflight_sdk.mocks.record import save_recording

    loaded = active.loaded
    path = route_file_path(loaded.path, name)
    shown = os.path.relpath(path, loaded.root)
    error = active.errors.get(name)
    result = MockRecording(
        mock=name,
        mode="recorded",
        file=shown,
        upstream=loaded.redactor.url(recorder.upstream),
        exchanges=len(recorder),
        failed=recorder.failed,
        left_out=recorder.left_out,
        error=error,
    )
    if completed:
        try:
            saved = save_recording(recorder, mock=name, path=path, redactor=loaded.redactor, at=at)
        except (PreflightError, OSError) as exc:
            failure = exc if isinstance(exc, PreflightError) else _write_error(exc, shown)
            result = msgspec.structs.replace(result, error=failure.to_info())
        else:
            if saved.merged is not None:
                merged = saved.merged
                result = msgspec.structs.replace(
                    result,
                    written=True,
                    added=merged.added,
                    replaced=merged.replaced,
                    unchanged=merged.unchanged,
                    kept=merged.kept,
                )
    routes = _replay_config(loaded.config.mocks[name], path)
    recorded = [r for r in routes.routes if r.recorded is not None]
    try:
        active.host.stop_recording(name, routes)
    except PreflightError as exc:
        result = msgspec.structs.replace(result, error=result.error or exc.to_info())
    return msgspec.structs.replace(
        result,
        routes=len(recorded),
        recorded_at=max((r.recorded.at for r in recorded if r.recorded), default=None),
    )


def _write_error(exc: OSError, file: str) -> PreflightError:
    return PreflightError(
        f"the recorded routes could not be written to {file}: {exc.strerror or exc}",
        code="FILESYSTEM_ERROR",
        hint="check the folder is writable and has room, then record again (the previous file is whole)",
        details={"file": file},
    )


def _replay_config(mock: MockConfig, path: Path) -> MockConfig:
    """The mock with its hand-written routes and the routes its route file holds now."""
    hand_written = [r for r in mock.routes if r.recorded is None]
    recorded, problems = read_route_file(path)
    routes = hand_written + (recorded.routes if recorded is not None and not problems else [])
    return msgspec.structs.replace(mock, routes=routes)


def replayed_mocks(loaded: LoadedConfig, recording: set[str]) -> list[MockRecording]:
    """The mocks that answered from routes recorded earlier (those not recording now)."""
    found: list[MockRecording] = []
    for name, mock in loaded.config.mocks.items():
        recorded = [r.recorded.at for r in mock.routes if r.recorded is not None]
        if recorded and name not in recording:
            found.append(
                MockRecording(
                    mock=name,
                    mode="replayed",
                    file=os.path.relpath(route_file_path(loaded.path, name), loaded.root),
                    routes=len(recorded),
                    recorded_at=max(recorded),
                )
            )
    return found


async def finish_run_recordings(ctx: ProjectContext, run_id: str, *, completed: bool) -> list[MockRecording]:
    """What the mocks' recorded routes did in run `run_id`: the recording it began (written when
    `completed`), the one a setup left (ended as the run began), and the mocks that replayed."""
    active = ctx.recording
    done: list[MockRecording] = list(ctx.ended_recordings)
    ctx.ended_recordings = []
    if active is not None and active.owner == run_id:
        ctx.recording = None
        done += await end_recording(active, completed=completed)
    loaded = ctx.loaded
    if loaded is not None:
        done += replayed_mocks(loaded, {r.mock for r in done})
    return done


def recording_warnings(recordings: list[MockRecording]) -> list[str]:
    """One line per recording that could not be completed, for the run's warnings."""
    return [f"recording mock {r.mock}: {r.error.message}" for r in recordings if r.error is not None]


async def end_setup_recording(ctx: ProjectContext) -> list[MockRecording]:
    """End the recording `setup` began, writing its routes (clean does, before the mocks stop)."""
    ended, ctx.ended_recordings = list(ctx.ended_recordings), []
    active = ctx.recording
    if active is None or active.owner != "setup":
        return ended
    ctx.recording = None
    return ended + await end_recording(active, completed=True)
