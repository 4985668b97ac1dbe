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


def test_the_root_names_what_most_scripts_need_and_the_old_error_names_warn() -> None:
    import warnings

    import pytest

    import preflight_sdk
    from preflight_sdk.core.errors import InfrastructureError, OperationCancelled

    assert len(preflight_sdk.__all__) <= 10 and "Envelope" not in preflight_sdk.__all__
    assert preflight_sdk.Envelope is not None  # still importable, no longer listed
    with pytest.warns(DeprecationWarning, match="use preflight_sdk.InfrastructureError"):
        assert preflight_sdk.EnvironmentError_ is InfrastructureError
    with pytest.warns(DeprecationWarning, match="use preflight_sdk.OperationCancelled"):
        assert preflight_sdk.CancelledError_ is OperationCancelled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert preflight_sdk.InfrastructureError is InfrastructureError


def test_project_called_with_a_path_says_to_use_open() -> None:
    import pytest

    from preflight_sdk import Project
    from preflight_sdk.core.errors import InputError

    with pytest.raises(InputError) as caught:
        Project("examples/shop")  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.hint == "use Project.open('examples/shop')"
    assert isinstance(Project.open("examples/shop"), Project)
