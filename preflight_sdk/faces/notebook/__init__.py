"""Jupyter helpers: the live progress view and interactive result views (needs ipywidgets).

```python
from . import view

report = await project.run()      # shows live bars and a log while it runs
view(report)                      # the report as widgets: suites, failures in tabs
r = await project.clarify("Add authentication")   # shows a form; Submit continues the session
```

This package is the only one importing ipywidgets; `import preflight_sdk` does not import it, nor
do the static text and HTML renderings in `static/` that the CLI and Jupyter use.

Layer: a face (the top). Owns everything ipywidgets: live progress, result views, the
clarification form. May import anything below; nothing below imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from preflight_sdk.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from .live import LOG_LINES, LiveView, live_sink
    from .widgets import view

__all__ = ["LOG_LINES", "LiveView", "live_sink", "view"]

# The static renderings (`static/`) live in this package too and must not pull in ipywidgets:
# the widget names load on first use.
_HOMES = {"LOG_LINES": "live", "LiveView": "live", "live_sink": "live", "view": "widgets"}


__getattr__ = lazy_attributes(__name__, _HOMES)
