"""The shape of the package, as rules a change can break: folders of one concern, one HTTP client."""

from __future__ import annotations

import ast
from pathlib import Path

import preflight_sdk

ROOT = Path(preflight_sdk.__file__).parent
MAX_MODULES = 20  # past about 20 side by side, readers search a folder instead of looking at it
FACADE = [ROOT / "project.py", *sorted((ROOT / "operations").glob("*.py"))]


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


def test_the_facade_stays_thin() -> None:
    # `Project`'s operations are short bodies over the areas; the run logic lives in `runs/`.
    assert len((ROOT / "project.py").read_text(encoding="utf-8").splitlines()) <= 900
    long = []
    for path in FACADE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                size = body[-1].end_lineno - body[0].lineno + 1 if body and body[-1].end_lineno else 0
                if size > 25:
                    long.append(f"{path.name}:{node.name} ({size} lines)")
    assert long == [], "move the logic into its area; keep each operation a short body"


def test_the_package_calls_its_errors_by_their_names_not_the_deprecated_aliases() -> None:
    from preflight_sdk.core.errors import DEPRECATED_NAMES

    users = sorted(
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if path != ROOT / "core" / "errors.py"
        and any(
            isinstance(node, ast.Name | ast.alias)
            and (getattr(node, "id", None) or getattr(node, "name", None)) in DEPRECATED_NAMES
            for node in ast.walk(ast.parse(path.read_text()))
        )
    )
    assert not users
