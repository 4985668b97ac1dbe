"""`python:` of a pytest suite, through the real `preflight run` (no Docker): the suite runs on the
interpreter or virtualenv it names, and a missing module says where to install it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

PREFLIGHT = str(Path(sys.executable).parent / "preflight")

CONFIG = """\
project: {name: pythons}
tests:
  suites:
    - {id: wrapped, runner: pytest, file: tests/test_wrapped.py, python: bin/py}
    - {id: bare, runner: pytest, file: tests/test_wrapped.py, python: bare-venv}
    - {id: imports, runner: pytest, file: tests/test_imports.py, python: bin/py}
"""


def _run(project: Path) -> dict[str, Any]:
    done = subprocess.run(
        [PREFLIGHT, "run", "--json", "-C", str(project)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=180,
    )
    assert done.stdout, done.stderr[-2000:]
    return {suite["id"]: suite for suite in json.loads(done.stdout)["data"]["suites"]}


def test_each_pytest_suite_runs_on_its_own_python_and_missing_modules_say_where_to_install(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    (project / "tests").mkdir(parents=True)
    (project / "bin").mkdir()
    wrapper = project / "bin" / "py"
    wrapper.write_text(
        f'#!/bin/sh\nexport RAN_BY_WRAPPER=yes\nexec "{sys.executable}" "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)
    venv.create(project / "bare-venv", with_pip=False)  # a virtualenv without pytest
    (project / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    (project / "tests" / "test_wrapped.py").write_text(
        "import os\n\ndef test_runs_on_the_suites_python():\n    assert os.environ.get('RAN_BY_WRAPPER') == 'yes'\n",
        encoding="utf-8",
    )
    (project / "tests" / "test_imports.py").write_text(
        "import not_installed_anywhere\n\ndef test_never():\n    pass\n", encoding="utf-8"
    )
    suites = _run(project)
    assert suites["wrapped"]["status"] == "passed", suites["wrapped"]
    bare = suites["bare"]["error"]
    assert "pytest is not installed for" in bare and str(project / "bare-venv" / "bin" / "python") in bare
    assert "-m pip install pytest" in bare
    imports = suites["imports"]["error"]
    assert "`not_installed_anywhere` is not installed for" in imports and str(wrapper) in imports
    assert "-m pip install not_installed_anywhere" in imports
