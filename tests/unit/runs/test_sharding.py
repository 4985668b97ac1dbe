"""Splitting a sharded run's suites by the durations the store recorded, and naming its engines."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.config.engine_target import EngineTarget
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.runs.shard_plan import DEFAULT_SUITE_MS, parse_shards, split_suites
from preflight_sdk.store import CaseRow, NewRun, RunStore, new_run_id


def _record(store: RunStore, durations: dict[str, list[int]], **asked: str) -> str:
    """One finished test run whose suites' cases took `durations` (ms each)."""
    run_id = new_run_id()
    opened = NewRun(run_id=run_id, started_at="2026-01-01T00:00:00.000Z", suites=tuple(durations))
    store.create(RunRequest(**asked), opened)
    cases = [
        CaseRow(case_id=f"{suite}.c{i}", suite=suite, name=f"c{i}", status="passed", duration_ms=ms)
        for suite, each in durations.items()
        for i, ms in enumerate(each)
    ]
    store.finish(
        run_id,
        status="passed",
        finished_at="2026-01-01T00:01:00.000Z",
        duration_ms=1,
        summary="",
        cases=cases,
    )
    return run_id


def test_the_store_gives_each_suite_the_mean_of_its_newest_whole_runs(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    _record(store, {"api": [1000, 500], "ui": [9000]})  # oldest: falls out of the newest three for api
    _record(store, {"api": [3000, 1000]})
    _record(store, {"api": [2000, 2000], "ui": [3000]})
    _record(store, {"api": [6000]})
    # A resumed run and a one-test run ran a part of a suite: they do not count.
    _record(store, {"api": [10]}, resumed_from="01JDQ8ZK5X7N3V9G2H4M6P8R0T")
    _record(store, {"api": [20]}, test_id="saved-one")
    cancelled = new_run_id()
    store.create(RunRequest(), NewRun(run_id=cancelled, started_at="2026-01-01T00:00:00.000Z", suites=("api",)))
    store.finish(cancelled, status="cancelled", finished_at="x", duration_ms=1, summary="",
                 cases=[CaseRow(case_id="api.c0", suite="api", name="c0", status="passed", duration_ms=5)])  # fmt: skip

    durations = store.suite_durations(["api", "ui", "never"])

    assert durations == {"api": (4000 + 4000 + 6000) // 3, "ui": (9000 + 3000) // 2}


def test_longest_first_onto_the_least_loaded_engine_from_recorded_durations(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    _record(store, {"a": [8000], "b": [7000], "c": [6000], "d": [5000], "e": [4000]})
    suites = ["a", "b", "c", "d", "e"]

    parts, loads = split_suites(suites, store.suite_durations(suites), 2)

    # a(8) → 0; b(7) → 1; c(6) → 1 (7 < 8); d(5) → 0 (8 < 13); e(4) → 1 (13 = 13: the first engine).
    assert parts == [["a", "d", "e"], ["b", "c"]]
    assert loads == [17000, 13000]


def test_suites_without_history_count_as_the_mean_and_the_split_is_the_same_every_time() -> None:
    suites = ["new1", "slow", "new2", "fast"]
    recorded = {"slow": 9000, "fast": 1000}

    first = split_suites(suites, recorded, 2)

    assert first == split_suites(suites, recorded, 2)
    # slow(9) → 0; new1(5) → 1; new2(5) → 1 (5 < 9); fast(1) → 0 (9 < 10). File order within a shard.
    assert first == ([["slow", "fast"], ["new1", "new2"]], [10000, 10000])
    nothing_known = split_suites(["x", "y", "z"], {}, 2)
    assert nothing_known == ([["x", "z"], ["y"]], [2 * DEFAULT_SUITE_MS, DEFAULT_SUITE_MS])


def test_more_engines_than_suites_leaves_the_rest_idle() -> None:
    assert split_suites(["only"], {"only": 3}, 3) == ([["only"], [], []], [3, 0, 0])


def test_engines_are_named_as_the_cli_names_them() -> None:
    specs = parse_shards(["local", "unix:///run/other.sock", "context:ci", "ssh://ci@builder", "local"])

    assert [s.name for s in specs] == [
        "local",
        "unix:///run/other.sock",
        "context:ci",
        "ssh://ci@builder",
        "local#2",
    ]
    assert [s.key for s in specs] == ["1", "2", "3", "4", "5"]
    assert specs[0].target is None
    assert specs[1].target == EngineTarget(host="unix:///run/other.sock")
    assert specs[2].target == EngineTarget(context="ci")


@pytest.mark.parametrize("engines", [[], ["docker.example:2375"], ["context:"], ["tcp://"], ["local"] * 17])
def test_an_engine_list_that_names_nothing_usable_is_invalid_input(engines: list[str]) -> None:
    with pytest.raises(InputError) as caught:
        parse_shards(engines)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.hint
