"""Text and HTML renderings of the lifecycle results: init, build, setup, status, logs, clean."""

from __future__ import annotations

from preflight_sdk.core.results.lifecycle import (
    BuildResult,
    CleanAction,
    CleanResult,
    InitResult,
    LogsResult,
    SetupResult,
    StatusResult,
)

from ..kit import badge, block, columns, esc, human_ms, plural, row, shorten, table, wrap
from . import renders
from .recording_view import recording_html, recording_lines

__all__ = ["level_of", "link", "logs_lines_html"]


def link(url: str | None) -> str:
    """A clickable URL (opens in a new tab), or a dash."""
    if not url:
        return "-"
    return f'<a href="{esc(url)}" target="_blank" rel="noopener">{esc(url)}</a>'


def _ports(pairs: list[tuple[int, int]]) -> str:
    return ", ".join(f"{host}→{container}" for host, container in pairs) or "-"


def _warning_lines(warnings: list[str]) -> list[str]:
    return [f"warning: {shorten(w, 300)}" for w in warnings]


def _warnings_html(warnings: list[str]) -> str:
    return "".join(
        f'<div class="pf-warning" style="color:#9a6700">{esc(shorten(w, 300))}</div>' for w in warnings
    )


def _probe(kind: str, target: str, attempts: int) -> str:
    what = target if target.startswith(kind) or kind in ("exit", "running") else f"{kind} {target}"
    return f"{what} ({plural(attempts, 'try', 'tries')})"


# -- init ---------------------------------------------------------------------------------------


@renders(InitResult)
def render_init(r: InitResult) -> tuple[str, str]:
    """`(text, html)` for init: the project, its services, mocks and suites."""
    head = (
        f"{r.project_name}: {plural(len(r.services), 'service')}, {plural(len(r.mocks), 'mock')}, "
        f"{plural(len(r.suites), 'suite')} · session {r.session_id} ({r.state})"
        + (" · reloaded" if r.reloaded else "")
    )
    services = [
        [
            s.name,
            s.kind,
            s.image,
            ", ".join(s.ports) or "-",
            "health check" if s.has_healthcheck else "",
            ("after " + ", ".join(s.depends_on)) if s.depends_on else "",
        ]
        for s in r.services
    ]
    text = [head, f"  config: {r.config_path}"]
    if services:
        text += ["services:", *columns(services)]
    if r.mocks:
        text += [
            "mocks:",
            *columns([[m.name, f"port {m.port or 'auto'}", plural(m.route_count, "route")] for m in r.mocks]),
        ]
    if r.suites:
        text += ["suites:", *columns([[s.id, s.runner, s.file or "", s.name] for s in r.suites])]
    html = [f"<div><b>{esc(r.project_name)}</b> {badge(r.state)} <code>{esc(r.config_path)}</code></div>"]
    html.append(
        table(
            ["service", "kind", "image", "ports", "health check", "depends on"],
            (row([esc(c) for c in s[:4]] + [esc(s[4] and "yes"), esc(s[5][6:])]) for s in services),
            cls="pf-services",
        )
    )
    if r.mocks:
        html.append(
            table(
                ["mock", "port", "routes"],
                (row([esc(m.name), esc(m.port or "auto"), str(m.route_count)]) for m in r.mocks),
            )
        )
    if r.suites:
        html.append(
            table(
                ["suite", "name", "runner", "file"],
                (
                    row([f"<code>{esc(s.id)}</code>", esc(s.name), esc(s.runner), esc(s.file or "")])
                    for s in r.suites
                ),
            )
        )
    return "\n".join(text + _warning_lines(r.warnings)), wrap(
        "".join(html) + _warnings_html(r.warnings), cls="pf-init"
    )


# -- build --------------------------------------------------------------------------------------


@renders(BuildResult)
def render_build(r: BuildResult) -> tuple[str, str]:
    """`(text, html)` for build: each image with its status, source and duration."""
    failed = [s for s in r.services if s.status == "failed"]
    head = (
        f"build failed: {len(failed)} of {plural(len(r.services), 'image')}"
        if failed
        else f"built {plural(len(r.services), 'image')}"
    ) + f" in {human_ms(r.total_duration)}"
    text = [
        head,
        *columns(
            [
                [
                    ("✗" if s.status == "failed" else "✓"),
                    s.name,
                    s.image,
                    s.status,
                    s.source,
                    human_ms(s.duration),
                ]
                for s in r.services
            ]
        ),
    ]
    for s in failed:
        if s.error:
            text.append(f"  {s.name}: {s.error}")
        text.extend(f"    | {line}" for line in (s.log_tail or [])[-10:])
    longest = max((s.duration for s in r.services), default=0) or 1
    rows = []
    for s in r.services:
        width = max(2, round(120 * s.duration / longest))
        colour = "#cf222e" if s.status == "failed" else "#1a7f37"
        bar = f'<span style="display:inline-block;height:8px;width:{width}px;background:{colour};border-radius:2px"></span>'
        extra = ""
        if s.status == "failed":
            extra = f'<div style="color:#cf222e">{esc(s.error or "")}</div>'
            if s.log_tail:
                extra += (
                    f"<details><summary>last build lines</summary>{block(chr(10).join(s.log_tail))}</details>"
                )
        rows.append(
            row(
                [
                    badge(s.status),
                    f"<b>{esc(s.name)}</b>{extra}",
                    f"<code>{esc(s.image)}</code>",
                    esc(s.source),
                    f"{bar} {esc(human_ms(s.duration))}",
                ],
                cls=f"pf-build pf-{s.status}",
            )
        )
    html = f"<div><b>{esc(head)}</b></div>" + table(["", "service", "image", "source", "duration"], rows)
    return "\n".join(text), wrap(html, cls="pf-build-result")


# -- setup --------------------------------------------------------------------------------------


@renders(SetupResult)
def render_setup(r: SetupResult) -> tuple[str, str]:
    """`(text, html)` for setup: each service with its URL and time to ready, each mock."""
    if r.pending is not None or r.network is None:
        head = (
            f"setup {r.pending.status if r.pending else 'running'} (run {r.run_id}): follow it with get_run"
        )
    else:
        head = f"environment ready in {human_ms(r.total_duration)} on network {r.network.name}"
    ready = [
        [
            s.name,
            s.status,
            s.url or "",
            _ports([(p.host, p.container) for p in s.ports]),
            f"ready in {human_ms(s.readiness.time_to_ready)}"
            if s.readiness.time_to_ready is not None
            else "",
            _probe(s.readiness.probe, s.readiness.target, s.readiness.attempts),
        ]
        for s in r.services
    ]
    ready += [
        [m.name, f"mock {m.status}", m.url, str(m.port), "", plural(m.route_count, "route")] for m in r.mocks
    ]
    text = [head, *columns(ready)]
    rows = [
        row(
            [
                badge(s.status),
                f"<b>{esc(s.name)}</b>",
                link(s.url),
                esc(_ports([(p.host, p.container) for p in s.ports])),
                esc(human_ms(s.readiness.time_to_ready)),
                esc(_probe(s.readiness.probe, s.readiness.target, s.readiness.attempts)),
            ],
            cls=f"pf-service pf-{s.status}",
        )
        for s in r.services
    ]
    rows += [
        row(
            [
                badge(m.status),
                f"<b>{esc(m.name)}</b> <small>mock</small>",
                link(m.url),
                esc(m.port),
                "",
                esc(plural(m.route_count, "route")),
            ],
            cls="pf-mock",
        )
        for m in r.mocks
    ]
    html = f"<div><b>{esc(head)}</b></div>" + table(["", "name", "url", "ports", "ready in", "probe"], rows)
    html += _warnings_html(r.warnings)
    return "\n".join(text + _warning_lines(r.warnings)), wrap(html, cls="pf-setup")


# -- status -------------------------------------------------------------------------------------


def _uptime(ms: int | None) -> str:
    return f"up {human_ms(ms)}" if ms is not None else ""


def _shown_status(status: str, state: str) -> str:
    """A service without a container reads `not started` unless the environment should be up:
    after clean (or before setup) that is the normal state, not an error."""
    return "not started" if status == "missing" and state != "running" else status


@renders(StatusResult)
def render_status(r: StatusResult) -> tuple[str, str]:
    """`(text, html)` for status: the state, each service's container, health and URL, each mock."""
    gone = " (missing)" if r.state == "running" else " (not created)"
    network = f" · network {r.network.name}" + ("" if r.network.exists else gone) if r.network else ""
    head = f"state: {r.state}" + (f" · session {r.session_id}" if r.session_id else "") + network
    if r.services and all(s.status == "missing" for s in r.services) and r.state != "running":
        head += " · nothing is running (setup starts the services)"
    listed = [
        [
            s.name,
            _shown_status(s.status, r.state),
            s.health or "",
            s.url or "",
            _ports([(p.host, p.container) for p in s.ports]),
            _uptime(s.uptime) or (f"exit {s.exit_code}" if s.exit_code is not None else ""),
        ]
        for s in r.services
    ]
    listed += [
        [m.name, f"mock {m.status}", "", m.url or "", str(m.port), plural(m.request_count, "request")]
        for m in r.mocks
    ]
    text = [head, *columns(listed)]
    rows = []
    for s in r.services:
        ports = ", ".join(f"{p.host}→{p.container}" + ("" if p.accessible else " (closed)") for p in s.ports)
        health = badge(s.health) if s.health and s.health != "none" else ""
        rows.append(
            row(
                [
                    badge(_shown_status(s.status, r.state)),
                    f"<b>{esc(s.name)}</b>",
                    health,
                    link(s.url),
                    esc(ports or "-"),
                    esc(_uptime(s.uptime) or (f"exit {s.exit_code}" if s.exit_code is not None else "")),
                ],
                cls=f"pf-service pf-{s.status}",
            )
        )
    rows += [
        row(
            [
                badge(m.status),
                f"<b>{esc(m.name)}</b> <small>mock</small>",
                "",
                link(m.url),
                esc(m.port),
                esc(plural(m.request_count, "request")),
            ],
            cls="pf-mock",
        )
        for m in r.mocks
    ]
    html = f"<div>{badge(r.state)} {esc(head[len('state: ' + r.state) :].lstrip(' ·'))}</div>"
    html += table(["", "name", "health", "url", "ports", ""], rows, cls="pf-status")
    html += _warnings_html(r.warnings)
    return "\n".join(text + _warning_lines(r.warnings)), wrap(html, cls="pf-status-result")


# -- logs ---------------------------------------------------------------------------------------


def level_of(text: str) -> str:
    """Guess a log line's level from its words: `error`, `warning`, `info` or `` (unknown)."""
    low = text.lower()
    if any(w in low for w in ("error", "exception", "traceback", "fatal", "critical", "panic")):
        return "error"
    if any(w in low for w in ("warn", "deprecat")):
        return "warning"
    if any(w in low for w in ("info", "debug")):
        return "info"
    return ""


_LEVEL_COLOUR = {"error": "#cf222e", "warning": "#9a6700", "info": "#57606a", "": "inherit"}


def logs_lines_html(r: LogsResult, *, only: frozenset[str] | None = None) -> str:
    """The lines, coloured by level, stderr marked; `only` keeps these levels."""
    pairs = [(line.text, line.stream) for line in r.lines]
    out = []
    for text, stream in pairs:
        level = level_of(text)
        if only is not None and level not in only:
            continue
        mark = '<span style="color:#cf222e;font-weight:600">stderr </span>' if stream == "stderr" else ""
        out.append(
            f'<span class="pf-log-{level or "plain"}" style="color:{_LEVEL_COLOUR[level]}">{mark}{esc(text)}</span>'
        )
    body = "\n".join(out) or "(no lines)"
    return (
        f'<pre class="pf-log" style="margin:2px 0;padding:4px 6px;font-size:12px;white-space:pre-wrap;'
        f'background:rgba(127,127,127,.08);max-height:30em;overflow:auto">{body}</pre>'
    )


@renders(LogsResult)
def render_logs(r: LogsResult) -> tuple[str, str]:
    """`(text, html)` for logs: a header, then the lines as they are."""
    head = f"{r.container} ({r.container_status}): {plural(r.line_count, 'line')}"
    html = f"<div>{badge(r.container_status)} <b>{esc(r.container)}</b> {esc(plural(r.line_count, 'line'))}</div>"
    return "\n".join([head, *(line.text for line in r.lines)]), wrap(html + logs_lines_html(r), cls="pf-logs")


# -- clean --------------------------------------------------------------------------------------


def _actions(kind: str, actions: list[CleanAction]) -> list[list[str]]:
    return [[kind, a.name, a.action.replace("_", " "), shorten(a.error or "", 100)] for a in actions]


@renders(CleanResult)
def render_clean(r: CleanResult) -> tuple[str, str]:
    """`(text, html)` for clean: what happened to each container, mock and network."""
    gone = [a for a in r.containers if a.action in ("removed", "force_removed")]
    failed = [a for a in (*r.containers, *r.mocks, *r.networks, *r.images) if a.action == "failed"]
    nets = r.networks or ([r.network] if r.network else [])
    head = (
        f"removed {plural(len(gone), 'container')}, stopped "
        f"{plural(sum(a.action == 'stopped' for a in r.mocks), 'mock')}, removed "
        f"{plural(sum(a.action == 'removed' for a in nets), 'network')}"
        + (f", removed {plural(sum(a.action == 'removed' for a in r.images), 'image')}" if r.images else "")
        + ("; session file removed" if r.session_removed else "")
        + (f"; {len(failed)} failed" if failed else "")
    )
    acted = ("removed", "force_removed", "stopped", "failed")
    if not any(a.action in acted for a in (*r.containers, *r.mocks, *nets, *r.images)):
        head = "nothing left to clean" + ("; session file removed" if r.session_removed else "")
    rows = _actions("container", r.containers) + _actions("mock", r.mocks) + _actions("network", nets)
    rows += _actions("image", r.images)
    html_rows = (
        row(
            [esc(k), f"<code>{esc(n)}</code>", badge("failed" if a == "failed" else "passed", a), esc(e)],
            cls="pf-clean-action",
        )
        for k, n, a, e in rows
    )
    html = f"<div><b>{esc(head)}</b></div>" + (
        table(["kind", "name", "action", "error"], html_rows) if rows else ""
    )
    html += recording_html(r.recordings)  # a recording setup began, written as the mocks stopped
    return "\n".join([head, *columns(rows), *recording_lines(r.recordings)]), wrap(html, cls="pf-clean")
