"""The shape of the package, as rules a change can break: folders of one concern, one HTTP client."""

from __future__ import annotations

import ast
from pathlib import Path

import preflight_sdk

ROOT = Path(preflight_sdk.__file__).parent
MAX_MODULES = 20  # past about 20 side by side, readers search a folder instead of looking at it


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py"))


def test_no_package_folder_holds_more_than_twenty_modules() -> None:
    crowded = {
        str(folder.relative_to(ROOT)): len(_modules(folder))
        for folder in [ROOT, *(p for p in ROOT.rglob("*") if p.is_dir())]
        if (folder / "__init__.py").exists() and len(_modules(folder)) > MAX_MODULES
    }
    assert crowded == {}, "split these folders into subpackages by concern"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_every_http_call_of_the_package_goes_through_httpx() -> None:
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if any(name in ("http.client", "urllib.request") for name in _imports(path))
    )
    assert offenders == []
