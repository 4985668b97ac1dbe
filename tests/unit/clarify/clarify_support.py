"""Shared pieces of the clarification tests: a controllable clock, file snapshots, UID suffixes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from preflight_sdk.clarify import ClarifyResult


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def docs_tree(root: Path) -> dict[str, bytes]:
    """Every file under docs/, relative path → bytes."""
    docs = root / "docs"
    if not docs.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(docs.rglob("*")) if p.is_file()}


def artifact(result: ClarifyResult, kind: str) -> str:
    """The path of the artifact of this type in a completed result."""
    found = [a.path for a in result.artifacts if a.type == kind]
    assert len(found) == 1, result.artifacts
    return found[0]


def counter_suffix(start: int = 0xA000) -> Callable[[], str]:
    """A deterministic UID suffix source: A000, A001, …"""
    state = {"n": start}

    def next_suffix() -> str:
        value = state["n"]
        state["n"] += 1
        return f"{value:04X}"

    return next_suffix
