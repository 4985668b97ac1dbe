from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.docker import force_clean

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def project_dir(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Copy a fixture project (or write an e2e.yaml) into a fresh directory; remove its leftovers after."""
    made: list[Path] = []

    def make(
        fixture: str | None = None,
        *,
        config: str | None = None,
        files: dict[str, str] | None = None,
        name: str = "p",
    ) -> Path:
        root = tmp_path / name
        if fixture is not None:
            shutil.copytree(FIXTURES / "projects" / fixture, root)
        else:
            root.mkdir(parents=True)
        if config is not None:
            (root / "e2e.yaml").write_text(textwrap.dedent(config))
        for relative, text in (files or {}).items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(text))
        made.append(root)
        return root

    yield make
    for root in made:
        force_clean(root)
