"""A test run sharded across engines: one copy of the environment per engine, one run in the end.

Each engine gets its own copy (`Environment(..., shard=key)`: its own state file under
`.preflight/shards/<key>/`, session, labels, free host ports and mocks on free ports), brought up
to date, given its share of the suites (see `sharding`), and removed afterwards whatever
happened: failure, cancel, or a daemon that went away. All shards run at once; their suites
land in one `TestRunState`'s results, each case marked with its engine, so the owner records one
run with one report, junit and event log.

An engine that cannot be reached or whose environment does not come up fails its own suites
with the reason (`[CODE] message`, and the hint); the other engines' suites run on.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import anyio
import msgspec

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.contracts import ContractCoverage
from preflight_sdk.core.results.run import CaseResult, RunResult, ShardResult, SuiteResult
from preflight_sdk.lifecycle.environment import Environment
from preflight_sdk.suites.events import EventLog
from preflight_sdk.suites.given import NO_SUITES, GivenSuites
from preflight_sdk.suites.orchestrator import TestRunState, partial_result
from preflight_sdk.suites.touches import UNKNOWN, Touches

from .run_environment import run_suites_on
from .shard_plan import ShardSpec

__all__ = ["REACH_LIMIT", "Shard", "ShardedRunState", "run_sharded"]

REACH_LIMIT = 30.0  # seconds for an engine to answer at all (an ssh host that never replies)
CLEAN_LIMIT = 120.0  # seconds for removing one shard's environment


class Shard:
    """One engine's part of a sharded run, and how it went."""

    def __init__(self, spec: ShardSpec, suites: list[str], expected_ms: int, state: TestRunState) -> None:
        self.spec = spec
        self.suites = suites
        self.expected_ms = expected_ms
        self.state = state
        self.prepare: anyio.CancelScope | None = None
        self.status: Literal["passed", "failed", "error", "cancelled"] = "passed"
        self.error: PreflightError | None = None
        self.setup_ms = 0
        self.duration = 0
        self.cleaned = True
        self.reached = False  # the engine answered: something may have been started on it
        self.warnings: list[str] = []

    def outcome(self) -> ShardResult:
        """The shard as the run's result reports it."""
        return ShardResult(
            engine=self.spec.name,
            suites=self.suites,
            status=self.status,
            expected_ms=self.expected_ms,
            setup_ms=self.setup_ms,
            duration=self.duration,
            error=self.error.to_info() if self.error is not None else None,
            cleaned=self.cleaned,
            warnings=self.warnings,
        )


class _Merged:
    """The shards' run contexts seen as one (what the owner reads for progress and snapshots)."""

    def __init__(self, state: ShardedRunState) -> None:
        self.state = state
        self.started = datetime.now(UTC)
        self.log = state.log

    def _contexts(self) -> list[tuple[str, Any]]:
        return [(s.spec.name, s.state.context) for s in self.state.shards if s.state.context is not None]

    @property
    def finished(self) -> list[CaseResult]:
        return [
            msgspec.structs.replace(c, engine=name) for name, run in self._contexts() for c in run.finished
        ]

    @property
    def finished_cases(self) -> int:
        return sum(run.finished_cases for _, run in self._contexts())

    @property
    def saved_values(self) -> list[Any]:
        """The values the passing cases of every shard saved (kept for `resume_run`)."""
        return [value for _, run in self._contexts() for value in run.saved_values]

    @property
    def contracts(self) -> _MergedContracts:
        """The shards' contract checks seen as one (each shard checks the answers of its own copy)."""
        return _MergedContracts([run.contracts for _, run in self._contexts()])

    @property
    def touches(self) -> _MergedTouches:
        """What each case touched, as the shard that ran it saw (kept for the next affected run)."""
        return _MergedTouches([run.touches for _, run in self._contexts()])

    @property
    def total_cases(self) -> int:
        return sum(run.total_cases for _, run in self._contexts())

    @property
    def full_failures(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for _, run in self._contexts():
            merged.update(run.full_failures)
        return merged


class _MergedContracts:
    """The contract coverage of a sharded run: each shard's, one after the other."""

    def __init__(self, parts: list[Any]) -> None:
        self._parts = [part for part in parts if part.active]

    @property
    def active(self) -> bool:
        return bool(self._parts)

    def report(self) -> list[ContractCoverage]:
        return [item for part in self._parts for item in part.report()]

    @property
    def run_warnings(self) -> list[str]:
        """What the shards could not check (a served contract a `warn` run could not fetch)."""
        return [warning for part in self._parts for warning in part.run_warnings]


class _MergedTouches:
    """The touches of a sharded run: each case's, from the shard that ran it."""

    def __init__(self, parts: list[Touches]) -> None:
        self._parts = parts

    def of(self, case: str) -> list[str]:
        for part in self._parts:
            if case in part.cases:
                return part.of(case)
        return [UNKNOWN]


class ShardedRunState(TestRunState):
    """A test run's state when its suites are split over engines: one sub-state per shard."""

    def __init__(
        self,
        run_id: str,
        log: EventLog,
        specs: Sequence[ShardSpec],
        split: tuple[list[list[str]], list[int]],
        selection: dict[str, set[str]] | None = None,
        given: GivenSuites = NO_SUITES,
    ) -> None:
        super().__init__(run_id, log, selection, given)
        self.shards: list[Shard] = []
        parts, loads = split
        for spec, suites, expected in zip(specs, parts, loads, strict=True):
            sub = TestRunState(run_id, log, selection, given)
            sub.results = self.results  # every shard's suites land in the one run
            sub.engine = spec.name
            self.shards.append(Shard(spec, suites, expected, sub))
        # Set once the shards start: until then a cancel stops the run as a whole (its lock wait).
        self.merged: _Merged | None = None

    @property
    def context(self) -> Any:
        """The shards' contexts merged (the owner's view of the run's progress), once they started."""
        return getattr(self, "merged", None)

    @context.setter
    def context(self, value: Any) -> None:
        pass  # each shard has its own; `TestRunState.__init__` sets None

    def cancel(self) -> None:
        """Stop every shard: setups are cancelled (and removed), suites in flight run their teardown."""
        super().cancel()
        for shard in self.shards:
            shard.state.cancel()
            if shard.prepare is not None:
                shard.prepare.cancel()


async def run_sharded(
    env: Environment, state: ShardedRunState, *, parallel: bool | None, fresh: bool, reporter: Reporter
) -> RunResult:
    """Run each shard on its engine at once; return the one run they make together."""
    loaded = await env.ensure_loaded()
    state.redactor = loaded.redactor
    state.log.redactor = loaded.redactor
    state.began = time.perf_counter()
    state.merged = _Merged(state)
    state.phase = "suites"
    async with anyio.create_task_group() as tg:
        for shard in state.shards:
            tg.start_soon(_run_shard, env, state, shard, parallel, fresh, reporter)
    status = "cancelled" if state.cancel_requested else None
    result = partial_result(state, status=status)
    return msgspec.structs.replace(result, shards=[s.outcome() for s in state.shards])


async def _run_shard(
    env: Environment,
    state: ShardedRunState,
    shard: Shard,
    parallel: bool | None,
    fresh: bool,
    reporter: Reporter,
) -> None:
    name = shard.spec.name
    if not shard.suites:
        shard.warnings.append("no suite fell to this engine: nothing was started on it")
        return
    began = time.perf_counter()
    state.log.record("SHARD_STARTED", name=name, message=", ".join(shard.suites))
    copy = Environment(
        env.path, env.config_file, None, shard.spec.target or env.caller_target, shard=shard.spec.key
    )
    copy.lock_wait = env.lock_wait
    try:
        with anyio.CancelScope() as scope:
            shard.prepare = scope
            if state.cancel_requested:
                scope.cancel()
            reporter.step(f"{name}: bringing up its copy of the environment", scope=name)
            await _reach(copy, name)
            shard.reached = True
            await copy.up(build=True, fresh=fresh, timeout=None, reporter=reporter, stage=True)
        shard.prepare = None
        shard.setup_ms = int((time.perf_counter() - began) * 1000)
        if scope.cancelled_caught or state.cancel_requested:
            shard.status = "cancelled"
            return
        await run_suites_on(copy, shard.state, suite_ids=shard.suites, parallel=parallel, reporter=reporter)
        failed = any(state.results[s].status == "failed" for s in shard.suites if s in state.results)
        shard.status = "cancelled" if state.cancel_requested else "failed" if failed else "passed"
    except PreflightError as exc:
        _engine_failed(state, shard, exc)
    except Exception as exc:  # a bug must not take the other engines' suites down with it
        _engine_failed(state, shard, PreflightError(f"{type(exc).__name__}: {exc}", code="INTERNAL"))
    finally:
        shard.prepare = None
        with anyio.CancelScope(shield=True):
            await _remove(copy, shard)
        shard.duration = int((time.perf_counter() - began) * 1000)
        state.log.record("SHARD_FINISHED", name=name, status=shard.status, duration=shard.duration)


async def _reach(copy: Environment, name: str) -> None:
    """Ask the engine for its facts, within `REACH_LIMIT` (DOCKER_ERROR when it does not answer)."""
    loaded = await copy.ensure_loaded()
    if not loaded.services:
        return  # mocks and tests only: this copy needs no engine
    try:
        with anyio.fail_after(REACH_LIMIT):
            await copy.engine.info()
    except TimeoutError:
        raise PreflightError(
            f"the engine {name} did not answer within {REACH_LIMIT:.0f}s",
            code="DOCKER_ERROR",
            hint="check that the engine is up and reachable from here (`docker -H URL info`)",
            retryable=True,
        ) from None


def _engine_failed(state: ShardedRunState, shard: Shard, error: PreflightError) -> None:
    """Fail the shard's suites that did not finish with the reason its engine gave."""
    shard.status, shard.error = "error", error
    reason = f"[{error.code}] engine {shard.spec.name}: {error.message}"
    if error.hint:
        reason += f" (hint: {error.hint})"
    by_id = {s.id: s for s in state.suites}
    for suite_id in shard.suites:
        if suite_id in state.results:
            continue
        suite = by_id[suite_id]
        state.log.record("SUITE_STARTED", suite=suite_id)
        state.log.record("SUITE_FINISHED", suite=suite_id, status="failed", duration=0)
        state.results[suite_id] = SuiteResult(
            id=suite_id, name=suite.name or suite_id, runner=suite.runner, status="failed", duration=0,
            passed=0, failed=0, skipped=0, cases=[], error=reason, engine=shard.spec.name,
        )  # fmt: skip


async def _remove(copy: Environment, shard: Shard) -> None:
    """Remove the shard's environment and its state folder (bounded; a failure is a warning)."""
    problem: str | None = None
    with anyio.move_on_after(CLEAN_LIMIT) as bound:
        try:
            if copy.loaded is not None and shard.reached:
                await copy.clean(force=True)
        except PreflightError as exc:
            problem = f"[{exc.code}] {exc.message}"
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
    if bound.cancelled_caught:
        problem = f"it did not finish within {CLEAN_LIMIT:.0f}s"
    if problem is not None:
        shard.cleaned = False
        shard.warnings.append(
            f"removing the environment on {shard.spec.name} failed: {problem}; "
            "what is left carries the label preflight.root="
            + (copy.loaded.label_root if copy.loaded else "?")
        )
    folder = Path(copy.state_root)
    if shard.cleaned and copy.shard is not None and folder.name == copy.shard:
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(folder, ignore_errors=True))
