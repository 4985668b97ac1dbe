"""Whether a Jupyter kernel is showing us, and what the notebook face shows there by default.

Nothing here imports IPython or ipywidgets: the kernel is recognised from `sys.modules`, and the
notebook face (ipywidgets) is imported only inside a kernel, when it is installed.
"""

from __future__ import annotations

import sys
from typing import Any

from preflight_sdk.core.progress import ProgressSink

__all__ = ["default_progress", "in_kernel", "live_bundle", "page_bundle"]


def in_kernel() -> bool:
    """Tell whether this code runs inside a Jupyter kernel (without importing IPython)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def default_progress(operation: str) -> ProgressSink | None:
    """The sink behind `progress=None`: a live view inside a kernel (with the notebook extra), else none."""
    if not in_kernel():
        return None
    try:
        from . import live_sink
    except ImportError:  # the notebook extra (ipywidgets) is not installed
        return None
    return live_sink(operation)


def live_bundle(result: Any) -> dict[str, Any] | None:
    """The MIME bundle of a live widget for `result` inside a kernel (a clarification's form), or None."""
    if not in_kernel():
        return None
    try:
        from .clarify_form import live_form
    except ImportError:  # the notebook extra (ipywidgets) is not installed
        return None
    form = live_form(result)
    return None if form is None else dict(form.widget._repr_mimebundle_())


def page_bundle(result: Any) -> dict[str, Any] | None:
    """Inside a kernel, a finished test run shows its page (report.html) inline; else None."""
    from preflight_sdk.core.results.run import RunResult

    if not isinstance(result, RunResult) or not in_kernel():
        return None
    from .static.report_view import report_html

    page = report_html(result)
    return None if page is None else {"text/html": page}
