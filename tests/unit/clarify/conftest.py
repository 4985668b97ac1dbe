"""Fixtures for the clarification tests: a real git repository, a controllable clock."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from unit.clarify.clarify_support import FakeClock


@pytest.fixture(autouse=True)
def _no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "PREFLIGHT_LLM_PROVIDER",
        "PREFLIGHT_LLM_MODEL",
        "PREFLIGHT_ANTHROPIC_API_KEY",
        "PREFLIGHT_OPENAI_API_KEY",
        "PREFLIGHT_OPENROUTER_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 3, 14, 9, 26, 53, 589000, tzinfo=UTC))
