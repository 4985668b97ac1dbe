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

from typing import TYPE_CHECKING, Any

from preflight_sdk._version import __version__
from preflight_sdk.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from preflight_sdk.core.errors import (
        ConfigError,
        InfrastructureError,
        InputError,
        MockError,
        OperationCancelled,
        PreflightError,
        StateError,
    )
    from preflight_sdk.project import Project

# The names most scripts need; the rest live in their modules (`preflight_sdk.config`,
# `preflight_sdk.core.results`, `preflight_sdk.core.progress`), like msgspec's own root.
__all__ = [
    "ConfigError",
    "InfrastructureError",
    "InputError",
    "MockError",
    "OperationCancelled",
    "PreflightError",
    "Project",
    "StateError",
    "__version__",
]

_HOMES = {
    "ConfigError": "core.errors",
    "InfrastructureError": "core.errors",
    "InputError": "core.errors",
    "MockError": "core.errors",
    "OperationCancelled": "core.errors",
    "PreflightError": "core.errors",
    "StateError": "core.errors",
    "Project": "project",
    # Still importable from here, no longer listed: their modules are their homes.
    "LoadedConfig": "config",
    "ProjectConfig": "config",
    "json_schema": "config",
    "load_config": "config",
    "ConfigProblem": "core.errors",
    "ErrorInfo": "core.errors",
    "ProgressEvent": "core.progress",
    "ProgressSink": "core.progress",
    "Envelope": "core.results.envelope",
}

_lazy = lazy_attributes(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    from preflight_sdk.core.errors import DEPRECATED_NAMES

    renamed = DEPRECATED_NAMES.get(name)
    if renamed is not None:
        import warnings

        warnings.warn(
            f"preflight_sdk.{name} is deprecated; use preflight_sdk.{renamed}",
            DeprecationWarning,
            stacklevel=2,
        )
        return _lazy(renamed)
    return _lazy(name)


def __dir__() -> list[str]:
    return sorted(__all__)
