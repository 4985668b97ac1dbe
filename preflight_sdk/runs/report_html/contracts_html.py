"""The page's contracts section: per contract, what the run exercised of it and what broke it.

One table per contract (a service's: its answers were checked; a mock's: the requests sent to it
were), every operation of the document in it, uncovered ones marked, so the gaps are read off
the page. A mock's refused requests are listed with the case that caused each.
"""

from __future__ import annotations

from preflight_sdk.core.results.contracts import ContractCoverage

from .evidence import esc, json_text

__all__ = ["contracts_html"]

_SHOWN_REQUESTS = 20


def contracts_html(contracts: list[ContractCoverage]) -> str:
    """The section's content (empty when the run had no contract)."""
    return "".join(_one(item) for item in contracts)


def _one(item: ContractCoverage) -> str:
    checked = "answers" if item.kind == "service" else "requests received"
    mode = " · violations are warnings" if item.mode == "warn" else ""
    head = (
        f"<h3>{esc(item.contract)} <small>{esc(item.kind)} · <code>{esc(item.file)}</code> · "
        f"{item.covered}/{item.operations} operations, {item.statuses_covered}/{item.statuses} documented "
        f"statuses · {item.violations} {checked} broke it{mode}</small></h3>"
    )
    rows = "".join(
        f'<tr class="{"" if op.calls else "pfr-uncovered"}"><td><code>{esc(op.operation)}</code></td>'
        f"<td>{op.calls}</td><td>{esc(', '.join(map(str, op.exercised)) or '—')}</td>"
        f"<td>{esc(', '.join(op.documented))}</td></tr>"
        for op in item.items
    )
    table = (
        '<table class="pfr-assertions"><thead><tr><th>operation</th><th>calls</th><th>statuses seen</th>'
        f"<th>documented</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    refused = ""
    if item.requests:
        entries = "".join(
            f"<li><code>{esc(r.method)} {esc(r.path)}</code>"
            + (f" <small>during {esc(r.case)}</small>" if r.case else "")
            + "".join(
                f"<br>{esc(v.message)} <small>{esc(v.place)}</small> · expected "
                f"<code>{esc(json_text(v.expected, 300))}</code>"
                for v in r.violations[:3]
            )
            + "</li>"
            for r in item.requests[:_SHOWN_REQUESTS]
        )
        refused = f'<p class="pfr-note">requests its contract refuses:</p><ul class="pfr-also">{entries}</ul>'
    return f'<div class="pfr-contract">{head}{table}{refused}</div>'
