"""`run` and `run_suite`: pick the suites, check the environment, run them, write the report.

Suites run in file order; when parallel runs are on (`tests.parallel`, or `parallel=True`), the
suites marked `parallel: true` then run together, up to `concurrency` at a time, each with its own
variables. A suite that declares cases but records none is failed, never an empty pass.
"""

from __future__ import annotations

import hashlib
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import anyio
import msgspec

from ..config import LoadedConfig, SuiteConfig, TestFile, load_test_file
from ..config.model import ParallelConfig
from ..durations import parse_duration
from ..errors import ConfigError, InputError, PreflightError, StateError
from ..lifecycle.context import ProjectContext
from ..lifecycle.mockhost import ensure_mocks
from ..progress import Reporter
from ..redaction import Redactor, redact_failure
from ..results.run import CaseResult, RunResult, SuiteResult, Totals
from .artifacts import new_run_id, write_artifacts
from .context import RunContext
from .environment import MockEndpoint, RunEnvironment, ServiceEndpoint
from .process_runners import run_pytest_suite, run_shell_suite
from .yaml_runner import TEARDOWN_LIMIT, run_yaml_suite, timeout_text

__all__ = ["run_suites"]

_DEFAULT_SUITE_TIMEOUT = 300.0
_PROCESS_GRACE = 10.0


async def run_suites(
    ctx: ProjectContext, *, suite_ids: list[str] | None, parallel: bool | None, reporter: Reporter
) -> RunResult:
    """Run the selected suites (all when `suite_ids` is None) and return the report."""
    loaded = await ctx.ensure_loaded()
    suites = _select(loaded, suite_ids)
    env = await _environment(ctx, loaded, reporter)
    run_id = new_run_id()
    total = sum(_declared_cases(loaded, s) for s in suites)
    run = RunContext(
        run_id=run_id,
        env=env,
        reporter=reporter,
        retry=loaded.config.tests.retry if loaded.config.tests else None,
        total_cases=total,
    )
    began = time.perf_counter()
    results: dict[str, SuiteResult] = {}
    taken: set[str] = set()
    enabled, concurrency = _parallel(loaded, parallel)
    serial = [s for s in suites if not (enabled and s.parallel)]
    together = [s for s in suites if enabled and s.parallel]
    try:
        for suite in serial:
            results[suite.id] = await _run_one(run, loaded, suite, taken)
        if together:
            limiter = anyio.CapacityLimiter(concurrency)

            async def one(suite: SuiteConfig) -> None:
                async with limiter:
                    results[suite.id] = await _run_one(run, loaded, suite, taken)

            async with anyio.create_task_group() as tg:
                for suite in together:
                    tg.start_soon(one, suite)
    finally:
        with anyio.CancelScope(shield=True):
            await run.http.aclose()
    redactor = loaded.redactor
    ordered = [_redacted(results[s.id], redactor) for s in suites]
    run.full_failures = {key: redact_failure(f, redactor) for key, f in run.full_failures.items()}
    result = _assemble(run, ordered, began)
    result = await anyio.to_thread.run_sync(
        write_artifacts, Path(loaded.root), result, run.events, run.full_failures
    )
    reporter.emit("done", result.summary, status="ok" if result.ok else "failed")
    return result


def _select(loaded: LoadedConfig, suite_ids: list[str] | None) -> list[SuiteConfig]:
    suites = loaded.suites
    if suite_ids is None:
        return suites
    known = {s.id: s for s in suites}
    unknown = [i for i in suite_ids if i not in known]
    if unknown:
        raise InputError(
            f"no suite with id {', '.join(f'`{u}`' for u in unknown)}",
            code="SUITE_NOT_FOUND",
            hint=f"valid suite ids: {', '.join(known) or '(none configured)'}",
            details={"unknown": unknown, "valid": list(known)},
        )
    return [known[i] for i in dict.fromkeys(suite_ids)]


async def _environment(ctx: ProjectContext, loaded: LoadedConfig, reporter: Reporter) -> RunEnvironment:
    session = ctx.require_session()
    needs = bool(loaded.services or loaded.config.mocks)
    if not needs:
        return RunEnvironment(loaded=loaded, services={}, mocks={}, engine=None)
    if session.state != "running":
        raise StateError(
            f"the environment is not running (state: {session.state})",
            code="NOT_RUNNING",
            hint="call setup first (or use `preflight run`, which builds, sets up, runs and cleans)",
            details={"state": session.state},
        )
    records = {r.service: r for r in session.containers}
    infos = {i.id: i for i in await ctx.engine.inspect([r.id for r in records.values()])} if records else {}
    services: dict[str, ServiceEndpoint] = {}
    broken: list[str] = []
    for service in loaded.services:
        record = records.get(service.name)
        info = infos.get(record.id) if record else None
        if info is None or (service.kind == "service" and not info.running):
            broken.append(f"{service.name} ({info.status if info else 'missing'})")
            continue
        ports = {p.container: p.host for p in info.ports}
        first = info.ports[0] if info.ports else None
        services[service.name] = ServiceEndpoint(
            name=service.name,
            url=f"http://127.0.0.1:{first.host}" if first else None,
            port=first.host if first else None,
            ports=ports,
            container_id=info.id,
            container_name=info.name,
        )
    if broken:
        raise StateError(
            "the environment is broken: " + ", ".join(broken),
            code="NOT_RUNNING",
            hint="read the logs of those services, then clean and setup again",
            details={"broken": broken},
        )
    await ensure_mocks(ctx, reporter)
    mocks: dict[str, MockEndpoint] = {}
    host = ctx.mocks
    recorded = {r.name: r.port for r in ctx.require_session().mocks}
    for name, mock in loaded.config.mocks.items():
        port = host.port(name) if host is not None and host.running() else recorded.get(name, mock.port)
        mocks[name] = MockEndpoint(name=name, url=f"http://127.0.0.1:{port}", port=port)
    return RunEnvironment(
        loaded=loaded,
        services=services,
        mocks=mocks,
        engine=ctx.engine,
        mock_host=host,
        network=session.network,
    )


def _parallel(loaded: LoadedConfig, override: bool | None) -> tuple[bool, int]:
    setting = loaded.config.tests.parallel if loaded.config.tests else None
    concurrency = setting.concurrency if isinstance(setting, ParallelConfig) else 4
    enabled = setting.enabled if isinstance(setting, ParallelConfig) else bool(setting)
    return (override if override is not None else enabled), concurrency


def _declared_cases(loaded: LoadedConfig, suite: SuiteConfig) -> int:
    test = loaded.test_files.get(suite.id)
    return len(test.cases) if test is not None else 1


async def _run_one(run: RunContext, loaded: LoadedConfig, suite: SuiteConfig, taken: set[str]) -> SuiteResult:
    """Run one suite of any runner; a suite that cannot run at all is a failed suite with its error.

    `suite_start` is recorded here, before the test file is even read, so every `suite_end` has
    its start, including a suite whose file does not load.
    """
    timeout = parse_duration(suite.timeout) if suite.timeout is not None else _DEFAULT_SUITE_TIMEOUT
    started = time.perf_counter()
    run.reporter.step(f"suite {suite.id}", scope=suite.id)
    run.event("suite_start", suite=suite.id)
    # Every runner keeps its own deadline and reports it with the cases it finished (YAML suites
    # then still run their teardown): this outer one only catches a runner that hangs past that.
    outer = timeout + _PROCESS_GRACE + (TEARDOWN_LIMIT if suite.runner == "yaml" else 0.0)
    try:
        with anyio.fail_after(outer):
            if suite.runner == "yaml":
                test = await anyio.to_thread.run_sync(_test_file, loaded.resolve(suite.file or ""))
                return await run_yaml_suite(run, loaded, suite, test, taken, timeout=timeout)
            if suite.runner == "pytest":
                return await run_pytest_suite(run, loaded, suite, taken)
            return await run_shell_suite(run, loaded, suite, taken)
    except TimeoutError:
        error = f"the suite did not finish within {timeout_text(suite)} and was stopped"
    except ConfigError as exc:
        error = str(exc)
    except PreflightError as exc:
        error = f"[{exc.code}] {exc.message}"
    return run.finish_suite(
        id=suite.id,
        name=suite.name or suite.id,
        runner=suite.runner,
        cases=[],
        seconds=time.perf_counter() - started,
        error=error,
    )


_PARSED: dict[str, tuple[bytes, TestFile]] = {}
_PARSED_LIMIT = 64
_PARSED_LOCK = threading.Lock()  # parallel suites load their files in worker threads


def _test_file(path: Path) -> TestFile:
    """Load a suite's test file, reusing the last parse while its content is unchanged (blocking).

    Read at each run, so an edit made after `init` is picked up; parsed again only when it changed.
    """
    try:
        digest = hashlib.blake2b(path.read_bytes(), digest_size=16).digest()
    except OSError:
        return load_test_file(path)  # raises CONFIG_NOT_FOUND with the path
    with _PARSED_LOCK:
        cached = _PARSED.get(str(path))
    if cached is not None and cached[0] == digest:
        return cached[1]
    test = load_test_file(path)
    with _PARSED_LOCK:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[str(path)] = (digest, test)
    return test


def _redacted(suite: SuiteResult, redactor: Redactor) -> SuiteResult:
    """The suite as every output shows it (report, junit, cases files, replies): secrets replaced."""
    cases = [
        msgspec.structs.replace(c, failure=redact_failure(c.failure, redactor)) if c.failure else c
        for c in suite.cases
    ]
    error = redactor.text(suite.error) if suite.error else suite.error
    return msgspec.structs.replace(suite, cases=cases, error=error)


def _assemble(run: RunContext, suites: list[SuiteResult], began: float) -> RunResult:
    cases: list[CaseResult] = [c for s in suites for c in s.cases]
    totals = Totals(
        passed=sum(c.status == "passed" for c in cases),
        failed=sum(c.status == "failed" for c in cases),
        skipped=sum(c.status == "skipped" for c in cases),
        total=len(cases),
    )
    status: Literal["passed", "failed"] = (
        "failed" if totals.failed or any(s.status == "failed" for s in suites) else "passed"
    )
    return RunResult(
        run_id=run.run_id,
        status=status,
        summary=_summary(suites, totals, status),
        totals=totals,
        duration=int((time.perf_counter() - began) * 1000),
        suites=suites,
        started_at=run.started.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )


def _summary(suites: list[SuiteResult], totals: Totals, status: str) -> str:
    text = f"{status}: {len(suites)} suite(s), {totals.total} case(s): {totals.passed} passed, {totals.failed} failed"
    if totals.skipped:
        text += f", {totals.skipped} skipped"
    broken = [s for s in suites if s.error]
    first = next((c for s in suites for c in s.cases if c.status == "failed" and c.failure), None)
    if first is not None and first.failure is not None:
        text += f". First failure {first.id}: {first.failure.summary}"
    elif broken:
        text += f". Suite {broken[0].id}: {broken[0].error}"
    return text[:400]


def _now() -> datetime:
    return datetime.now(UTC)
