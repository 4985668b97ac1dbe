"""Rules of a service's `reset:`: one way at a time, jobs that exist, volumes to snapshot.

The types (a mode or `{exec}` / `{jobs}`) are checked by the validator; these are the rules that
need the other services: `jobs` must name jobs, a job has no reset of its own (it runs again when
a service it depends on is recreated), and `snapshot` needs a named volume to restore.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .model import ResetSteps
from .validate import Validator, did_you_mean

if TYPE_CHECKING:
    from .rules import ServiceEntry

__all__ = ["check_resets", "named_volumes"]


def named_volumes(volumes: Sequence[str]) -> list[str]:
    """The named volumes among `src:dst` mounts (not a host path, not an anonymous volume)."""
    names = []
    for volume in volumes:
        source, sep, _ = volume.partition(":")
        if sep and not source.startswith((".", "/", "~")) and "/" not in source:
            names.append(source)
    return names


def check_resets(services: list[ServiceEntry], out: Validator) -> None:
    """Add a problem to `out` for every `reset:` that cannot work."""
    jobs = [s.name for s in services if s.kind == "job"]
    for entry in services:
        where = (*entry.path, "reset")
        reset = entry.reset
        if entry.kind == "job":
            if reset != "auto":
                out.add(
                    where,
                    f"job `{entry.name}` has no reset of its own: it runs again when a service it depends "
                    f"on is recreated, or when a service names it (`reset: {{jobs: [{entry.name}]}}`)",
                )
            continue
        if reset == "snapshot" and not named_volumes(entry.container.volumes):
            out.add(
                where,
                f"`snapshot` restores named volumes, and service `{entry.name}` mounts none: "
                "`recreate` starts its container (anonymous volumes included) anew",
                suggestion="recreate",
            )
        if isinstance(reset, ResetSteps):
            _check_steps(reset, where, jobs, out)


def _check_steps(reset: ResetSteps, where: tuple[str | int, ...], jobs: list[str], out: Validator) -> None:
    if (reset.exec is None) == (reset.jobs is None):
        out.add(
            where,
            'give exactly one of `exec` (a command run in the container, e.g. `{exec: "psql -c '
            "'TRUNCATE orders'\"}`) and `jobs` (jobs to run again, e.g. `{jobs: [seed]}`)",
        )
    if reset.exec is not None and not (reset.exec.strip() if isinstance(reset.exec, str) else reset.exec):
        out.add((*where, "exec"), "`exec` is empty: give the command that resets the service")
    if reset.timeout is not None and reset.exec is None:
        out.add(
            (*where, "timeout"),
            "`timeout` limits `exec`; jobs run again with their own readiness timeout",
        )
    if reset.jobs is not None and not reset.jobs:
        out.add((*where, "jobs"), "`jobs` is empty: name the jobs to run again, e.g. `[seed]`")
    for index, name in enumerate(reset.jobs or ()):
        if name not in jobs:
            out.add(
                (*where, "jobs", index),
                f"`{name}` is not a job (`kind: job`)",
                suggestion=did_you_mean(name, jobs),
            )
