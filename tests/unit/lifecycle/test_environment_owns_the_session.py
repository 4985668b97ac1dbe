"""`Environment` is the only writer of a project's session, in memory and on disk.

An import contract can say which module imports which, not which one writes a file or an
attribute: this test reads the package's source and says it. The session is written through
`write_state` / `remove_state` (the state file) and held in `Environment`'s private fields;
only `lifecycle/environment.py` does either, and its public view is read-only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import preflight_sdk
from preflight_sdk.lifecycle.environment import Environment

ROOT = Path(preflight_sdk.__file__).parent
OWNER = ROOT / "lifecycle" / "environment.py"
STATE = ROOT / "lifecycle" / "session" / "state.py"  # defines the file's writers
# The session's public view (session, mocks, pytest_servers, …) is read-only properties: the last
# test below says so; the scan finds the rest.
WRITERS = {"write_state", "remove_state"}
HELD = {"_session", "_mocks", "_pytest_servers", "_stale", "_owns_environment", "_loaded", "_state_mark"}
PERSIST = {"_save", "_transition"}


def _writes(path: Path) -> list[str]:
    """The session writes in `path`: the state file's writers called, and the environment's held
    fields or its persisting methods reached on another object than `self`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            foreign = isinstance(func, ast.Attribute) and not _is_self(func.value)
            if name in WRITERS or (name in PERSIST and (foreign or path == OWNER)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}()")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and part.attr in HELD and not _is_self(part.value):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{part.attr} =")
    return found


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def test_only_the_environment_writes_the_session() -> None:
    offenders = [
        write
        for path in sorted(ROOT.rglob("*.py"))
        if path not in (OWNER, STATE)
        for write in _writes(path)
    ]
    assert offenders == [], "write the session through Environment (lifecycle/environment.py)"


def test_the_environment_itself_writes_it() -> None:
    # The scan above looks for the right things: the owner's own writes are found by it.
    assert any("write_state()" in write for write in _writes(OWNER))
    assert any("_save()" in write for write in _writes(OWNER))


@pytest.mark.parametrize("field", ["session", "mocks", "pytest_servers", "stale", "owns_environment", "loaded"])
def test_what_the_environment_holds_is_read_only_from_outside(tmp_path: Path, field: str) -> None:
    env = Environment(tmp_path, None, None)
    with pytest.raises(AttributeError):
        setattr(env, field, None)
