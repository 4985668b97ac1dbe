"""The core reaches the faces through entry points (core/face_hooks.py), never by importing them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from preflight_sdk import InputError
from preflight_sdk.core import face_hooks
from preflight_sdk.core.results.lifecycle import CleanResult


@pytest.fixture
def no_faces(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A package installed without its faces: the group names no entry point."""
    import importlib.metadata

    def nothing(**_: Any) -> list[Any]:
        return []

    face_hooks._hook.cache_clear()
    monkeypatch.setattr(importlib.metadata, "entry_points", nothing)
    yield
    face_hooks._hook.cache_clear()


def test_each_hook_is_the_face_the_package_metadata_names() -> None:
    from preflight_sdk.faces.mcp.selfcheck import self_check_target
    from preflight_sdk.faces.notebook.static import mimebundle

    assert face_hooks.renderer() is mimebundle
    assert face_hooks.self_check() is self_check_target
    bundle = CleanResult(containers=[], mocks=[], network=None, networks=[], session_removed=False)._repr_mimebundle_()
    assert "text/html" in bundle and "text/plain" in bundle


def test_importing_the_core_and_rendering_nothing_imports_no_face() -> None:
    code = (
        "import sys, preflight_sdk\n"
        "from preflight_sdk.core.results.lifecycle import CleanResult\n"
        "r = CleanResult(containers=[], mocks=[], network=None, networks=[], session_removed=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('preflight_sdk.faces')))\n"
        "r._repr_mimebundle_()\n"
        "print(sorted(m for m in sys.modules if m.startswith('preflight_sdk.faces.notebook.static')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    before, after = out.splitlines()
    assert before == "[]", "a face was imported before anything asked for it"
    assert "preflight_sdk.faces.notebook.static" in after


def test_without_its_faces_a_result_renders_as_json_text_and_a_self_check_is_refused(
    no_faces: None, tmp_path: Any
) -> None:
    assert face_hooks.renderer() is None and face_hooks.self_check() is None
    bundle = CleanResult(containers=[], mocks=[], network=None, networks=[], session_removed=False)._repr_mimebundle_()
    assert list(bundle) == ["text/plain"] and bundle["text/plain"].startswith("CleanResult {")
    from preflight_sdk.operations.verify import _self_check_target

    with pytest.raises(InputError) as refused:
        _self_check_target(str(tmp_path))
    assert "pip install -e ." in (refused.value.hint or "")
