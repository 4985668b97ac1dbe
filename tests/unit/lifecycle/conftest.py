from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from support.fake_engine import FakeEngine


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    """Write an e2e.yaml (and optional files) into a fresh directory and return it."""

    def make(config: str, files: dict[str, str] | None = None, name: str = "proj") -> Path:
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        (root / "e2e.yaml").write_text(textwrap.dedent(config))
        for relative, text in (files or {}).items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(text))
        return root

    return make


@pytest.fixture
async def engine() -> AsyncIterator[FakeEngine]:
    async with FakeEngine(images=["busybox:test"]) as fake:
        yield fake
