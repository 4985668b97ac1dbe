"""The progress of a run never changes its total mid-run: (5/5) then (6/6) reads as a bug."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from support.stub import write_project

from preflight_sdk import Project
from preflight_sdk.core.progress import ProgressEvent

pytestmark = pytest.mark.anyio


async def test_a_pytest_suite_of_unknown_size_leaves_the_total_out_until_it_is_known(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "counting",
        {
            "project": {"name": "counting"},
            "tests": {
                "suites": [
                    {"id": "py", "runner": "pytest", "file": "tests/test_three.py", "python": sys.executable},
                    {"id": "y", "file": "tests/y.yaml"},
                ]
            },
        },
        files={
            "tests/test_three.py": "def test_a(): pass\n\ndef test_b(): pass\n\ndef test_c(): pass\n",
            "tests/y.yaml": textwrap.dedent(
                """\
                name: y
                cases:
                  - {name: one, request: {url: "http://127.0.0.1:9/"}, expect: {status: 200}}
                  - {name: two, request: {url: "http://127.0.0.1:9/"}, expect: {status: 200}}
                """
            ),
        },
    )
    events: list[ProgressEvent] = []
    project = Project.open(root)
    try:
        result = await project.run(progress=events.append)
    finally:
        await project.clean()

    cases = [e for e in events if e.kind == "case"]
    assert len(cases) == result.totals.total == 5
    shown = [e.total for e in cases if e.total is not None]
    assert shown and set(shown) == {5}, [(e.done, e.total) for e in cases]
