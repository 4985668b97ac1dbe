"""`prepare` pays in advance what the first config load of a process pays (a server runs it while
its client connects): after it, loading a project describes no type again."""

from __future__ import annotations

from pathlib import Path

from preflight_sdk.config.loader import load_config, prepare
from preflight_sdk.config.validate import describe_type

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "shop"


def test_after_prepare_a_load_describes_no_type_again() -> None:
    describe_type.cache_clear()  # as in a fresh process
    prepare()
    misses = describe_type.cache_info().misses
    loaded = load_config(EXAMPLE)
    assert loaded.services and loaded.suites, "the example has services and YAML suites to validate"
    assert describe_type.cache_info().misses == misses
