"""A notebook's view of saved tests: the stored-tests table, one test, suites, and a saved test's run
rendered like any run (request and response side by side, the assertions)."""

from __future__ import annotations

import pytest
from support.stub import MakeProject

from preflight_sdk import Project
from preflight_sdk.faces.notebook.static import render_html, render_text

pytestmark = pytest.mark.anyio


async def test_saved_tests_render_as_a_table_and_their_runs_like_any_run(make_project: MakeProject) -> None:
    p = Project.open(make_project([]))
    ok = {"request": {"url": "{{env.STUB}}/doc"}, "expect": {"status": 200}}
    await p.save_test(id="doc", name="the doc <answers>", test=ok, tags=["smoke"])
    await p.save_test(id="teapot", name="teapot", test={**ok, "expect": {"status": 418}}, tags=["wip"])
    run = await p.run_test(test_id="teapot")
    await p.save_suite(id="all-saved", name="all", test_ids=["doc", "teapot"])

    listed = await p.list_tests()
    html = render_html(listed)
    assert (
        html.count('class="pf-saved-test"') == 2 and "pf-badge-failed" in html and "<i>never run</i>" in html
    )
    assert "the doc &lt;answers&gt;" in html  # escaped
    lines = render_text(listed).splitlines()
    assert lines[0].split()[0] == "doc" and lines[0].endswith("never run") and lines[1].endswith("failed")
    # the same table, as a notebook shows it (the result's own mime bundle)
    assert listed._repr_mimebundle_()["text/html"] == html

    shown = render_html(await p.get_test("doc"))
    assert "pf-saved-test" in shown and "smoke" in shown and "/doc" in shown
    assert "doc, teapot" in render_text(await p.list_suites())

    run_html = render_html(run)
    assert 'class="pf-exchange"' in run_html and 'class="pf-assertions"' in run_html and "418" in run_html
    stored = render_html(await p.get_latest_run("teapot"))  # read back from the store: the same view
    assert 'class="pf-exchange"' in stored and run.run_id in stored
    assert render_text(await p.get_test("nothing")) == "none"
