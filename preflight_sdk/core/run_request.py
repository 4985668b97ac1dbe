"""`RunRequest`: what a caller asks of a run, one value from the face that took it to the store.

A face calls an operation (`run`, `run_suite`, `resume_run`, `run_test`, `build`, `setup`); the
operation says what it asks as one `RunRequest`; the run supervisor starts the run from it and the
store records it. Nothing on the way adds or drops an argument: a new option of a run is a field
here, with its default, and every place that reads the request sees it.

Two requests are the same request (an idempotency key replays the run) when every field but the
key is equal: a new field takes part in that without being named anywhere else.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .durations import parse_duration
from .errors import InputError
from .results.run import RunKind

__all__ = ["Preparation", "RunKind", "RunRequest"]

Preparation = Literal["up_to_date", "if_running", "none"]
"""What a test run does to the environment before its suites:

- `up_to_date` (`run`, `resume_run`): built and started where missing or changed, reset when an
  earlier run used it;
- `if_running` (`run_suite`, a saved test that names a service or a mock): when it runs, brought
  up to date and reset as for `run` (nothing missing is built); when it does not, nothing starts;
- `none`: nothing (a test that needs no environment, or a sharded run, whose shards bring up
  copies of their own).
"""

_KEY_HINT = "e.g. a task id or a commit sha"


class RunRequest(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One run as its caller asked for it.

    Attributes:
        kind: a test run, a build or a setup.
        suites: the suite ids asked for, in order (e2e.yaml's or saved suites); None: all of e2e.yaml's.
        parallel: run the suites marked `parallel` together (None: e2e.yaml's `tests.parallel`).
        prepare: what happens to the environment before the suites (see `Preparation`).
        keep: leave the environment running afterwards; false removes it once the run ended.
        fresh: remove the environment and rebuild every image without cache first.
        warm: keep pytest interpreters warm for the next run when the environment is kept.
        shards: split the suites over these engines (`local`, `context:NAME`, a DOCKER_HOST URL);
            None: the project's own environment.
        selection: per suite id, the only cases to run (a resumed run); None: every case.
        resumed_from: the run this one resumes.
        test_id: the saved test whose history this run belongs to.
        idempotency_key: the same key returns the same run (1 to 200 characters).
        no_cache: a build without Docker's layer cache.
        service: a build of this service only.
        pull: a build that pulls ready-made images missing locally.
        timeout: a setup's readiness limit per service ("120s").
        record: the mocks to record in this run or setup, each with the upstream it forwards to.
        affected: run only the cases an edit can affect; the others carry their last verdict.
        affected_within: the oldest verdict `affected` carries ("1d").
        fail_fast: stop the run at its first failure.
    """

    kind: RunKind = "test"
    suites: tuple[str, ...] | None = None
    parallel: bool | None = None
    prepare: Preparation = "none"
    keep: bool = True
    fresh: bool = False
    warm: bool = True
    shards: tuple[str, ...] | None = None
    selection: dict[str, tuple[str, ...]] | None = None
    resumed_from: str | None = None
    test_id: str | None = None
    idempotency_key: str | None = None
    no_cache: bool = False
    service: str | None = None
    pull: bool = False
    timeout: str | None = None
    record: dict[str, str] | None = None
    affected: bool = False
    affected_within: str = "1d"
    fail_fast: bool = False

    def __post_init__(self) -> None:
        key = self.idempotency_key
        if key is not None and not 1 <= len(key) <= 200:
            raise InputError("idempotency_key must be 1 to 200 characters", hint=_KEY_HINT)
        if parse_duration(self.affected_within, field="affectedWithin") <= 0:
            raise InputError(
                f"affected_within must be longer than 0s, not {self.affected_within!r}",
                hint='e.g. "1d" or "6h"',
            )

    def identity(self) -> bytes:
        """What makes two requests the same request: every field but the idempotency key, encoded."""
        return _canonical.encode(msgspec.structs.replace(self, idempotency_key=None))

    def picked(self) -> dict[str, set[str]] | None:
        """`selection` as sets, the way the runners look cases up."""
        if self.selection is None:
            return None
        return {suite: set(cases) for suite, cases in self.selection.items()}


_canonical = msgspec.json.Encoder(order="sorted")
