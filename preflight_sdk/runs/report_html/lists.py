"""The page's lists: every case (with search and filters), the changes since the previous run, the files."""

from __future__ import annotations

import msgspec

from preflight_sdk.core.results.run import CaseResult, RunResult

from .evidence import anchor, esc, human_ms
from .stopped import stopped_html

__all__ = ["PreviousRun", "cases_html", "changes_html", "files_html"]

# The compact variant (a notebook showing a large run) keeps this many rows of passing cases.
_COMPACT_ROWS = 150


class PreviousRun(msgspec.Struct, frozen=True, kw_only=True):
    """The run before this one with the same selection of suites: its id and each case's status."""

    run_id: str
    statuses: dict[str, str]
    started_at: str | None = None


def _change_of(case: CaseResult, previous: PreviousRun | None) -> tuple[str, str]:
    if previous is None:
        return "", ""
    before = previous.statuses.get(case.id)
    if before is None:
        return ("", "") if case.status == "carried" else ("new", "new case")
    if case.status == "failed" and before != "failed":
        return "new", "newly failing"
    if case.status != "failed" and before == "failed":
        return "fixed", "fixed"
    return "", ""


_MARKS = {"passed": "✓", "failed": "✗", "skipped": "–", "carried": "↺"}


def carried_note(case: CaseResult) -> str:
    """`carried from run <id> (3m old)`, linked to that run's page (a sibling folder of this one)."""
    verdict = case.carried
    if verdict is None:
        return ""
    return (
        f'<br><small class="pfr-carried">{esc(verdict.status)}, carried from run '
        f'<a href="../{esc(verdict.run_id)}/report.html"><code>{esc(verdict.run_id)}</code></a>'
        f" ({human_ms(verdict.age)} old)</small>"
    )


def cases_html(result: RunResult, previous: PreviousRun | None, *, compact: bool) -> str:
    rows = []
    shown_others = 0
    hidden = 0
    for suite in result.suites:
        for case in suite.cases:
            if compact and case.status != "failed":
                if shown_others >= _COMPACT_ROWS:
                    hidden += 1
                    continue
                shown_others += 1
            kind, change = _change_of(case, previous)
            name = (
                f'<a href="#{anchor(case.id)}">{esc(case.name)}</a>'
                if case.status == "failed"
                else esc(case.name)
            )
            note = f"<br><small>{esc(case.skip_reason)}</small>" if case.skip_reason else carried_note(case)
            mark = _MARKS.get(case.status, "•")
            rows.append(
                f'<tr class="pfr-r-{case.status}" data-status="{case.status}" data-suite="{esc(case.suite)}">'
                f'<td><span class="pfr-badge pfr-b-{case.status}">{mark} {case.status}</span></td>'
                f"<td>{name}{note}</td><td>{esc(case.suite)}</td><td>{human_ms(case.duration)}</td>"
                f'<td class="pfr-change pfr-ch-{kind}">{esc(change)}</td></tr>'
            )
    suites = "".join(f'<option value="{esc(s.id)}">{esc(s.id)}</option>' for s in result.suites)
    filters = (
        '<div class="pfr-filters" hidden><input type="search" class="pfr-search" placeholder="Search cases  ( / )" '
        'aria-label="search cases">'
        '<button type="button" data-status="all" aria-pressed="true">all</button>'
        '<button type="button" data-status="failed" aria-pressed="false">failed</button>'
        '<button type="button" data-status="passed" aria-pressed="false">passed</button>'
        '<button type="button" data-status="skipped" aria-pressed="false">skipped</button>'
        '<button type="button" data-status="carried" aria-pressed="false">carried</button>'
        f'<select class="pfr-suite" aria-label="suite"><option value="">every suite</option>{suites}</select>'
        '<span class="pfr-shown pfr-dim"></span></div>'
    )
    cut = (
        f'<p class="pfr-note">{hidden} more passing or skipped cases are in the full report.</p>'
        if hidden
        else ""
    )
    return (
        f'{filters}<table class="pfr-cases"><thead><tr><th>status</th><th>case</th><th>suite</th><th>time</th>'
        f"<th>vs previous</th></tr></thead><tbody>{''.join(rows)}</tbody></table>{cut}"
    )


def changes_html(result: RunResult, previous: PreviousRun | None) -> tuple[str, str]:
    """(the line under the header, the section body)."""
    if previous is None:
        text = "no earlier run of the same suites to compare with"
        return "", f'<p class="pfr-empty">{text}</p>'
    if result.error is not None and not any(suite.cases for suite in result.suites):
        # Nothing ran: counting "0 newly failing" against a run that passed would read as no change.
        text = (
            f"Since run <code>{esc(previous.run_id)}</code>: its {len(previous.statuses)} cases did not run in "
            f"this one (it stopped before its suites: <code>{esc(result.error.code)}</code>)"
        )
        return f'<p class="pfr-changes-line">{text}</p>', f'<p class="pfr-changes-line">{text}</p>'
    newly: list[CaseResult] = []
    fixed: list[CaseResult] = []
    still: list[CaseResult] = []
    added: list[CaseResult] = []
    for suite in result.suites:
        for case in suite.cases:
            before = previous.statuses.get(case.id)
            if before is None:
                added.append(case)
            elif case.status == "failed":
                (still if before == "failed" else newly).append(case)
            elif before == "failed":
                fixed.append(case)
    line = (
        f'<p class="pfr-changes-line">Since run <code>{esc(previous.run_id)}</code>: '
        f'<b class="pfr-ch-new">{len(newly)} newly failing</b> · <b class="pfr-ch-fixed">{len(fixed)} fixed</b>'
        f" · {len(still)} still failing · {len(added)} new cases</p>"
    )

    def listing(title: str, cases: list[CaseResult]) -> str:
        if not cases:
            return ""
        items = "".join(
            f'<li><a href="#{anchor(c.id)}">{esc(c.name)}</a> <small>{esc(c.suite)}</small></li>'
            if c.status == "failed"
            else f"<li>{esc(c.name)} <small>{esc(c.suite)}</small></li>"
            for c in cases[:200]
        )
        more = f"<li>… {len(cases) - 200} more</li>" if len(cases) > 200 else ""
        return f"<h4>{esc(title)} ({len(cases)})</h4><ul>{items}{more}</ul>"

    body = line + "".join(
        listing(t, c)
        for t, c in (
            ("newly failing", newly),
            ("fixed", fixed),
            ("still failing", still),
            ("new cases", added),
        )
    )
    return line, body


def files_html(result: RunResult) -> str:
    if not result.artifacts:
        return '<p class="pfr-empty">no files listed</p>'
    rows = "".join(
        f'<tr><td><a href="{esc(a.name)}">{esc(a.name)}</a></td><td>{a.size:,} B</td>'
        f'<td><code title="{esc(a.sha256)}">{esc(a.sha256[:16])}</code></td></tr>'
        for a in result.artifacts
    )
    return f"<table><thead><tr><th>file</th><th>size</th><th>sha256</th></tr></thead><tbody>{rows}</tbody></table>"


def environment_html(result: RunResult) -> str:
    """What was done with each service before the suites (built, started, reused, reset and how),
    with why, under the line saying whether the environment was kept, set up by which run, how
    many runs it served and whether it was reset first."""
    setup = result.setup
    if setup is None and result.error is not None:
        return stopped_html(result)
    if setup is None or not setup.services:
        return '<p class="pfr-empty">no environment was brought up for this run</p>'
    line = setup.environment_line()
    rows = "".join(
        f'<tr class="pfr-setup-{esc(s.action or "started")}"><td><b>{esc(s.name)}</b></td>'
        f"<td>{esc(s.done)}</td><td>{esc(s.reason or '')}</td></tr>"
        for s in setup.services
    )
    warned = "".join(f'<p class="pfr-note pfr-warning">warning: {esc(w)}</p>' for w in setup.warnings)
    return (
        f'<p class="pfr-environment-line">{esc(line)}</p><table><thead><tr><th>service</th>'
        f"<th>before the suites</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>{warned}"
    )
