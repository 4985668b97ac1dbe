"""Text and HTML renderings of `MockRequestsResult`: each mock's journal, oldest request first."""

from __future__ import annotations

from preflight_sdk.core.results.mocks import MockRequestsResult, RecordedRequest

from ..kit import badge, block, columns, esc, json_text, plural, row, shorten, table, wrap
from . import renders
from .recording_view import recorded_note

__all__ = ["journal_html", "render_mock_requests"]


def _status(r: RecordedRequest) -> str:
    if r.fault:
        return f"fault {r.fault}"
    return "-" if r.status is None else str(r.status)


def _time(r: RecordedRequest) -> str:
    return r.timestamp[11:23] if len(r.timestamp) >= 23 else r.timestamp  # HH:MM:SS.mmm


def journal_html(result: MockRequestsResult) -> str:
    """One table per mock: time, request, status, route and body of each request."""
    parts = []
    for mock in result.mocks:
        dropped = f", {mock.dropped} older dropped" if mock.dropped else ""
        rows = []
        for r in mock.requests:
            ok = r.status is not None and r.status < 400 and not r.fault
            query = "?" + "&".join(f"{k}={v}" for k, v in r.query.items()) if r.query else ""
            note = f'<div style="color:#cf222e">{esc(r.error)}</div>' if r.error else ""
            body = block(json_text(r.body, limit=800)) if r.body is not None else ""
            rows.append(
                row(
                    [
                        esc(_time(r)),
                        f"<code>{esc(r.method)} {esc(r.path + query)}</code>{note}",
                        badge("passed" if ok else "failed", _status(r)),
                        esc((r.matched_route or "(no route: 404)") + recorded_note(r.route_recorded)),
                        body,
                    ],
                    cls="pf-mock-request",
                )
            )
        caption = f"{mock.name} (port {mock.port}): {plural(mock.total_requests, 'request')}{dropped}"
        parts.append(
            table(["time", "request", "status", "route", "body"], rows, cls="pf-journal", caption=caption)
        )
    return "".join(parts) or "<div><i>no mocks</i></div>"


@renders(MockRequestsResult)
def render_mock_requests(result: MockRequestsResult) -> tuple[str, str]:
    """`(text, html)` for mock_requests."""
    lines: list[str] = []
    for mock in result.mocks:
        dropped = f" ({mock.dropped} older dropped)" if mock.dropped else ""
        lines.append(f"{mock.name} (port {mock.port}): {plural(mock.total_requests, 'request')}{dropped}")
        lines += columns(
            [
                [
                    _time(r),
                    r.method,
                    r.path,
                    _status(r),
                    r.matched_route or "(no route)",
                    shorten(json_text(r.body, limit=200), 60) if r.body is not None else "",
                ]
                for r in mock.requests
            ]
        )
    return "\n".join(lines) or "no mocks", wrap(journal_html(result), cls="pf-mock-requests")
