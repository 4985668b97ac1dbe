"""The notebook layer stays optional: only `preflight_sdk.faces.notebook` imports ipywidgets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WIDGETS = ["ipywidgets", "IPython", "ipykernel", "comm"]


def loaded_after(code: str) -> list[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps([m for m in {WIDGETS!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_package_the_sync_facade_and_the_static_views_pulls_in_no_widget_module(
    tmp_path: Path,
) -> None:
    code = f"""
import preflight_sdk
from preflight_sdk import Project
from preflight_sdk.faces.notebook.static import render_html, render_text
from preflight_sdk.core.results.lifecycle import CleanResult
sync = Project.open({str(tmp_path)!r}).sync
result = CleanResult(containers=[], mocks=[], network=None, networks=[], session_removed=False)
render_html(result), render_text(result), result._repr_mimebundle_()
"""
    assert loaded_after(code) == []


def test_the_notebook_widgets_are_where_ipywidgets_comes_in() -> None:
    assert loaded_after("import preflight_sdk.faces.notebook") == []
    assert "ipywidgets" in loaded_after("from preflight_sdk.faces.notebook import view")


def test_a_clarification_rendered_outside_a_kernel_pulls_in_no_widget_module(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code = f"""
import anyio
from preflight_sdk import Project
result = anyio.run(Project.open({str(tmp_path)!r}).clarify, "Add authentication")
assert "text/html" in result._repr_mimebundle_()
"""
    assert loaded_after(code) == []
