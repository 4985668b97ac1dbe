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
names load on first use, so `preflight-mcp` and `preflight --help` start quickly. The faces
(`preflight_sdk.faces`: cli, mcp, pytest, notebook) sit above everything; the layers below reach
them only through the entry points of `preflight_sdk.core.face_hooks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from preflight_sdk._version import __version__
from preflight_sdk.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from preflight_sdk.config import LoadedConfig, ProjectConfig, json_schema, load_config
    from preflight_sdk.core.errors import (
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
    from preflight_sdk.core.progress import ProgressEvent, ProgressSink
    from preflight_sdk.core.results.envelope import Envelope
    from preflight_sdk.project import Project

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
    "CancelledError_": "core.errors",
    "ConfigError": "core.errors",
    "ConfigProblem": "core.errors",
    "EnvironmentError_": "core.errors",
    "ErrorInfo": "core.errors",
    "InputError": "core.errors",
    "MockError": "core.errors",
    "PreflightError": "core.errors",
    "StateError": "core.errors",
    "ProgressEvent": "core.progress",
    "ProgressSink": "core.progress",
    "Project": "project",
    "Envelope": "core.results.envelope",
}


__getattr__ = lazy_attributes(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted(__all__)
