"""`preflight_sdk.faces.notebook.view`: interactive widgets for results (traits read without a kernel)."""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import msgspec
from unit.faces.notebook import samples
from unit.faces.notebook.samples import EVIL, RUN_ID, SUMMARY

from preflight_sdk.faces.notebook import view
from preflight_sdk.faces.notebook.static import render_html, render_text


def find(widget: Any, kind: type) -> list[Any]:
    """Every widget of `kind` in the tree, depth first."""
    found = [widget] if isinstance(widget, kind) else []
    for child in getattr(widget, "children", ()):
        found.extend(find(child, kind))
    return found


def html_of(widget: Any) -> str:
    return "".join(h.value for h in find(widget, w.HTML))


def test_a_failed_run_shows_suites_then_each_failure_with_its_evidence_in_tabs() -> None:
    widget = view(samples.failed_run())
    assert isinstance(widget, w.VBox)
    summary, table = widget.children[0], widget.children[1]
    assert (
        "pf-badge-failed" in summary.value
        and "2 suites, 4 cases: 2 passed, 1 failed, 1 skipped" in summary.value
    )
    assert f'id="pf-run-view-{RUN_ID}"' in table.value and 'class="pf-suite pf-failed"' in table.value
    assert SUMMARY.replace('"', "&quot;").replace("'", "&#x27;") in table.value  # the one-line failure row
    tabs = find(widget, w.Tab)
    assert len(tabs) == 1
    assert tabs[0].titles == ("Assertions", "Request / response", "Logs", "Mock requests")
    assertions, exchange, logs, mocks = (page.value for page in tabs[0].children)
    assert assertions.count('class="pf-assertion pf-failed"') == 2 and "expected" in assertions
    assert "POST http://127.0.0.1:32895/orders" in exchange and "500  (26 ms)" in exchange
    assert "stderr: KeyError: &#x27;price&#x27;" in logs and "seed exited (0)" in logs
    assert "/refunds" in mocks and "pf-badge-failed" in mocks
    failure_box = next(box for box in find(widget, w.VBox) if tabs[0] in box.children)
    head = failure_box.children[0].value
    assert "Suggested fix:" in head and f"/p/.preflight/runs/{RUN_ID}/cases/" in head
    assert EVIL not in html_of(widget)


def test_a_shell_failure_gets_an_output_tab() -> None:
    import msgspec

    run = samples.failed_run()
    case = run.suites[0].cases[0]
    assert case.failure is not None
    shell = msgspec.structs.replace(case.failure, output=f"exit 1 {EVIL}", request=None, response=None)
    suite = msgspec.structs.replace(run.suites[0], cases=[msgspec.structs.replace(case, failure=shell)])
    tabs = find(view(msgspec.structs.replace(run, suites=[suite])), w.Tab)
    assert tabs[0].titles[-1] == "Output"
    assert "exit 1 &lt;script&gt;" in tabs[0].children[-1].value
    assert "no HTTP exchange recorded" in tabs[0].children[1].value


def test_a_passed_run_has_no_failure_section() -> None:
    widget = view(samples.passed_run())
    assert find(widget, w.Tab) == []
    assert len(widget.children) == 2 and "PASSED" in widget.children[0].value


def test_status_is_a_table_with_health_and_clickable_urls() -> None:
    value = html_of(view(samples.status()))
    assert '<a href="http://127.0.0.1:32893/?a=1&amp;b=&lt;2&gt;" target="_blank"' in value
    assert "pf-badge-healthy" in value and "4 requests" in value


def test_logs_are_coloured_by_level_and_can_be_filtered() -> None:
    widget = view(samples.logs())
    toggle = find(widget, w.ToggleButtons)[0]
    lines = widget.children[-1]
    assert toggle.options == ("all", "warnings and errors", "errors")
    assert lines.value.count("pf-log-") == 4 and lines.value.count(">stderr </span>") == 2
    toggle.value = "errors"
    assert lines.value.count("pf-log-") == 1 and "KeyError" in lines.value and EVIL not in lines.value
    toggle.value = "warnings and errors"
    assert "pf-log-warning" in lines.value and "pf-log-info" not in lines.value
    toggle.value = "all"
    assert lines.value.count("pf-log-") == 4


def test_verify_groups_findings_by_severity_and_opens_the_errors() -> None:
    widget = view(samples.verify())
    accordion = find(widget, w.Accordion)[0]
    assert accordion.titles == ("Errors (1)", "Warnings (1)", "Info (0)", "stderr (1 lines)")
    assert accordion.selected_index == 0
    assert "STDOUT_POLLUTION" in accordion.children[0].value and EVIL not in accordion.children[0].value
    assert "DESCRIPTION_SHORT" in accordion.children[1].value
    head = widget.children[0].value
    assert "✓" in head and "✗" in head and "verify books 0.1.0" in head
    calm = find(view(samples.verify(errors=False)), w.Accordion)[0]
    assert calm.selected_index == 1 and calm.titles[0] == "Errors (0)"


def test_build_shows_one_bar_per_image_scaled_to_the_longest() -> None:
    widget = view(samples.build(failed=True))
    bars = find(widget, w.IntProgress)
    assert [(b.description, b.value, b.max, b.bar_style) for b in bars] == [
        ("inventory", 1370, 1370, "success"),
        ("seed", 23, 1370, "success"),
        ("orders", 685, 1370, "danger"),
    ]
    accordion = find(widget, w.Accordion)[0]
    assert accordion.titles == ("orders: last build lines",)
    assert "no matching distribution" in accordion.children[0].value
    assert find(view(samples.build()), w.Accordion) == []


def test_other_results_are_shown_as_their_static_html() -> None:
    result = samples.mock_requests()
    widget = view(result)
    assert isinstance(widget, w.HTML) and widget.value == render_html(result)
    assert view(object()).value.startswith("&lt;object object")


def test_where_widgets_do_not_render_a_view_shows_the_results_text() -> None:
    for result in (samples.failed_run(), samples.mock_requests()):
        bundle = view(result)._repr_mimebundle_()
        assert bundle["text/plain"] == render_text(result)
        assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]


def test_failures_of_one_cause_are_one_failure_with_their_count_and_names() -> None:
    run = samples.failed_run()
    suite = next(s for s in run.suites if any(c.status == "failed" for c in s.cases))
    failed = next(c for c in suite.cases if c.status == "failed")
    copies = [msgspec.structs.replace(failed, id=f"{failed.id}-{n}", name=f"{failed.name} {n}") for n in range(1, 5)]
    suite_with_copies = msgspec.structs.replace(suite, cases=[*suite.cases, *copies], failed=suite.failed + 4)
    grouped_run = msgspec.structs.replace(run, suites=[suite_with_copies if s is suite else s for s in run.suites])
    widget = view(grouped_run)
    assert len(find(widget, w.Tab)) == 1  # one failure told, with its evidence
    html = html_of(widget)
    assert "the same cause failed 5 cases; the 4 others:" in html
    assert all(f"{failed.id}-{n}" in html for n in range(1, 5))
