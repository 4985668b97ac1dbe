"""The layers contract covers the whole package: a new top-level module must take its place in it."""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path

import preflight_sdk

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _layers() -> list[str]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["id"] == "layers"]
    return list(contract["layers"])


def test_every_top_level_module_is_in_one_layer() -> None:
    listed = [name.strip("() ") for layer in _layers() for name in re.split(r"[:|]", layer)]
    assert len(listed) == len(set(listed)), "a module is in two layers"
    present = {m.name for m in pkgutil.iter_modules(preflight_sdk.__path__)}
    missing = sorted(present - set(listed))
    assert missing == [], f"add these to a layer in pyproject.toml [tool.importlinter]: {missing}"


def test_the_faces_are_on_top_and_the_core_at_the_bottom() -> None:
    layers = _layers()
    assert layers[0] == "faces : __main__"
    assert layers[1] == "project : sync : operations"
    assert layers[-1].split(" : ")[0] == "core"
    core = {m.name for m in pkgutil.iter_modules([str(Path(preflight_sdk.__file__).parent / "core")])}
    assert {"errors", "results", "durations", "templates", "progress"} <= core


FACES = {"faces", "__main__"}  # the top layer (pyproject.toml)


def test_nothing_below_the_faces_imports_the_mcp_server_side() -> None:
    # import-linter forbids only top-level external packages; `mcp` (the client) is allowed below
    # the faces (verify is a client), `mcp.server` is not.
    import ast

    root = Path(preflight_sdk.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        top = path.relative_to(root).parts[0].removesuffix(".py")
        if top in FACES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            offenders += [f"{path.relative_to(root)}: {n}" for n in names if n.startswith("mcp.server")]
    assert offenders == []
