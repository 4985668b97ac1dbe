"""The one duration parser: units, combinations, milliseconds, and what it refuses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from preflight_sdk.core.durations import format_duration, parse_duration, parse_since
from preflight_sdk.core.errors import InputError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("5s", 5.0),
        ("1.5s", 1.5),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("90d", 90 * 86400.0),
        ("1m30s", 90.0),
        ("1h 30m", 5400.0),
        ("2s500ms", 2.5),
        (" 5S ", 5.0),
        ("0s", 0.0),
    ],
)
def test_every_unit_and_combinations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("value", "seconds"), [(1500, 1.5), (0, 0.0), ("1500", 1.5), ("250.5", 0.2505), (2.5, 0.0025)]
)
def test_bare_numbers_are_milliseconds(value: int | float | str, seconds: float) -> None:
    assert parse_duration(value) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "abc",
        "5 sec",
        "ms",
        "1.5.5s",
        "-1s",
        "s5",
        "5x",
        "1m s",
        -1,
        -0.5,
        True,
        None,
        [1],
        float("nan"),
        float("inf"),
        "9" * 400 + "s",
    ],
)
def test_anything_else_is_invalid_input_naming_the_field(value: object) -> None:
    with pytest.raises(InputError) as caught:
        parse_duration(value, field="timeout")  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details is not None and caught.value.details["field"] == "timeout"
    assert "`timeout` must be a duration" in caught.value.message
    assert caught.value.hint


NOW = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "back"), [("30s", 30), ("5m", 300), ("2h", 7200), ("1500", 1.5), ("1m30s", 90)]
)
def test_since_a_duration_counts_back_from_now(text: str, back: float) -> None:
    assert parse_since(text, now=NOW) == NOW - timedelta(seconds=back)


def test_since_an_iso_timestamp() -> None:
    assert parse_since("2026-11-22T09:00:00Z") == datetime(2026, 11, 22, 9, tzinfo=UTC)
    assert parse_since("2026-11-22T09:00:00+02:00") == datetime(2026, 11, 22, 7, tzinfo=UTC)
    # A naive timestamp or datetime is taken as UTC.
    assert parse_since("2026-11-22T09:00:00") == datetime(2026, 11, 22, 9, tzinfo=UTC)
    assert parse_since(datetime(2026, 11, 22, 9)) == datetime(2026, 11, 22, 9, tzinfo=UTC)
    aware = datetime(2026, 11, 22, 9, tzinfo=timezone(timedelta(hours=1)))
    assert parse_since(aware) is aware


def test_since_defaults_to_the_current_time() -> None:
    before = datetime.now(UTC)
    moment = parse_since("10s")
    assert (
        before - timedelta(seconds=10, milliseconds=50) <= moment <= datetime.now(UTC) - timedelta(seconds=10)
    )


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "", "-5m"])
def test_since_rejects_other_text(text: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_since(text, now=NOW)
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details == {"field": "since", "value": text}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.85, "850ms"), (0.0, "0ms"), (2.44, "2.4s"), (59.94, "59.9s"), (185, "3m05s"), (3600, "60m00s")],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
