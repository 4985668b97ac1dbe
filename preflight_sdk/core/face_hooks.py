"""What the layers below the faces ask of them, found through entry points, never imported.

The layers point down (faces → `project.py` → areas → engine and config → core), so nothing here
imports a face. Three things the core needs from a face are protocols defined below; a face
declares its implementation as an entry point of the group `preflight_sdk.faces` in the package
metadata (pyproject.toml), and it is loaded the first time it is asked for:

- `render`, a `Renderer`: the MIME bundle Jupyter shows for a result (`Result._repr_mimebundle_`);
- `progress`, a `DefaultProgress`: the sink behind `progress=None`, asked only inside a Jupyter
  kernel (the notebook's live view); elsewhere progress goes nowhere and nothing is looked up;
- `self_check`, a `SelfCheck`: the command starting the MCP face's server and the tools it must serve,
  for `verify(self_check=True)`.

A face that is not installed leaves its hook empty: results render as JSON text, progress goes
nowhere, and a self-check is refused with a hint.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Protocol

__all__ = ["DefaultProgress", "Renderer", "SelfCheck", "default_progress", "renderer", "self_check"]

GROUP = "preflight_sdk.faces"


class Renderer(Protocol):
    def __call__(self, result: Any, /) -> dict[str, Any]: ...


class DefaultProgress(Protocol):
    def __call__(self, operation: str, /) -> Any: ...


class SelfCheck(Protocol):
    def __call__(self, project_root: str, /) -> tuple[list[str], list[Any]]: ...


@functools.cache
def _hook(name: str) -> Any:
    from importlib.metadata import entry_points

    found = entry_points(group=GROUP, name=name)
    return next(iter(found)).load() if found else None


def renderer() -> Renderer | None:
    """The face that renders results for Jupyter, if one is installed."""
    hook: Renderer | None = _hook("render")
    return hook


def default_progress() -> DefaultProgress | None:
    """The face that shows progress by default, asked only inside a Jupyter kernel."""
    if "ipykernel" not in sys.modules:
        return None
    hook: DefaultProgress | None = _hook("progress")
    return hook


def self_check() -> SelfCheck | None:
    """The face that knows what preflight's MCP server serves, for `verify(self_check=True)`."""
    hook: SelfCheck | None = _hook("self_check")
    return hook
