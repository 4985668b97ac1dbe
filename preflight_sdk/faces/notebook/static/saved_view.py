"""Renderings of saved tests and suites: the stored-tests table, one test, suites, export and import."""

from __future__ import annotations

import msgspec

from preflight_sdk.core.results import saved

from ..kit import badge, block, columns, esc, json_text, plural, row, table, wrap
from . import renders, renders_line

__all__ = ["render_delete", "render_export", "render_import", "render_suites", "render_test", "render_tests"]


@renders(saved.TestList)
def render_tests(r: saved.TestList) -> tuple[str, str]:
    """One line per saved test: id, name, tags, updated, the newest run's status."""
    if not r.tests:
        return "no saved tests", wrap("<i>no saved tests</i>", cls="pf-saved-tests")
    lines = [
        [
            t.id,
            t.name,
            ",".join(t.tags),
            t.updated_at.replace("T", " ")[:19],
            t.last_run_status or "never run",
        ]
        for t in r.tests
    ]
    rows = [
        row(
            [
                f"<code>{esc(t.id)}</code>",
                esc(t.name),
                " ".join(f"<span class='pf-tag'>{esc(tag)}</span>" for tag in t.tags),
                esc(t.updated_at.replace("T", " ")[:19]),
                badge(t.last_run_status) if t.last_run_status else "<i>never run</i>",
            ],
            cls="pf-saved-test",
        )
        for t in r.tests
    ]
    html = table(["id", "name", "tags", "updated", "last run"], rows, cls="pf-saved-tests-table")
    return "\n".join(columns(lines, indent="")), wrap(html, cls="pf-saved-tests")


@renders(saved.StoredTest)
def render_test(t: saved.StoredTest) -> tuple[str, str]:
    """A saved test with its definition."""
    definition = msgspec.json.format(msgspec.json.encode(t.test), indent=2).decode()
    head = f"{t.id}: {t.name}" + (f" [{', '.join(t.tags)}]" if t.tags else "")
    text = f"{head}\nupdated {t.updated_at} (created {t.created_at})\n{definition}"
    html = (
        f"<div><b><code>{esc(t.id)}</code></b> {esc(t.name)} "
        + " ".join(f"<span class='pf-tag'>{esc(tag)}</span>" for tag in t.tags)
        + f"</div><div>updated {esc(t.updated_at)} (created {esc(t.created_at)})</div>"
        + (f"<div>{esc(t.description)}</div>" if t.description else "")
        + block(json_text(t.test))
    )
    return text, wrap(html, cls="pf-saved-test")


@renders(saved.SuiteList)
def render_suites(r: saved.SuiteList) -> tuple[str, str]:
    """One line per saved suite with its test ids."""
    if not r.suites:
        return "no saved suites", wrap("<i>no saved suites</i>", cls="pf-saved-suites")
    lines = [[s.id, s.name, ", ".join(s.test_ids)] for s in r.suites]
    rows = [
        row([f"<code>{esc(s.id)}</code>", esc(s.name), esc(", ".join(s.test_ids))], cls="pf-saved-suite")
        for s in r.suites
    ]
    html = table(["id", "name", "tests"], rows, cls="pf-saved-suites-table")
    return "\n".join(columns(lines, indent="")), wrap(html, cls="pf-saved-suites")


@renders_line(saved.StoredSuite, cls="pf-saved-suite")
def render_suite(s: saved.StoredSuite) -> str:
    """A saved suite."""
    return f"{s.id}: {s.name} ({plural(len(s.test_ids), 'test')}: {', '.join(s.test_ids)})"


@renders_line(saved.DeleteResult, cls="pf-deleted")
def render_delete(d: saved.DeleteResult) -> str:
    """Whether something was deleted."""
    runs = f", with {plural(d.runs_deleted, 'run')}" if d.runs_deleted else ""
    return f"deleted{runs}" if d.deleted else "nothing to delete"


@renders(saved.ExportResult)
def render_export(e: saved.ExportResult) -> tuple[str, str]:
    """The file written and the e2e.yaml entry to add."""
    text = f"wrote {e.path} ({plural(len(e.test_ids), 'test')}); add to e2e.yaml:\n{e.suite_entry_yaml}"
    html = f"<div>wrote <code>{esc(e.path)}</code></div>" + block(e.suite_entry_yaml)
    return text, wrap(html, cls="pf-export")


@renders_line(saved.ImportResult, cls="pf-import")
def render_import(i: saved.ImportResult) -> str:
    """The tests saved from a file."""
    text = f"saved {plural(len(i.saved), 'test')} from {i.path}: {', '.join(i.saved)}"
    return text + "".join(f"\nwarning: {w}" for w in i.warnings)
