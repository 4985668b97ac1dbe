"""Typed decoding that two threads may begin at once (msgspec builds a type's info on first use).

Each round defines new Struct types, so every round is a first use; two threads then convert
the same value at the same moment. In a child process: msgspec's crash is a SIGSEGV.
"""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROUNDS = 1500

SCRIPT = """
import sys, threading
sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
import msgspec
from preflight_sdk.core import decoding

convert = decoding.convert if sys.argv[1] == "guarded" else msgspec.convert
value = {"mids": [{"leaves": [{"name": "a"}]}], "other": {"leaves": []}}

def new_types():
    class Leaf(msgspec.Struct):
        name: str
        tags: list[str] = []
    class Mid(msgspec.Struct):
        leaves: list[Leaf] = []
        extra: dict[str, Leaf] = {}
    class Top(msgspec.Struct):
        mids: list[Mid] = []
        other: Mid | None = None
    return Top

for round in range(int(sys.argv[2])):
    top = new_types()
    both = threading.Barrier(2)
    results = []
    def first_use():
        both.wait()
        results.append(convert(value, top))
    threads = [threading.Thread(target=first_use) for _ in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert len(results) == 2 and results[0] == results[1], results
print("rounds", round + 1)
"""


def _rounds(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(ROUNDS)], capture_output=True, text=True, timeout=120
    )


def test_two_threads_first_using_a_type_at_once_both_get_the_value() -> None:
    done = _rounds("guarded")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["rounds", str(ROUNDS)]


def test_msgspec_alone_still_crashes_so_the_guard_is_still_needed() -> None:
    """When this fails, msgspec publishes a type's info only once it is whole: drop the guard."""
    done = _rounds("bare")
    if done.returncode == 0:
        pytest.fail(f"{ROUNDS} rounds of first uses at once did not crash msgspec: core/decoding.py may go")
    assert done.returncode == -signal.SIGSEGV, done.stderr[-2000:]


PACKAGE = Path(__file__).resolve().parents[3] / "preflight_sdk"
# msgspec calls that build a type's info: (dotted name, whether a call without `type=` is untyped)
_BUILDERS = {
    "msgspec.convert": False,
    "msgspec.json.decode": True,
    "msgspec.json.Decoder": True,
    "msgspec.json.schema": False,
    "msgspec.json.schema_components": False,
    "mi.type_info": False,
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _bare_typed_calls(tree: ast.Module) -> list[int]:
    """Lines of typed msgspec calls in functions that neither go through `decoding` nor call `ready`."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
        if any(_dotted(c.func) == "decoding.ready" for c in calls):
            continue
        for call in calls:
            name = _dotted(call.func)
            if name not in _BUILDERS:
                continue
            typed = any(k.arg == "type" for k in call.keywords) or (
                not _BUILDERS[name] or (name == "msgspec.json.Decoder" and bool(call.args))
            )
            if typed:
                found.append(call.lineno)
    return found


def test_every_typed_msgspec_call_in_the_package_builds_its_type_under_the_lock() -> None:
    exempt = {
        PACKAGE / "core" / "decoding.py",
        PACKAGE / "faces" / "reflection" / "lint.py",
    }  # lint: tests only
    bare = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in exempt and (lines := _bare_typed_calls(ast.parse(path.read_text())))
    }
    assert not bare, f"use preflight_sdk.core.decoding (or call decoding.ready first): {bare}"


def test_the_check_finds_a_bare_typed_call() -> None:
    source = "def f(raw):\n    return msgspec.json.decode(raw, type=Thing)\n"
    assert _bare_typed_calls(ast.parse(source)) == [2]
    assert _bare_typed_calls(ast.parse("def f(raw):\n    return msgspec.json.decode(raw)\n")) == []
    assert (
        _bare_typed_calls(ast.parse("def f(x):\n    decoding.ready(T)\n    return msgspec.convert(x, T)\n"))
        == []
    )
