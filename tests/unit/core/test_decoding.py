"""Typed decoding that two threads may begin at once (msgspec builds a type's info on first use).

Each round defines new Struct types, so every round is a first use; two threads then convert
the same value at the same moment. In a child process: msgspec before 0.23 died of SIGSEGV here
(see core/decoding.py), which is why the package requires 0.23 or newer.
"""

from __future__ import annotations

import subprocess
import sys

import msgspec

from preflight_sdk.core import decoding

ROUNDS = 1500

SCRIPT = """
import sys, threading
sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
import msgspec
from preflight_sdk.core import decoding

convert = decoding.convert
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

for round in range(int(sys.argv[1])):
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


def _rounds() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROUNDS)], capture_output=True, text=True, timeout=120
    )


def test_two_threads_first_using_a_type_at_once_both_get_the_value() -> None:
    done = _rounds()
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["rounds", str(ROUNDS)]


def test_descriptions_come_out_dedented_whatever_msgspec_gave() -> None:
    raw = {
        "description": "First line.\n\n    An indented paragraph,\n    as a class docstring holds it.\n    ",
        "properties": {"description": {"type": "string", "description": "  Inner.\n"}},
        "anyOf": [{"description": "One.\n        Two."}],
    }
    assert decoding.plain_descriptions(raw) == {
        "description": "First line.\n\nAn indented paragraph,\nas a class docstring holds it.",
        "properties": {"description": {"type": "string", "description": "Inner."}},
        "anyOf": [{"description": "One.\nTwo."}],
    }


class _Documented(msgspec.Struct):
    """A summary.

    An indented second paragraph.
    """

    name: str


def test_a_schema_of_a_struct_has_its_docstring_dedented() -> None:
    assert decoding.schema(_Documented)["$defs"]["_Documented"]["description"] == (
        "A summary.\n\nAn indented second paragraph."
    )
