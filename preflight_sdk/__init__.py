"""preflight: stand up a project's real test environment and learn exactly why its tests fail.

```python
from preflight_sdk import Project

project = Project.open("docs/examples/shop")
await project.build()
await project.setup()
report = await project.run()
await project.clean()
```

Importing this package starts nothing and imports none of Docker, MCP, Click or ipywidgets.
"""

from __future__ import annotations

from ._version import __version__
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
