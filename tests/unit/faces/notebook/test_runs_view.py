"""The run store's results render for people: a run list with coloured statuses, a diff side by side."""

from __future__ import annotations

from preflight_sdk.core.results.run import Totals
from preflight_sdk.core.results.runs import CaseChange, PruneResult, RunDiff, RunLine, RunList
from preflight_sdk.core.results.saved import DeleteResult, ImportResult, StoredSuite
from preflight_sdk.faces.notebook.static import render_html, render_text


def _line(run_id: str, status: str) -> RunLine:
    return RunLine(
        run_id=run_id,
        kind="test",
        status=status,  # type: ignore[arg-type]
        started_at="2026-11-24T21:00:00.000Z",
        duration=1200,
        totals=Totals(passed=2, failed=1 if status == "failed" else 0, skipped=0, total=3),
        summary=f"{status}: 1 suite(s)",
    )


def test_a_run_list_is_a_table_with_a_coloured_badge_per_status() -> None:
    listed = RunList(runs=[_line("01B", "failed"), _line("01A", "interrupted")], next_before="01A")
    html = render_html(listed)
    assert html.count('class="pf-run-line') == 2
    assert "pf-badge-failed" in html and "pf-badge-interrupted" in html
    assert "#cf222e" in html and "#bc4c00" in html  # failed red, interrupted orange
    text = render_text(listed)
    assert text.splitlines()[0].startswith("✗ failed") and "--before 01A" in text


def test_a_diff_shows_both_sides_and_flags_a_new_cause() -> None:
    diff = RunDiff(
        base="01A",
        head="01B",
        newly_failing=[CaseChange(id="s.new", base="passed", head="failed", head_cause="status 500")],
        fixed=[],
        still_failing=[
            CaseChange(
                id="s.old",
                base="failed",
                head="failed",
                cause_changed=True,
                base_cause="status 500",
                head_cause="status 404",
            )
        ],
        added=[],
        removed=[],
        unchanged=4,
        summary="1 newly failing, 0 fixed, 1 still failing (1 with a new cause)",
    )
    html = render_html(diff)
    assert html.count('class="pf-diff-row"') == 2 and "(new cause)" in html
    text = render_text(diff)
    assert (
        "s.old: failed → failed (new cause)" in text
        and "was: status 500" in text
        and "now: status 404" in text
    )


def test_the_text_diff_shows_every_cause_the_json_has() -> None:
    diff = RunDiff(
        base="01A",
        head="01B",
        newly_failing=[
            CaseChange(id="s.new", base="passed", head="failed", head_cause="POST /pay returned 500")
        ],
        fixed=[CaseChange(id="s.fixed", base="failed", head="passed", base_cause="GET /stock returned 404")],
        still_failing=[
            CaseChange(
                id="s.same",
                base="failed",
                head="failed",
                cause_changed=False,
                base_cause="timed out after 5s",
                head_cause="timed out after 5s",
            )
        ],
        added=[],
        removed=[],
        unchanged=0,
        summary="1 newly failing, 1 fixed, 1 still failing (0 with a new cause)",
    )

    lines = render_text(diff).splitlines()

    assert lines[lines.index("  s.new: passed → failed") + 1] == "    cause: POST /pay returned 500"
    assert lines[lines.index("  s.fixed: failed → passed") + 1] == "    cause: GET /stock returned 404"
    assert lines[lines.index("  s.same: failed → failed (same cause)") + 1] == "    cause: timed out after 5s"


def test_one_line_results_read_the_same_as_text_and_as_escaped_html() -> None:
    pruned = PruneResult(deleted=["01A", "01B"], remaining=3)
    assert render_text(pruned) == "deleted 2 runs; 3 remain"
    assert 'class="pf-result pf-prune"' in render_html(pruned)
    assert render_html(pruned).endswith(">deleted 2 runs; 3 remain</div>")
    assert render_text(DeleteResult(deleted=False)) == "nothing to delete"
    assert "deleted, with 4 runs" in render_html(DeleteResult(deleted=True, runs_deleted=4))
    suite = StoredSuite(id="smoke", name="<smoke>", test_ids=["a"], created_at="t", updated_at="t")
    assert render_text(suite) == "smoke: <smoke> (1 test: a)"
    assert "&lt;smoke&gt;" in render_html(suite) and "<smoke>" not in render_html(suite)


def test_an_import_puts_each_warning_on_its_own_line() -> None:
    imported = ImportResult(path="t.yaml", saved=["a", "b"], warnings=["x skipped", "y renamed"])
    assert render_text(imported).splitlines() == [
        "saved 2 tests from t.yaml: a, b",
        "warning: x skipped",
        "warning: y renamed",
    ]
    assert render_html(imported).count("<br>") == 2
