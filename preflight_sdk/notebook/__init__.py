"""Jupyter helpers: the live progress view and interactive result views (needs ipywidgets).

```python
from preflight_sdk.notebook import view

report = await project.run()      # shows live bars and a log while it runs
view(report)                      # the report as widgets: suites, failures in tabs
r = await project.clarify("Add authentication")   # shows a form; Submit continues the session
```

This package is the only one importing ipywidgets; `import preflight_sdk` does not import it.

Layer: a face (the top). Owns everything ipywidgets: live progress, result views, the
clarification form. May import anything below; nothing below imports it.
"""

from __future__ import annotations

from .live import LOG_LINES, LiveView, live_sink
from .views import view

__all__ = ["LOG_LINES", "LiveView", "live_sink", "view"]
