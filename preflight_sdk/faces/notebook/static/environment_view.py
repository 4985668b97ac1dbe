"""What a run did with the environment before its suites: a line for the environment (set up by
which run, how many runs it served, reset or not) and one short line per service (built,
started, recreated, reused, reset and how), with why. Bounded: reasons are shortened."""

from __future__ import annotations

from preflight_sdk.core.results.lifecycle import ServiceSetup, SetupResult

from ..kit import columns, esc, plural, row, shorten, table

__all__ = ["environment_html", "environment_lines"]

_REASON = 90


def _environment(setup: SetupResult) -> str:
    use = setup.environment
    if use is None or (setup.network is not None and setup.network.created):
        return "environment: set up for this run"
    by = f"set up by run {use.set_up_by}" if use.set_up_by else "set up outside a run"
    served = f"served {plural(use.runs_served, 'run')} before this one"
    reset = f"reset first ({shorten(use.reset, _REASON)})" if use.reset else "not reset"
    return f"environment: kept, {by}, {served}, {reset}"


def _action(service: ServiceSetup) -> str:
    if service.action == "reset" and service.reset is not None:
        return f"reset ({service.reset})"
    return service.action or "started"


def environment_lines(setup: SetupResult | None) -> list[str]:
    """The environment's line, then a line per service acted on (name, what was done, why) and
    one line naming the services reused as they were."""
    if setup is None or setup.network is None:
        return []
    rows = [
        [s.name, _action(s), shorten(s.reason or "", _REASON)] for s in setup.services if s.action != "reused"
    ]
    reused = [s.name for s in setup.services if s.action == "reused"]
    tail = [f"  reused: {shorten(', '.join(reused), _REASON)}"] if reused else []
    return [_environment(setup), *columns(rows), *tail]


def environment_html(setup: SetupResult | None) -> str:
    """The same as a small table (class `pf-environment`, a row `pf-setup-<action>` per service)."""
    if setup is None or setup.network is None:
        return ""
    rows = (
        row(
            [f"<b>{esc(s.name)}</b>", esc(_action(s)), esc(shorten(s.reason or "", _REASON))],
            cls=f"pf-setup-{s.action or 'started'}",
        )
        for s in setup.services
    )
    listing = table(["service", "before the suites", "why"], rows)
    return f'<details class="pf-environment"><summary>{esc(_environment(setup))}</summary>{listing}</details>'
