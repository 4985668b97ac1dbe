"""Fixtures of the runner tests: the stub HTTP server (session) and test-only projects.

Projects declare no services and no mocks, so they run without Docker: requests name
`{{env.STUB}}/...` (STUB comes from the project's `.env`) or a `path` against BASE_URL.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.stub import MakeProject, Stub, build_app, e2e_yaml, serve_in_thread


@pytest.fixture(scope="session")
def stub() -> Iterator[Stub]:
    """The stub HTTP server, started once per session on a free loopback port."""
    state = Stub()
    with serve_in_thread(build_app(state)) as url:
        state.url = url
        yield state


@pytest.fixture
def make_project(tmp_path: Path, stub: Stub) -> MakeProject:
    """Write a test-only project: `make_project(suites, files={path: text}, tests={...}, env={...})`.

    `.env` gets STUB (the stub's URL) plus `env`; test files are dedented; a suite given as
    `("id", "yaml text")` is written to `tests/<id>.yaml`.
    """
    counter = [0]

    def make(
        suites: list[Any],
        *,
        files: dict[str, str] | None = None,
        tests: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> Path:
        counter[0] += 1
        root = tmp_path / f"project{counter[0]}"
        root.mkdir()
        declared: list[dict[str, Any]] = []
        for suite in suites:
            if isinstance(suite, tuple):
                suite_id, text = suite
                (root / "tests").mkdir(exist_ok=True)
                (root / "tests" / f"{suite_id}.yaml").write_text(textwrap.dedent(text))
                declared.append({"id": suite_id, "file": f"tests/{suite_id}.yaml"})
            else:
                declared.append(suite)
        (root / "e2e.yaml").write_text(e2e_yaml(declared, tests))
        values = {"STUB": stub.url, **(env or {})}
        (root / ".env").write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        for relative, text in (files or {}).items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(text))
        return root

    return make
