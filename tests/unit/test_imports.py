"""Importing preflight_sdk must be cheap and side-effect free."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["ipywidgets", "mcp", "click", "python_on_whales", "uvicorn", "starlette", "IPython", "httpx"]


def test_importing_the_package_pulls_in_no_docker_mcp_cli_or_widget_module() -> None:
    code = f"import sys, json, preflight_sdk\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_importing_the_package_starts_no_thread_and_writes_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = "import threading, preflight_sdk; print(threading.active_count())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.strip() == "1"
    assert done.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_public_names_are_sorted_and_exist() -> None:
    import preflight_sdk

    assert preflight_sdk.__all__ == sorted(preflight_sdk.__all__)
    for name in preflight_sdk.__all__:
        assert hasattr(preflight_sdk, name), name
