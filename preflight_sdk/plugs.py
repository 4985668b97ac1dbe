"""Where the faces plug into the layers below them.

The layers point down (faces → `project.py` → areas → engine and config → core), so the core and
the areas never import a face. Three things they need from one are reached through these slots,
which the package root (`preflight_sdk/__init__.py`) fills with small functions that import their
face on first use:

- `render(result)`: the MIME bundle Jupyter shows for a result (the display and notebook faces);
- `default_progress(operation)`: the progress sink behind `progress=None` (the notebook's live
  view inside a kernel, nothing elsewhere);
- `self_check(project_root)`: the command starting `preflight-mcp` and the tools it must serve,
  for `verify(self_check=True)` (the export face, which generates those tools).

A slot left empty means the face is not there: results render as JSON text, progress goes
nowhere, and a self-check is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Plugs", "plugs"]


class Plugs:
    """The slots (see the module docstring); each is a function or None."""

    def __init__(self) -> None:
        self.render: Callable[[Any], dict[str, Any]] | None = None
        self.default_progress: Callable[[str], Any] | None = None
        self.self_check: Callable[[str], tuple[list[str], list[Any]]] | None = None


plugs = Plugs()
