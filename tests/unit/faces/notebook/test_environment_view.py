"""A run's result says what was done with the environment before its suites: in text, in HTML
and in the notebook widget, one short line per service, with the run that set it up."""

from __future__ import annotations

import msgspec
from unit.faces.notebook import samples
from unit.faces.notebook.samples import EVIL
from unit.faces.notebook.test_static_views import parse, with_class

from preflight_sdk.core.results.lifecycle import EnvironmentUse, SetupResult
from preflight_sdk.faces.notebook.static import render_html, render_text


def _kept(reason: str = "served run 01JRUN since setup") -> SetupResult:
    base = samples.setup()
    assert base.network is not None
    orders, seed = base.services
    return msgspec.structs.replace(
        base,
        network=msgspec.structs.replace(base.network, created=False),  # kept, not created by this run
        services=[
            msgspec.structs.replace(orders, action="reused", reason="unchanged"),
            msgspec.structs.replace(
                seed, action="reset", reset="jobs", reason=f"runs again for db's reset ({reason})"
            ),
        ],
        environment=EnvironmentUse(set_up_by="01JSETUP", runs_served=3, reset=reason),
    )


def test_the_run_text_says_how_the_kept_environment_was_reset_one_line_per_service() -> None:
    run = msgspec.structs.replace(samples.passed_run(), setup=_kept())
    text = render_text(run)
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("environment:"))
    assert lines[head] == (
        "environment: kept, set up by run 01JSETUP, served 3 runs before this one, "
        "reset first (served run 01JRUN since setup)"
    )
    assert lines[head + 1].split() == ["seed", "reset", "(jobs)", "runs", "again", "for", "db's", "reset",
                                       "(served", "run", "01JRUN", "since", "setup)"]  # fmt: skip
    assert lines[head + 2] == "  reused: orders"


def test_a_fresh_environment_and_a_long_reason_stay_short() -> None:
    fresh = msgspec.structs.replace(samples.setup(), services=[
        msgspec.structs.replace(s, action="started", reason="no container yet") for s in samples.setup().services
    ])  # fmt: skip
    text = render_text(msgspec.structs.replace(samples.passed_run(), setup=fresh))
    assert "environment: set up for this run" in text and "orders  started  no container yet" in text
    long = _kept("served run " + "x" * 500 + " since setup")
    lines = render_text(msgspec.structs.replace(samples.passed_run(), setup=long)).splitlines()
    assert all(len(line) < 200 for line in lines), "a reason is cut to one short line"
    # A run without a setup (a saved test, no environment) says nothing of it.
    assert "environment:" not in render_text(samples.passed_run())


def test_the_html_lists_each_service_with_its_action_escaped() -> None:
    kept = _kept(f"served run {EVIL} since setup")
    html = render_html(msgspec.structs.replace(samples.passed_run(), setup=kept))
    tree = parse(html)
    assert with_class(tree, "pf-environment")
    assert len(with_class(tree, "pf-setup-reset")) == 1 and len(with_class(tree, "pf-setup-reused")) == 1
    assert EVIL not in html and "reset (jobs)" in "".join(tree.text)
    assert "set up by run 01JSETUP" in "".join(tree.text)


def test_the_notebook_widget_shows_the_environment_too() -> None:
    from preflight_sdk.faces.notebook.widgets import run_view

    view = run_view(msgspec.structs.replace(samples.passed_run(), setup=_kept()))
    shown = "".join(getattr(child, "value", "") for child in view.children)
    assert "pf-environment" in shown and "reset (jobs)" in shown
