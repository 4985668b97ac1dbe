"""Text and HTML renderings of `RunResult`: the terminal summary and the inline notebook report.

The HTML table has the id `pf-run-<runId>` and the classes `pf-run`, `pf-suite`, `pf-case`,
`pf-passed` / `pf-failed` / `pf-skipped` and `pf-badge-<status>`, so tests and scripts can find
its parts. Failed cases are expanded (`<details open>`): summary, suggested fix, the assertions
with expected and actual side by side, the request and the response, container log lines and
mock requests of that moment, and the artifact holding the full record.
"""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.core.results.contracts import ContractCoverage
from preflight_sdk.core.results.grouping import group_failures
from preflight_sdk.core.results.run import CaseResult, DiagnosticReport, Failure, RunResult, SuiteResult
from preflight_sdk.runs.report_html import embed_full_screenshots
from preflight_sdk.runs.report_html.page_evidence import browser_panel

from ..kit import MARKS, badge, block, columns, esc, human_ms, json_text, plural, row, shorten, table, wrap
from . import renders
from .environment_view import environment_html, environment_lines
from .recording_view import recorded_note, recording_html, recording_lines

__all__ = [
    "artifact_path",
    "assertions_html",
    "diagnostics_html",
    "exchange_html",
    "failure_html",
    "headline",
    "logs_html",
    "mocks_html",
    "render_run",
    "same_cause_text",
    "suites_html",
]

_MAX_ASSERTIONS_TEXT = 6
_MAX_OUTPUT_TEXT = 8


def _counts(passed: int, failed: int, skipped: int, carried: int = 0) -> str:
    parts = [f"{passed} passed", f"{failed} failed"]
    if skipped:
        parts.append(f"{skipped} skipped")
    if carried:
        parts.append(f"{carried} carried")
    return ", ".join(parts)


def headline(result: RunResult) -> str:
    """`FAILED · 1 suite, 3 cases: 1 passed, 2 failed · 344 ms · run <id>`."""
    t = result.totals
    return (
        f"{result.status.upper()} · {plural(len(result.suites), 'suite')}, {plural(t.total, 'case')}: "
        f"{_counts(t.passed, t.failed, t.skipped, t.carried)} · {human_ms(result.duration)} · run {result.run_id}"
    )


def affected_lines(result: RunResult) -> list[str]:
    """What the edit could affect (and ran first), and where the carried verdicts come from."""
    summary = result.affected
    if summary is None:
        return []
    how = "ran first" if summary.mode == "first" else "ran; the others are carried"
    lines = [f"affected: {summary.affected} of {summary.considered} cases {how}"]
    lines += [f"  {c.kind} {c.name}: {c.why} ({plural(c.cases, 'case')})" for c in summary.changes[:8]]
    lines += [f"  {reason}: {count}" for reason, count in list(summary.reasons.items())[:6]]
    lines += [
        f"  {plural(s.cases, 'case')} carried from run {s.run_id} ({human_ms(s.age)} old)"
        for s in summary.carried_from[:3]
    ]
    if summary.blocked:
        lines.append(f"  nothing carried: {summary.blocked}")
    if summary.stopped_at:
        lines.append(f"  stopped at the first failure: {summary.stopped_at} (failFast)")
    return lines


def artifact_path(result: RunResult, failure: Failure) -> str | None:
    """The file holding a failure's full record (absolute when the run listed it)."""
    if not failure.artifact:
        return None
    for artifact in result.artifacts:
        if artifact.name == failure.artifact:
            return artifact.path
    return f".preflight/runs/{result.run_id}/{failure.artifact}"


def _file_path(result: RunResult, name: str) -> str:
    """A file of the run by its artifact name: its absolute path when the run listed it."""
    found = next((a.path for a in result.artifacts if a.name == name), None)
    return found or f".preflight/runs/{result.run_id}/{name}"


def _report_path(result: RunResult) -> str | None:
    return next((a.path for a in result.artifacts if a.name == "report.json"), None)


# -- text ---------------------------------------------------------------------------------------


def _failure_text(result: RunResult, case: CaseResult) -> list[str]:
    failure = case.failure
    where = f", on {case.engine}" if case.engine else ""
    lines = [f"{MARKS['failed']} {case.id}  ({human_ms(case.duration)}{where})"]
    if failure is None:
        return lines
    lines.append(f"  {failure.summary or failure.error}")
    failed = [a for a in failure.assertions if not a.passed]
    lines.extend(f"    ✗ {a.message}" for a in failed[:_MAX_ASSERTIONS_TEXT])
    if len(failed) > _MAX_ASSERTIONS_TEXT:
        lines.append(f"    … {len(failed) - _MAX_ASSERTIONS_TEXT} more failed assertions")
    if not failed and failure.output:
        tail = failure.output.rstrip().splitlines()[-_MAX_OUTPUT_TEXT:]
        lines.extend(f"    | {line}" for line in tail)
    if failure.suggested_fix:
        lines.append(f"  fix: {failure.suggested_fix}")
    if failure.browser is not None:
        for label, name in (("screenshot", failure.browser.screenshot), ("trace", failure.browser.trace)):
            if name:
                lines.append(f"  {label}: {_file_path(result, name)}")
    path = artifact_path(result, failure)
    if path:
        lines.append(f"  artifact: {path}")
    if failure.same_cause is not None:
        lines.append(f"  {same_cause_text(failure)}")
    return lines


def same_cause_text(failure: Failure) -> str:
    """`the same cause failed 60 cases; the 59 others: a, b, …` (every one named)."""
    same = failure.same_cause
    if same is None:
        return ""
    return f"the same cause failed {same.count} cases; the {len(same.cases)} others: " + ", ".join(same.cases)


def run_text(result: RunResult) -> str:
    """The terminal summary: status line, one line per suite, then each failure."""
    mark = MARKS.get(result.status, "•")
    lines = [f"{mark} {headline(result)}", ""]
    rows = [
        [
            MARKS.get(s.status, "•"),
            s.id,
            shorten(s.name, 48),
            s.runner,
            _counts(s.passed, s.failed, s.skipped, s.carried),
            human_ms(s.duration),
            *([f"on {s.engine or '?'}"] if result.shards else []),
        ]
        for s in result.suites
    ]
    for suite, line in zip(result.suites, columns(rows), strict=True):
        lines.append(line)
        if suite.error:
            lines.append(f"      ! {shorten(suite.error, 160)}")
        lines.extend(f"      ! {shorten(w, 160)}" for w in suite.warnings)
    lines += _shards_text(result)
    affected = affected_lines(result)
    if affected:
        lines += ["", *affected]
    environment = environment_lines(result.setup)
    if environment:
        lines += ["", *environment]
    recorded = recording_lines(result.recordings)
    if recorded:
        lines += ["", *recorded]
    if result.contracts:
        lines += ["", *contract_lines(result.contracts)]
    failures = result.failures()
    if failures:
        lines += ["", f"{plural(len(failures), 'failure')}:"]
        for case in failures:
            lines += ["", *_failure_text(result, case)]
    report = _report_path(result)
    if report:
        lines += ["", f"report: {report}"]
    page = next((a.path for a in result.artifacts if a.name == "report.html"), None)
    if page:
        lines.append(f"view:   {Path(page).absolute().as_uri()}")
    if result.truncated:
        lines.append("(the result was cut to stay small; the report holds everything)")
    return "\n".join(lines)


def _shards_text(result: RunResult) -> list[str]:
    """One line per engine of a sharded run: its status, suites, setup time and what went wrong."""
    if not result.shards:
        return []
    lines = ["", "engines:"]
    for shard in result.shards:
        suites = ", ".join(shard.suites) or "no suite"
        lines.append(
            f"  {MARKS.get(shard.status, '•')} {shard.engine}: {suites} · setup {human_ms(shard.setup_ms)}"
            f" · {human_ms(shard.duration)}"
        )
        if shard.error is not None:
            lines.append(f"      ! [{shard.error.code}] {shorten(shard.error.message, 160)}")
        lines.extend(f"      ! {shorten(w, 160)}" for w in shard.warnings)
    return lines


# -- html ---------------------------------------------------------------------------------------


def assertions_html(failure: Failure) -> str:
    """Every assertion: path, operator, expected and actual side by side, failed rows first."""
    if not failure.assertions:
        return "<div><i>no assertion recorded</i></div>"
    ordered = sorted(failure.assertions, key=lambda a: a.passed)
    rows = (
        row(
            [
                badge("passed" if a.passed else "failed", "✓" if a.passed else "✗"),
                f"<code>{esc(a.path)}</code>",
                esc(a.operator),
                block(json_text(a.expected, limit=600)),
                block(json_text(a.actual, limit=600) if a.actual is not None else "<missing>"),
            ],
            cls="pf-assertion " + ("pf-passed" if a.passed else "pf-failed"),
        )
        for a in ordered
    )
    return table(["", "path", "operator", "expected", "actual"], rows, cls="pf-assertions")


def exchange_html(failure: Failure) -> str:
    """The request as sent and the response as received, side by side."""
    if failure.request is None and failure.response is None:
        return "<div><i>no HTTP exchange recorded</i></div>"
    left = right = "<i>none</i>"
    if failure.request is not None:
        req = failure.request
        head = "\n".join(f"{k}: {v}" for k, v in req.headers.items())
        body = json_text(req.body) if req.body is not None else ""
        left = block(f"{req.method} {req.url}\n{head}" + (f"\n\n{body}" if body else ""), cls="pf-request")
    if failure.response is not None:
        res = failure.response
        head = "\n".join(f"{k}: {v}" for k, v in res.headers.items())
        body = json_text(res.body) if res.body is not None else ""
        right = block(
            f"{res.status}  ({human_ms(res.duration)})\n{head}" + (f"\n\n{body}" if body else ""),
            cls="pf-response",
        )
    return table(["request", "response"], [row([left, right])], cls="pf-exchange")


def _log_line(line: str) -> str:
    stderr = line.startswith("stderr: ")
    colour = "#cf222e" if stderr or "error" in line.lower() else "inherit"
    return f'<span style="color:{colour}">{esc(line)}</span>'


def logs_html(diagnostics: DiagnosticReport | None) -> str:
    """Container log lines of the failing moment (stderr lines in red), one block per container."""
    if diagnostics is None or not diagnostics.container_logs:
        return "<div><i>no container log lines</i></div>"
    parts = []
    for log in diagnostics.container_logs:
        cut = " (cut)" if log.truncated else ""
        lines = "\n".join(_log_line(line) for line in log.lines)
        parts.append(
            f"<div><b>{esc(log.container_name)}</b> ({plural(log.line_count, 'line')}{cut})</div>"
            f'<pre class="pf-log" style="margin:2px 0;padding:4px 6px;font-size:12px;'
            f'white-space:pre-wrap;background:rgba(127,127,127,.08)">{lines}</pre>'
        )
    return "".join(parts)


def mocks_html(diagnostics: DiagnosticReport | None) -> str:
    """The requests each mock received during the case."""
    if diagnostics is None or not diagnostics.mock_requests:
        return "<div><i>no mock requests</i></div>"
    rows = (
        row(
            [
                esc(traffic.mock_name),
                f"<code>{esc(r.method)} {esc(r.path)}</code>",
                badge("failed", f"fault: {r.fault}")
                if r.fault
                else badge("passed" if r.status < 400 else "failed", str(r.status)),
                esc((r.matched_route or "(no route)") + recorded_note(r.route_recorded)),
                block(json_text(r.body, limit=600)) if r.body is not None else "",
            ],
            cls="pf-mock-request",
        )
        for traffic in diagnostics.mock_requests
        for r in traffic.requests
    )
    return table(["mock", "request", "status", "route", "body"], rows, cls="pf-mock-requests")


def diagnostics_html(diagnostics: DiagnosticReport | None) -> str:
    """Container states at the failing moment, on one line."""
    if diagnostics is None or not diagnostics.container_health:
        return ""
    states = " · ".join(
        f"{esc(h.container_name)} {esc(h.status)}" + (f" ({h.exit_code})" if h.exit_code is not None else "")
        for h in diagnostics.container_health
    )
    return f'<div style="color:#57606a">containers: {states}</div>'


def failure_html(result: RunResult, case: CaseResult) -> str:
    """A failed case, expanded: summary, fix, assertions, exchange, logs, mock requests, artifact."""
    failure = case.failure
    where = f" on {case.engine}" if case.engine else ""
    title = f"{badge('failed', '✗')} <b>{esc(case.name)}</b> <small>{esc(human_ms(case.duration) + where)}</small>"
    if failure is None:
        return f"<div>{title}</div>"
    parts = [f'<div class="pf-summary" style="font-weight:600">{esc(failure.summary or failure.error)}</div>']
    if failure.suggested_fix:
        parts.append(f'<div class="pf-fix"><b>Suggested fix:</b> {esc(failure.suggested_fix)}</div>')
    if failure.browser is not None:
        files = {a.name: a.path for a in result.artifacts}
        parts.append(embed_full_screenshots(browser_panel(failure.browser, files), result))
    parts.append(assertions_html(failure))
    if failure.request is not None or failure.response is not None:
        parts.append(exchange_html(failure))
    if failure.output:
        parts.append(f"<details><summary>output</summary>{block(json_text(failure.output))}</details>")
    diag = failure.diagnostics
    if diag is not None and diag.container_logs:
        parts.append(f"<details open><summary>container logs</summary>{logs_html(diag)}</details>")
    if diag is not None and diag.mock_requests:
        parts.append(f"<details open><summary>mock requests</summary>{mocks_html(diag)}</details>")
    parts.append(diagnostics_html(diag))
    if failure.same_cause is not None:
        parts.append(f'<div class="pf-same-cause"><b>{esc(same_cause_text(failure))}</b></div>')
    path = artifact_path(result, failure)
    if path:
        parts.append(f'<div style="color:#57606a">full record: <code>{esc(path)}</code></div>')
    return (
        f'<details open class="pf-failure"><summary>{title}</summary>'
        f'<div style="margin:2px 0 8px 18px">{"".join(parts)}</div></details>'
    )


def _failed_line(case: CaseResult) -> str:
    summary = case.failure.summary if case.failure else ""
    return (
        f"{badge('failed', '✗')} <b>{esc(case.name)}</b> <small>{esc(human_ms(case.duration))}</small>"
        f'<div style="margin-left:18px">{esc(summary)}</div>'
    )


def _suite_rows(result: RunResult, suite: SuiteResult, *, details: bool) -> list[str]:
    note = "".join(
        f'<div style="color:#cf222e">{esc(shorten(text, 300))}</div>' for text in [suite.error or ""] if text
    ) + "".join(f'<div style="color:#9a6700">{esc(shorten(w, 300))}</div>' for w in suite.warnings)
    where = f" <small>on <code>{esc(suite.engine)}</code></small>" if suite.engine else ""
    rows = [
        row(
            [
                badge(suite.status),
                f"<b>{esc(suite.name)}</b> <code>{esc(suite.id)}</code>{where}{note}",
                esc(suite.runner),
                str(suite.passed),
                str(suite.failed),
                str(suite.skipped),
                esc(human_ms(suite.duration)),
            ],
            cls=f"pf-suite pf-{suite.status}",
        )
    ]
    for case in suite.cases:
        if case.status == "failed":
            rows.append(
                f'<tr class="pf-case pf-failed"><td></td>'
                f'<td colspan="6" style="text-align:left">'
                f"{failure_html(result, case) if details else _failed_line(case)}</td></tr>"
            )
    others = [c for c in suite.cases if c.status != "failed"]
    if others:
        items = "".join(
            f'<div class="pf-case pf-{esc(c.status)}">{badge(c.status, MARKS.get(c.status))} {esc(c.name)}'
            f" <small>{esc(c.skip_reason or _carried_from(c) or human_ms(c.duration))}"
            f"{' on ' + esc(c.engine) if c.engine else ''}</small></div>"
            for c in others
        )
        label = _counts(suite.passed, 0, suite.skipped, suite.carried).replace(", 0 failed", "")
        rows.append(
            f'<tr class="pf-cases"><td></td><td colspan="6" style="text-align:left">'
            f"<details><summary>{esc(label)}</summary>{items}</details></td></tr>"
        )
    return rows


def _carried_from(case: CaseResult) -> str:
    verdict = case.carried
    if verdict is None:
        return ""
    return f"{verdict.status}, carried from run {verdict.run_id} ({human_ms(verdict.age)} old)"


def suites_html(result: RunResult, *, details: bool = True, id_prefix: str = "pf-run-") -> str:
    """The run table (`#pf-run-<runId>.pf-run`): one row per suite, failed cases below it.

    With `details`, each failed case is expanded in full; without, it is one line with its summary.
    """
    rows = [r for suite in result.suites for r in _suite_rows(result, suite, details=details)]
    return table(
        ["", "suite", "runner", "passed", "failed", "skipped", "time"],
        rows,
        cls=f"pf-run pf-{result.status}",
        ident=f"{id_prefix}{result.run_id}",
    )


def run_html(result: RunResult) -> str:
    """The inline notebook report."""
    rest = headline(result).split(" · ", 1)[1]
    head = f'<div class="pf-head">{badge(result.status, result.status.upper())} {esc(rest)}</div>'
    artifacts = ""
    if result.artifacts:
        rows = (
            row(
                [
                    esc(a.name),
                    f"<code>{esc(a.path)}</code>",
                    f"{a.size:,} B",
                    f"<code>{esc(a.sha256[:12])}</code>",
                ]
            )
            for a in result.artifacts
        )
        listing = table(["name", "path", "size", "sha256"], rows)
        artifacts = f"<details><summary>artifacts ({len(result.artifacts)})</summary>{listing}</details>"
    cut = ""
    if result.truncated:
        cut = "<div><i>the result was cut to stay small; the report holds everything</i></div>"
    environment = environment_html(result.setup) + recording_html(result.recordings)
    contracts = ""
    if result.contracts:
        listing = "".join(f"<div>{esc(line)}</div>" for line in contract_lines(result.contracts))
        contracts = f"<details><summary>contracts ({len(result.contracts)})</summary>{listing}</details>"
    affected = "".join(f"<div>{esc(line)}</div>" for line in affected_lines(result))
    affected = f'<div class="pf-affected" style="margin:4px 0">{affected}</div>' if affected else ""
    body = head + affected + suites_html(result) + environment + contracts + artifacts + cut
    return wrap(body, cls="pf-run-result")


def contract_lines(contracts: list[ContractCoverage]) -> list[str]:
    """One line per contract: coverage of operations and statuses, violations, and what no case reached."""
    lines = []
    for item in contracts:
        missed = [op.operation for op in item.items if not op.calls]
        text = (
            f"contract {item.contract} ({item.kind}, {item.file}): {item.covered}/{item.operations} operations, "
            f"{item.statuses_covered}/{item.statuses} statuses, {plural(item.violations, 'violation')}"
        )
        if missed:
            text += f"; not reached: {shorten(', '.join(missed), 120)}"
        lines.append(text)
    return lines


@renders(RunResult)
def render_run(result: RunResult) -> tuple[str, str]:
    """`(text, html)` for a run, with same-cause failures told once."""
    shown = group_failures(result)
    return run_text(shown), run_html(shown)
