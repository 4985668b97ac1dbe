"""The run's affected stage, between setup and the suites: what the run runs on, and its order."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

import anyio

from preflight_sdk.core.durations import parse_duration
from preflight_sdk.lifecycle.session.context import ProjectContext
from preflight_sdk.suites.ordering import CaseOrder

from .inputs import current_inputs
from .planning import AffectedAsk, plan_affected

if TYPE_CHECKING:
    from preflight_sdk.core.run_request import RunRequest
    from preflight_sdk.suites.orchestrator import TestRunState

    from ..live import LiveRun
    from ..supervisor import RunSupervisor

__all__ = ["ask_of", "engine_identity", "weigh"]


def engine_identity(ctx: ProjectContext) -> str:
    """The engine a run's environment lives on, as its inputs name it (kind and address)."""
    record = ctx.engine_record()
    where = ", ".join(f"{k}={v}" for k, v in sorted(record.items()) if v) or "default"
    return f"{ctx.engine_kind()} ({where})"


def ask_of(request: RunRequest) -> AffectedAsk | None:
    """What a test run asks of its affected cases; None for a resumed run (it runs what did not pass)."""
    if request.resumed_from is not None:
        return None
    within = parse_duration(request.affected_within, field="affectedWithin")
    return AffectedAsk(only=request.affected, within_ms=int(within * 1000), fail_fast=request.fail_fast)


async def weigh(sup: RunSupervisor, live: LiveRun, plan: TestRunState, ask: AffectedAsk | None) -> None:
    """Record the inputs the run runs on; with `ask`, order it by what an edit can affect.

    Only a run whose environment is up orders its cases (its services' inputs are known then),
    unless it asked for the affected cases alone (`only`): then every case it cannot know about
    runs. A project without services and mocks has nothing to order by (its cases reach
    addresses of their own): it is left as it is unless `only` or `failFast` asks.
    """
    loaded = await sup.ctx.ensure_loaded()
    running = plan.setup is not None
    live.inputs = await anyio.to_thread.run_sync(
        partial(current_inputs, loaded, engine_identity(sup.ctx), running=running)
    )
    if ask is None:
        return
    if not ask.only and not (running and (loaded.services or loaded.config.mocks)):
        # Nothing to order by: every case is affected (what it reached cannot be known).
        plan.order = CaseOrder(fail_fast=True) if ask.fail_fast else None
        return
    suites = [s for s in plan.suites if s.id not in plan.synthetic]
    store = await sup.store()
    started = datetime.fromisoformat(live.started_at.replace("Z", "+00:00"))
    affected = await sup.call(
        partial(plan_affected, store, loaded, suites, live.inputs, ask, setup=plan.setup, started=started)
    )
    if affected is None:
        return
    plan.order = affected.order
    if affected.selection is not None:
        plan.selection = affected.selection
    live.affected = affected.summary
