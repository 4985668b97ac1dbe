"""`RunPreparation`: what the environment does around a test run, as the run supervisor needs it.

The supervisor owns a run from `queued` to its end; the environment's part is the lifecycle's:
before the suites, the environment is brought to where they run (built and started where missing
or changed, reset when an earlier run used it, its mocks started afresh, the run recorded as using
it), as `RunRequest.prepare` says; after them, whatever happened, it is removed unless the request
keeps it. The lifecycle implements this protocol; a test may hand the supervisor another.
"""

from __future__ import annotations

from typing import Protocol

from preflight_sdk.core.progress import Reporter
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.run_request import RunRequest

__all__ = ["RunPreparation"]


class RunPreparation(Protocol):
    """The environment's side of a test run."""

    async def prepare(self, request: RunRequest, run_id: str, reporter: Reporter) -> SetupResult | None:
        """Make the environment ready for the run `run_id` as `request.prepare` says.

        Returns what bringing it up to date did (the run's `setup`), or None when nothing was
        done (`none`, or `if_running` while it does not run).
        """
        ...

    async def conclude(self, request: RunRequest) -> None:
        """After the run, whatever happened: remove the environment unless `request.keep`."""
        ...
