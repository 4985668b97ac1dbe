"""preflight: stand up a project's real test environment and learn exactly why its tests fail.

```python
from preflight_sdk import Project

project = Project.open("docs/examples/shop")
await project.build()
await project.setup()
report = await project.run()
await project.clean()
```

Importing this package starts nothing and imports none of Docker, MCP, Click or ipywidgets. Its
names load on first use, so `preflight-mcp` and `preflight --help` start quickly. It also plugs
the faces (display, notebook, export) into the slots the core reaches them through
(`preflight_sdk.plugs`), so the layers below never import a face.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .config import LoadedConfig, ProjectConfig, json_schema, load_config
    from .errors import (
        CancelledError_,
        ConfigError,
        ConfigProblem,
        EnvironmentError_,
        ErrorInfo,
        InputError,
        MockError,
        PreflightError,
        StateError,
    )
    from .progress import ProgressEvent, ProgressSink
    from .project import Project
    from .results.envelope import Envelope

__all__ = [
    "CancelledError_",
    "ConfigError",
    "ConfigProblem",
    "Envelope",
    "EnvironmentError_",
    "ErrorInfo",
    "InputError",
    "LoadedConfig",
    "MockError",
    "PreflightError",
    "ProgressEvent",
    "ProgressSink",
    "Project",
    "ProjectConfig",
    "StateError",
    "__version__",
    "json_schema",
    "load_config",
]

_HOMES = {
    "LoadedConfig": "config",
    "ProjectConfig": "config",
    "json_schema": "config",
    "load_config": "config",
    "CancelledError_": "errors",
    "ConfigError": "errors",
    "ConfigProblem": "errors",
    "EnvironmentError_": "errors",
    "ErrorInfo": "errors",
    "InputError": "errors",
    "MockError": "errors",
    "PreflightError": "errors",
    "StateError": "errors",
    "ProgressEvent": "progress",
    "ProgressSink": "progress",
    "Project": "project",
    "Envelope": "results.envelope",
}


def _plug_in_the_faces() -> None:
    """Fill the slots the core reaches the faces through (`plugs`); each face loads on first use.

    The layers below the faces never import them: a result asks `plugs.render` how it looks, a
    `progress=None` asks `plugs.default_progress`, a self-check asks `plugs.self_check`.
    """
    from .plugs import plugs

    def render(result: Any) -> dict[str, Any]:
        from .display import mimebundle

        return mimebundle(result)

    def default_progress(operation: str) -> Any:
        from .display.kernel import default_progress

        return default_progress(operation)

    def self_check(project_root: str) -> tuple[list[str], list[Any]]:
        from .export.selfcheck import self_check_target

        return self_check_target(project_root)

    plugs.render, plugs.default_progress, plugs.self_check = render, default_progress, self_check


_plug_in_the_faces()


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
