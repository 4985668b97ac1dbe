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
names load on first use, so `preflight-mcp` and `preflight --help` start quickly.
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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
