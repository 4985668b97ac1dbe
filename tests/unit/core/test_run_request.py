"""`RunRequest`: one frozen value from the face to the store, whose every field but the key tells the request."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from preflight_sdk.core.errors import InputError
from preflight_sdk.core.run_request import RunRequest
from preflight_sdk.runs.identity import request_hash
from preflight_sdk.store import NewRun, RunStore


def test_a_request_is_frozen() -> None:
    request = RunRequest(suites=("api",))
    with pytest.raises(AttributeError):
        request.keep = False  # type: ignore[misc]


def test_every_field_but_the_idempotency_key_tells_two_requests_apart() -> None:
    base = RunRequest(suites=("api",), prepare="up_to_date", idempotency_key="k1")
    assert request_hash("c", base) == request_hash("c", msgspec.structs.replace(base, idempotency_key="k2"))
    for field in msgspec.structs.fields(RunRequest):
        if field.name == "idempotency_key":
            continue
        other = msgspec.structs.replace(base, **{field.name: _another(field.name, getattr(base, field.name))})
        assert request_hash("c", other) != request_hash("c", base), field.name
    assert request_hash("c", base) != request_hash("d", base)  # another configuration
    assert request_hash("c", base, b"saved suite") != request_hash("c", base)


def _another(name: str, value: object) -> object:
    """A value of the field's type other than `value`."""
    others: dict[str, object] = {
        "kind": "build",
        "suites": ("web",),
        "parallel": True,
        "prepare": "if_running",
        "selection": {"api": ("api.one",)},
        "shards": ("local",),
        "affected_within": "6h",
    }
    if name in others:
        return others[name]
    if isinstance(value, bool):
        return not value
    return "other"


def test_a_selection_is_handed_to_the_runners_as_sets() -> None:
    request = RunRequest(selection={"api": ("api.a", "api.b")})
    assert request.picked() == {"api": {"api.a", "api.b"}}
    assert RunRequest().picked() is None


@pytest.mark.parametrize("within", ["0s", "soon", "-1h"])
def test_an_affected_within_that_is_no_positive_duration_is_invalid_input(within: str) -> None:
    with pytest.raises(InputError) as bad:
        RunRequest(affected=True, affected_within=within)
    assert bad.value.code == "INVALID_INPUT"


@pytest.mark.parametrize("key", ["", "k" * 201])
def test_an_idempotency_key_out_of_bounds_is_invalid_input(key: str) -> None:
    with pytest.raises(InputError) as bad:
        RunRequest(idempotency_key=key)
    assert bad.value.code == "INVALID_INPUT" and bad.value.hint


def test_the_store_records_what_the_request_asked(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    request = RunRequest(resumed_from="01ARZ3NDEKTSV4RRFFQ69G5FAV", test_id="health", idempotency_key="task-1")
    opened = NewRun(run_id="01ARZ3NDEKTSV4RRFFQ69G5FAW", started_at="2026-01-01T00:00:00.000Z", suites=("api",))
    row, created = store.create(request, opened)
    assert created
    assert (row.kind, row.resumed_from, row.test_id, row.idempotency_key) == (
        "test",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        "health",
        "task-1",
    )
    again, created = store.create(request, msgspec.structs.replace(opened, run_id="01ARZ3NDEKTSV4RRFFQ69G5FAX"))
    assert not created and again.run_id == row.run_id  # the key replays the run
    store.db.close()
