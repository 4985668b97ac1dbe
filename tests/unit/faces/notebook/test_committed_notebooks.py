"""The notebooks under notebooks/ are committed clean: no outputs, no execution counts, no state."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[4] / "notebooks").glob("*.ipynb"))


def test_the_example_notebooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "mocks", "verify", "clarify"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_committed_notebook_has_no_outputs_and_no_execution_counts(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert dirty == [], f"{path.name}: cells {dirty} hold outputs; clear them before committing"
    assert "widgets" not in nb.metadata, f"{path.name}: saved widget state; clear it before committing"
    assert nb.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_awaits_at_top_level_and_cleans_up_in_its_last_cell(path: Path) -> None:
    code = [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    assert any(
        line.lstrip().startswith(("await ", "result = await", "report = await")) or " await " in line
        for source in code
        for line in source.splitlines()
    )
    assert "asyncio.run" not in "".join(code) and "nest_asyncio" not in "".join(code)
    assert "clean()" in code[-1] or "rmtree" in code[-1]
