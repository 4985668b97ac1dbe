"""Execute every notebook under notebooks/ in a real kernel (nbclient) and check what it showed.

The widget models are saved with the notebook (`store_widget_state=True`), so the live views can
be checked without a browser: every bar of build, setup and run reached its end, green for the
shop and red for the broken shop, whose failure shows the expected summary line.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from integration.notebook_env import clean_workspace, kernel_environment, make_workspace
from nbclient import NotebookClient
from support.docker import labelled

pytestmark = pytest.mark.slow

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class Executed:
    """An executed notebook: its cells, and its widget models by id."""

    def __init__(self, nb: Any, seconds: float) -> None:
        self.nb = nb
        self.seconds = seconds
        self.state: dict[str, Any] = nb.metadata["widgets"][WIDGET_STATE]["state"]

    def cell(self, starts: str) -> Any:
        """The code cell whose source starts with `starts`."""
        return next(c for c in self.nb.cells if c.cell_type == "code" and c.source.startswith(starts))

    def widgets(self, cell: Any) -> list[str]:
        """The model ids of the widgets a cell displayed, in order."""
        return [o["data"][WIDGET_VIEW]["model_id"] for o in cell.outputs if WIDGET_VIEW in o.get("data", {})]

    def tree(self, model_id: str) -> list[tuple[str, dict[str, Any]]]:
        """A widget and its descendants: (model name, state), depth first."""
        model = self.state[model_id]
        found = [(model["model_name"], model["state"])]
        for child in model["state"].get("children", []):
            found.extend(self.tree(child.removeprefix("IPY_MODEL_")))
        return found

    def models(self, name: str) -> list[dict[str, Any]]:
        """The state of every saved widget model of this kind (`RadioButtonsModel`…)."""
        return [m["state"] for m in self.state.values() if m["model_name"] == name]

    def layout(self, model_id: str) -> dict[str, Any]:
        ref = self.state[model_id]["state"]["layout"].removeprefix("IPY_MODEL_")
        state: dict[str, Any] = self.state[ref]["state"]
        return state

    def bars(self, model_id: str) -> list[tuple[str, int, int, str]]:
        return [
            (s["description"], s["value"], s["max"], s["bar_style"])
            for name, s in self.tree(model_id)
            if name == "IntProgressModel"
        ]

    def text(self, cell: Any, mime: str = "text/plain") -> str:
        parts = [o.get("text", "") for o in cell.outputs if o["output_type"] == "stream"]
        parts += [o["data"].get(mime, "") for o in cell.outputs if "data" in o]
        return "\n".join(parts)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = make_workspace(tmp_path_factory.mktemp("notebooks"))
    env = kernel_environment(tmp_path_factory.mktemp("jupyter"))
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        try:
            yield root
        finally:
            clean_workspace(root)


def execute(root: Path, name: str, *, skip_last: bool = False) -> Executed:
    """Run a notebook; `skip_last` leaves out its last cell (the clean-up) to look at what it made."""
    path = root / "notebooks" / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    if skip_last:
        nb.cells = nb.cells[:-1]
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=240,
        store_widget_state=True,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.monotonic()
    client.execute()
    return Executed(nb, time.monotonic() - started)


@pytest.fixture(scope="module")
def executed(workspace: Path) -> dict[str, Executed]:
    return {name: execute(workspace, name) for name in ("quickstart", "mocks", "verify", "history")}


def test_the_kernel_is_this_virtualenv(workspace: Path) -> None:
    import sys

    from jupyter_client.kernelspec import KernelSpecManager

    assert KernelSpecManager().get_kernel_spec("python3").argv[0] == sys.executable


def test_quickstart_shows_live_bars_that_end_full_and_green(executed: dict[str, Executed]) -> None:
    run = executed["quickstart"]
    for source, scopes in (
        ("await shop.build()", {"inventory", "seed", "orders"}),
        ("await shop.setup()", {"inventory", "seed", "orders"}),
        ("report = await shop.run()", {"orders 8", "contract 2", "smoke 1"}),
    ):
        live = run.widgets(run.cell(source))[0]
        bars = run.bars(live)
        assert {d for d, *_ in bars[1:]} == scopes, source
        assert all(value == maximum and style == "success" for _, value, maximum, style in bars), (
            source,
            bars,
        )
        header = next(s["value"] for name, s in run.tree(live) if name == "HTMLModel")
        assert "✓ done" in header, source
        accordion = next(s for name, s in run.tree(live) if name == "AccordionModel")
        assert accordion["selected_index"] is None  # the log collapsed at the end
        # Where widgets are not rendered (GitHub), the view's plain text says how it ended.
        plain = next(
            o["data"]["text/plain"] for o in run.cell(source).outputs if WIDGET_VIEW in o.get("data", {})
        )
        assert plain.startswith(f"{source.split('.')[-1].split('(')[0]}: done"), plain
    build_log = next(
        s for n, s in run.tree(run.widgets(run.cell("await shop.build()"))[0]) if n == "OutputModel"
    )
    assert "Step" in "".join(o["text"] for o in build_log["outputs"])  # build output streamed live
    assert "✓ PASSED" in run.text(run.cell("report = await shop.run()"))


def test_quickstart_shows_the_broken_shop_failure_in_full(executed: dict[str, Executed]) -> None:
    run = executed["quickstart"]
    cell = run.cell("broken = Project.open")
    live_setup, live_run = run.widgets(cell)  # build ran with progress=False: no view
    assert all(style == "success" for *_, style in run.bars(live_setup))
    assert run.bars(live_run) == [("run 3/3", 3, 3, "danger"), ("orders 3", 3, 3, "danger")]
    html = run.text(cell, "text/html")
    # The run shows its page inline (its report.html): failures with their evidence, the timeline.
    assert 'class="pfr"' in html and 'id="pfr-run-' in html and "pfr-s-failed" in html
    assert html.count('class="pfr-failure"') == 2 and 'class="pfr-tl"' in html
    assert "POST /orders returned 500, expected 400" in html and "KeyError: &#x27;price&#x27;" in html
    assert "<script>" in html and ".pfr{" in html  # its script and its (scoped) style come with it
    assert "POST /orders returned 500, expected 400" in run.text(run.cell("first = failed.failures()[0]"))
    tree = run.tree(run.widgets(run.cell("from preflight_sdk.faces.notebook import view"))[0])
    tabs = [s["titles"] for name, s in tree if name == "TabModel"]
    assert tabs == [["Assertions", "Request / response", "Logs", "Mock requests"]] * 2
    assert any("KeyError" in s.get("value", "") for name, s in tree if name == "HTMLModel")
    # A plain `logs` call reports nothing: its live view stays hidden.
    logs_cell = run.cell('await broken.logs("orders"')
    assert run.layout(run.widgets(logs_cell)[0])["display"] == "none"
    assert "KeyError: 'price'" in run.text(logs_cell)


def test_every_notebook_cleans_up_after_itself(executed: dict[str, Executed], workspace: Path) -> None:
    for name in ("shop", "shop-broken"):
        assert labelled(workspace / "docs" / "examples" / name) == ([], []), name
    assert "removed" in executed["quickstart"].text(executed["quickstart"].nb.cells[-1])


def test_mocks_shows_the_busy_provider_then_the_retry_in_the_journal(
    executed: dict[str, Executed], workspace: Path
) -> None:
    run = executed["mocks"]
    journal = run.text(run.cell("journal = await"))
    charges = [line.split() for line in journal.splitlines() if "/charges" in line]
    assert [row[3] for row in charges] == ["503", "201"]
    assert "(402, {'status': 'declined'})" in run.text(run.cell("payments_url ="))
    # Safe to re-run: a second run starts from a fresh sequence and ends clean again.
    again = execute(workspace, "mocks")
    assert [
        line.split()[3]
        for line in again.text(again.cell("journal = await")).splitlines()
        if "/charges" in line
    ] == [
        "503",
        "201",
    ]


def test_verify_shows_every_declared_tool_found_and_the_broken_server_findings(
    executed: dict[str, Executed],
) -> None:
    run = executed["verify"]
    text = run.text(run.cell("result = await"))
    assert text.splitlines()[0].endswith(": passed")
    assert sum(line.lstrip().startswith("✓ preflight_") for line in text.splitlines()) == 12
    tree = run.tree(run.widgets(run.cell("broken_server ="))[0])
    titles = next(s["titles"] for name, s in tree if name == "AccordionModel")
    assert titles[0].startswith("Errors (") and titles[0] != "Errors (0)"
    assert any("STDOUT_POLLUTION" in s.get("value", "") for name, s in tree if name == "HTMLModel")


def test_clarify_shows_a_form_whose_submit_writes_the_adr_and_task(workspace: Path) -> None:
    last = nbformat.read(workspace / "notebooks" / "clarify.ipynb", as_version=4).cells[-1].source
    assert last.startswith("shutil.rmtree(repo")  # skipped below, and done by this test instead
    run = execute(workspace, "clarify", skip_last=True)
    repo = Path(run.text(run.nb.cells[1]).strip().splitlines()[-1])
    try:
        form_cell = run.cell('result = await project.clarify("Add authentication")')
        (form,) = run.widgets(form_cell)  # the result displayed as its form, no wiring
        # What a renderer without widgets shows: the questions as text.
        assert "Which authentication strategy" in run.text(form_cell)
        # The form's inputs, as filled by the notebook (the models stay in the saved state).
        radios = {tuple(s["_options_labels"]): s["index"] for s in run.models("RadioButtonsModel")}
        assert radios == {
            ("OAuth", "Email/Password", "Magic Links", "SAML"): 0,
            ("NextAuth.js", "Passport.js", "Auth0", "Clerk", "Custom"): 0,
        }
        boxes = {s["description"]: s["value"] for s in run.models("CheckboxModel")}
        assert boxes == {"Google": True, "GitHub": True, "Microsoft": False, "Apple": False}
        areas = [s["value"] for s in run.models("TextareaModel")]
        assert areas == ["Users can sign in with GitHub\nUsers can sign out"]
        others = [s["placeholder"] for s in run.models("TextModel")]
        assert others == ["Other: your own value"] * 3  # one per choice question
        assert [s["description"] for s in run.models("ButtonModel")] == ["Submit"]
        # After Submit, the same form (the cell above) lists the files written.
        shown = run.tree(form)
        assert [name for name, _ in shown] == ["VBoxModel", "HTMLModel"]
        assert "Clarification completed" in shown[1][1]["value"]
        assert ">docs/CURRENT_TASK.md</a>" in shown[1][1]["value"]
        done = run.text(run.cell("form = view(result)"), "text/html")
        assert "Clarification completed" in done and ">docs/ARCHITECTURE_STATE.md</a>" in done
        listing = run.text(run.cell("for artifact in done.artifacts"))
        assert listing.count("exists: True") == 3 and "exists: False" not in listing
        adrs = list((repo / "docs" / "adr").glob("*.md"))
        assert len(adrs) == 1
        assert "- Strategy: OAuth\n- Library: NextAuth.js" in adrs[0].read_text()
        assert "- [ ] Users can sign out" in (repo / "docs" / "CURRENT_TASK.md").read_text()
        assert (repo / "docs" / "ARCHITECTURE_STATE.md").is_file()
        assert "Strategy = OAuth" in run.text(run.cell("architecture = await"))
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def test_the_blocking_facade_shows_its_live_view_in_the_calling_cell(workspace: Path) -> None:
    shop = workspace / "docs" / "examples" / "shop"
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(f"from preflight_sdk import Project\np = Project.open({str(shop)!r})"),
            nbformat.v4.new_code_cell("p.sync.setup()"),
            nbformat.v4.new_code_cell("p.sync.clean()\np.sync.close()"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    NotebookClient(nb, kernel_name="python3", timeout=120, store_widget_state=True).execute()
    run = Executed(nb, 0)
    setup = run.cell("p.sync.setup()")
    live = run.widgets(setup)  # displayed from this cell, updated from the background loop
    assert len(live) == 1 and run.bars(live[0])[0] == ("setup 3/3", 3, 3, "success")
    plain = next(o["data"]["text/plain"] for o in setup.outputs if WIDGET_VIEW in o.get("data", {}))
    assert plain.splitlines()[0].startswith("setup: done · environment ready in")
    assert "environment ready" in run.text(setup)
    assert run.widgets(run.nb.cells[0]) == [] and run.widgets(run.nb.cells[2]) == []
    assert labelled(shop) == ([], [])


def test_the_notebooks_run_in_reasonable_time(executed: dict[str, Executed]) -> None:
    timings = {name: round(run.seconds, 1) for name, run in executed.items()}
    print("notebook execution seconds:", timings)
    assert sum(timings.values()) < 150, timings


def test_history_follows_a_run_lists_runs_and_keeps_a_saved_test(executed: dict[str, Executed]) -> None:
    run = executed["history"]
    started = run.text(run.cell("started = await"))
    assert "'queued'" in started or "'running'" in started  # answered before the verdict
    followed = run.text(run.cell("done = await"), "text/html")
    assert 'class="pfr"' in followed and "pfr-s-passed" in followed  # the run's page, inline
    history = run.text(run.cell("await shop.list_runs"), "text/html")
    assert "pf-run-list" in history and history.count("pf-run-line") >= 1
    saved = run.text(run.cell("await shop.save_test"), "text/html")
    assert "pf-saved-tests-table" in saved and "orders-health" in saved
    checked = run.text(run.cell("checked = await"), "text/html")
    assert "pfr-s-passed" in checked and "pfr-b-passed" in checked  # a saved test's run shows its page like any run
