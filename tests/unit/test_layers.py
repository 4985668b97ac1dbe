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
    assert layers[0].split(" : ")[:3] == ["export", "notebook", "display"]
    assert layers[1] == "project : sync"
    assert {"errors", "results", "durations", "templates", "progress"} <= set(layers[-1].split(" : "))
