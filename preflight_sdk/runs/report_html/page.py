"""The report page: verdict, failures grouped by cause, timeline, every case, changes, artifacts.

`render_report` returns one self-contained HTML document (its CSS and script inline, no request
to anywhere: it works from `file://`); `render_fragment` returns the same view as one element
(with its style and script) to embed in a notebook or a host page. Everything a person needs is
in the markup; the script only adds search, filters, keyboard keys and the timeline's zoom.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib.resources import files

import msgspec

from preflight_sdk.core.redaction import DEFAULT, Redactor, redact_failure
from preflight_sdk.core.results.run import CaseResult, RunResult
from preflight_sdk.runs.history import cause_of
from preflight_sdk.suites.events import Event

from .contracts_html import contracts_html
from .evidence import anchor, case_article, esc, human_ms
from .lists import PreviousRun, cases_html, changes_html, environment_html, files_html
from .recordings import recordings_html
from .timeline import build_timeline
from .timeline_html import timeline_html

__all__ = ["PreviousRun", "group_by_cause", "render_fragment", "render_report"]

_COMPACT_SPANS = 400
# Causes told in full; the failures of any further cause are one line each (a page stays small).
_FULL_CAUSES = 100
# Past this many cases the lists below the fold are laid out only when scrolled to (see report.css).
_LARGE = 200


@cache
def asset(name: str) -> str:
    """The text of a file of this package (`report.css`, `report.js`)."""
    return (files(__package__) / name).read_text(encoding="utf-8")


def group_by_cause(failures: Sequence[CaseResult]) -> list[list[CaseResult]]:
    """Failed cases grouped by their cause (first failed assertion, status, log line), first seen first."""
    groups: dict[str, list[CaseResult]] = {}
    for case in failures:
        key = cause_of(case) or f"case:{case.id}"
        groups.setdefault(key, []).append(case)
    return list(groups.values())


def _redacted(result: RunResult, redactor: Redactor) -> RunResult:
    """The result with every failure through the redaction policy (again: it is idempotent)."""
    suites = []
    for suite in result.suites:
        cases = [
            msgspec.structs.replace(c, failure=redact_failure(c.failure, redactor)) if c.failure else c
            for c in suite.cases
        ]
        suites.append(msgspec.structs.replace(suite, cases=cases))
    return msgspec.structs.replace(result, suites=suites, summary=redactor.text(result.summary))


def _headline(result: RunResult) -> str:
    t = result.totals
    if result.error is not None:
        return f"The run could not finish: {result.error.message}"
    if result.status in ("running", "queued"):
        return f"Running: {t.total} cases so far"
    if t.failed:
        return f"{t.failed} of {t.total} cases failed"
    if result.status == "passed":
        return f"All {t.total} cases passed" if t.total != 1 else "The case passed"
    return f"Run {result.status}"


def _header(result: RunResult, changes: str) -> str:
    t = result.totals
    git = ""
    if result.git is not None:
        git = f" · commit <code>{esc(result.git.commit[:12])}</code>{' (changed files)' if result.git.dirty else ''}"
    meta = (
        f"<b>{len(result.suites)}</b> suites · <b>{t.total}</b> cases: "
        f'<span class="pfr-c-passed">{t.passed} passed</span> · <span class="pfr-c-failed">{t.failed} failed</span>'
        f" · {t.skipped} skipped · {human_ms(result.duration)} · run <code>{esc(result.run_id)}</code>"
        f" · started {esc(result.started_at.replace('T', ' ')[:19])} UTC{git}"
    )
    if t.carried:
        meta += f" · <b>{t.carried}</b> carried"
    mark = {"passed": "✓ PASSED", "failed": "✗ FAILED"}.get(result.status, result.status.upper())
    return (
        f'<header class="pfr-head pfr-s-{esc(result.status)}"><div class="pfr-verdict">{esc(mark)}</div><div>'
        f"<h1>{esc(_headline(result))}</h1>"
        f'<p class="pfr-summary-line">{esc(result.summary)}</p>{_error(result)}<p class="pfr-meta">{meta}</p>'
        f"{_affected(result)}{changes}</div></header>"
    )


def _affected(result: RunResult) -> str:
    """The line saying how many cases the edit could affect, why, and where carried verdicts come from."""
    summary = result.affected
    if summary is None:
        return ""
    how = "ran first" if summary.mode == "first" else "ran (only they)"
    parts = [f"{summary.affected} of {summary.considered} cases could be affected and {how}"]
    why = [f"{esc(c.name)} ({esc(c.why)}: {c.cases})" for c in summary.changes[:6]]
    why += [f"{esc(reason)}: {count}" for reason, count in list(summary.reasons.items())[:4]]
    if why:
        parts[0] += ": " + "; ".join(why)
    parts += [
        f'{s.cases} carried from <a href="../{esc(s.run_id)}/report.html"><code>{esc(s.run_id)}</code></a> '
        f"({human_ms(s.age)} old)"
        for s in summary.carried_from[:3]
    ]
    if summary.stopped_at:
        parts.append(f"stopped at <code>{esc(summary.stopped_at)}</code>")
    return f'<p class="pfr-affected-line">{" · ".join(parts)}</p>'


def _error(result: RunResult) -> str:
    """Why a run could not finish: its error's code and message, and what to do (the hint)."""
    error = result.error
    if error is None:
        return ""
    hint = f"<br><b>What to do:</b> {esc(error.hint)}" if error.hint else ""
    return f'<p class="pfr-fix"><code>{esc(error.code)}</code> {esc(error.message)}{hint}</p>'


def _failures(result: RunResult, artifacts: set[str]) -> str:
    failed = result.failures()
    files = {a.name: a.path for a in result.artifacts}
    if not failed:
        return '<p class="pfr-empty">no failures</p>'
    out = []
    groups = group_by_cause(failed)
    for group in groups[:_FULL_CAUSES]:
        first = group[0]
        href = first.failure.artifact if first.failure and first.failure.artifact in artifacts else None
        article = case_article(first, result.run_id, artifact_href=href, files=files)
        if len(group) == 1:
            out.append(article)
            continue
        others = "".join(
            f'<li id="{anchor(c.id)}" data-case="{esc(c.id)}"><b>{esc(c.name)}</b> <small>{esc(c.suite)} · '
            f"{human_ms(c.duration)}</small> · {esc(c.failure.summary if c.failure else '')}</li>"
            for c in group[1:]
        )
        out.append(
            f'<div class="pfr-group"><p class="pfr-group-head">{len(group)} cases fail the same way: '
            f"{esc((first.failure.summary if first.failure else '') or first.id)}</p>{article}"
            f'<p class="pfr-note">the same cause in:</p><ul class="pfr-also">{others}</ul></div>'
        )
    rest = [c for group in groups[_FULL_CAUSES:] for c in group]
    if rest:
        items = "".join(
            f'<li id="{anchor(c.id)}" data-case="{esc(c.id)}"><b>{esc(c.name)}</b> <small>{esc(c.suite)}</small> · '
            f"{esc(c.failure.summary if c.failure else '')}"
            + (
                f' · <a href="{esc(c.failure.artifact)}">record</a>'
                if c.failure and c.failure.artifact in artifacts
                else ""
            )
            + "</li>"
            for c in rest
        )
        out.append(
            f'<div class="pfr-group"><p class="pfr-group-head">{len(rest)} more failures, in '
            f"{len(groups) - _FULL_CAUSES} more causes (each one's full record is its file)</p>"
            f'<ul class="pfr-also">{items}</ul></div>'
        )
    return "".join(out)


def _body(
    result: RunResult,
    events: Sequence[Event],
    previous: PreviousRun | None,
    redactor: Redactor,
    compact: bool,
) -> str:
    result = _redacted(result, redactor)
    artifacts = {a.name for a in result.artifacts}
    timeline = build_timeline(result, events)
    line, changes = changes_html(result, previous)
    failures = result.totals.failed
    nav = (
        '<nav class="pfr-nav">'
        f'<a href="#pfr-failures">Failures {failures}</a><a href="#pfr-timeline">Timeline</a>'
        f'<a href="#pfr-cases">All cases {result.totals.total}</a>'
        + ('<a href="#pfr-contracts">Contracts</a>' if result.contracts else "")
        + '<a href="#pfr-changes">Changes</a>'
        '<a href="#pfr-environment">Environment</a><a href="#pfr-artifacts">Files</a>'
        '<span class="pfr-keys" hidden>keys: <b>j</b>/<b>k</b> next/previous failure · <b>/</b> search · '
        "<b>f</b> failed only · <b>a</b> all · <b>t</b> timeline</span></nav>"
    )
    sections = [
        ("pfr-failures", f"Failures <small>{failures}</small>", _failures(result, artifacts)),
        ("pfr-timeline", f"Timeline <small>{human_ms(timeline.total)}</small>",
         timeline_html(timeline, max_spans=_COMPACT_SPANS if compact else 5000)),
        ("pfr-cases", "All cases", cases_html(result, previous, compact=compact)),
        *(
            [("pfr-contracts", "Contracts", contracts_html(result.contracts))]
            if result.contracts
            else []
        ),
        ("pfr-changes", "Changes since the previous run", changes),
        ("pfr-environment", "Environment", environment_html(result) + recordings_html(result)),
        ("pfr-artifacts", "Files of this run", files_html(result)),
    ]  # fmt: skip
    body = "".join(
        f'<section id="{ident}"><h2>{title}</h2>{content}</section>' for ident, title, content in sections
    )
    large = " pfr-large" if result.totals.total > _LARGE else ""
    return (
        f'<div class="pfr{large}" id="pfr-run-{esc(result.run_id)}" data-run="{esc(result.run_id)}">'
        f"{_header(result, line)}{nav}{body}</div>"
    )


def render_fragment(
    result: RunResult,
    events: Sequence[Event] = (),
    *,
    previous: PreviousRun | None = None,
    redactor: Redactor = DEFAULT,
    compact: bool = False,
) -> str:
    """The report as one element with its style and script, to embed (a notebook, a host page).

    `compact` keeps the failures whole but cuts the passing rows and the timeline's case bars.
    """
    body = _body(result, events, previous, redactor, compact)
    return f"<style>{asset('report.css')}</style>{body}<script>{asset('report.js')}</script>"


def render_report(
    result: RunResult,
    events: Sequence[Event] = (),
    *,
    previous: PreviousRun | None = None,
    redactor: Redactor = DEFAULT,
) -> str:
    """The report of a run as one self-contained HTML document (see the module docstring)."""
    mark = {"passed": "✓", "failed": "✗"}.get(result.status, "•")
    title = f"{mark} {result.status} · {result.totals.failed} failed of {result.totals.total} · run {result.run_id}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{asset('report.css')}body{{margin:0;background:#fff}}</style></head>"
        f"<body>{_body(result, events, previous, redactor, False)}<script>{asset('report.js')}</script></body></html>"
    )
