"""What a run knew about the edit before it: which cases it could affect, and what it carried.

A run on a kept environment compares what each case touched the last time it ran (services,
mocks, pages) and the inputs of that run (each service's container and image, each mock's routes,
each suite's files, e2e.yaml, the engine) with the inputs now. The cases an edit can affect run
first; with `affected=True` only they run, and every other case is `carried`: its verdict is the
one of the run where it last ran, named with its id and age.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .base import Part

__all__ = ["AffectedSummary", "CarriedFrom", "CarriedVerdict", "Change"]


class CarriedVerdict(Part, frozen=True, kw_only=True):
    """The verdict of a case that did not run in this run: the one it had in run `run_id`.

    Attributes:
        run_id: the run in which the case last ran (a carried verdict is never carried twice: it
            names the run that ran it).
        status: its verdict there (a failure is never carried: it runs again).
        started_at: when that run started (ISO 8601, UTC).
        age: milliseconds between that run's start and this run's start.
    """

    run_id: str
    status: Literal["passed", "skipped"]
    started_at: str
    age: int = 0


class Change(Part, frozen=True, kw_only=True):
    """Something that changed since the cases' last runs: a service, a mock, a file, e2e.yaml.

    Attributes:
        kind: `service`, `mock`, `suite` (a suite's own files), `config` (e2e.yaml) or `engine`.
        name: the service, mock or suite (the file for `config`).
        why: what changed, in the setup plan's words when this run's setup saw it (`rebuilt:
            app.py changed`), else `changed since run <id>`.
        cases: how many cases it made affected (counting each case once per change).
    """

    kind: Literal["service", "mock", "suite", "config", "engine"]
    name: str
    why: str
    cases: int = 0


class CarriedFrom(Part, frozen=True, kw_only=True):
    """One earlier run whose verdicts this run carries, and how many."""

    run_id: str
    started_at: str
    age: int
    cases: int


class AffectedSummary(Part, frozen=True, kw_only=True):
    """How many of the run's cases an edit could affect, and why; what it carried and from where.

    Attributes:
        mode: `first` (every case ran, the affected ones first) or `only` (`affected=True`: only
            they ran, the others are `carried`).
        affected: how many cases could be affected (they ran, first).
        considered: how many cases were weighed (every case of the selected suites known so far).
        carried: how many cases did not run and carry an earlier verdict (mode `only`).
        changes: what changed, each with the number of cases it made affected.
        reasons: how many affected cases each other reason accounts for (`never ran: 12`,
            `failed last time: 3`, `touched something unknown: 40`, `last ran over 1d ago: 2`).
        carried_from: the runs the carried verdicts come from, newest first.
        blocked: why nothing at all could be carried (e2e.yaml or the engine changed), when so.
        stopped_at: with `failFast`, the first failing case, after which the rest was skipped.
    """

    mode: Literal["first", "only"]
    affected: int
    considered: int
    carried: int = 0
    changes: list[Change] = msgspec.field(default_factory=list)
    reasons: dict[str, int] = msgspec.field(default_factory=dict)
    carried_from: list[CarriedFrom] = msgspec.field(default_factory=list)
    blocked: str | None = None
    stopped_at: str | None = None
