"""Properties: merging decisions never loses anything and is idempotent; UID order is creation order."""

from __future__ import annotations

import string
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from preflight_sdk.clarify.artifacts.uid import UID_RE, format_uid, next_uid
from preflight_sdk.clarify.snapshot import SCHEMA_V1, DecisionItem, Entry, merge, normalize_item

names = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=10).filter(
    lambda n: n[0].isalpha()
)
values = st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=20).filter(
    str.strip
)
uids = st.builds(
    format_uid,
    st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)),
    st.integers(min_value=0, max_value=0xFFFF),
)
snapshots = st.dictionaries(
    names,
    st.dictionaries(names, st.builds(Entry, value=values, adr=st.none() | uids), min_size=1, max_size=4),
    max_size=5,
)


@st.composite
def items(draw: st.DrawFn) -> DecisionItem:
    category = draw(st.sampled_from(sorted(SCHEMA_V1)))
    fields = SCHEMA_V1[category]
    field = draw(names) if fields == ("*",) else draw(st.sampled_from(fields))
    if draw(st.booleans()):
        category, field = category.lower(), field.upper()  # names are matched without regard to case
    item = normalize_item(DecisionItem(category=category, field=field, value=draw(values)))
    assert item is not None
    return item


@settings(max_examples=120, deadline=None)
@given(snapshots, st.lists(items(), max_size=6), uids)
def test_merging_never_drops_a_category_or_field(
    snapshot: dict[str, dict[str, Entry]], decision: list[DecisionItem], uid: str
) -> None:
    merged = merge(snapshot, decision, uid)
    for category, fields in snapshot.items():
        assert category in merged
        assert set(fields) <= set(merged[category])


@settings(max_examples=120, deadline=None)
@given(snapshots, st.lists(items(), max_size=6), uids)
def test_merging_is_idempotent(
    snapshot: dict[str, dict[str, Entry]], decision: list[DecisionItem], uid: str
) -> None:
    once = merge(snapshot, decision, uid)
    assert merge(once, decision, uid) == once


@settings(max_examples=120, deadline=None)
@given(snapshots, st.lists(items(), min_size=1, max_size=6), uids)
def test_the_last_value_of_each_field_is_recorded_with_the_adr(
    snapshot: dict[str, dict[str, Entry]], decision: list[DecisionItem], uid: str
) -> None:
    merged = merge(snapshot, decision, uid)
    lowered = {c.lower(): {f.lower(): e for f, e in fs.items()} for c, fs in merged.items()}
    last = {(i.category.lower(), i.field.lower()): i.value for i in decision}
    for (category, field), value in last.items():
        assert lowered[category][field] == Entry(value=value, adr=uid)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=60),
    st.lists(st.integers(min_value=0, max_value=0xFFFF), min_size=60, max_size=60),
)
def test_uid_order_is_creation_order_even_within_one_millisecond(
    steps: list[int], suffixes: list[int]
) -> None:
    moment = datetime(2026, 5, 1, 12, 0, 0, 999000, tzinfo=UTC)
    created: list[str] = []
    floor: str | None = None
    for step, suffix in zip(steps, suffixes, strict=False):
        moment += timedelta(milliseconds=step)  # the clock may stand still or even go back
        floor = next_uid(moment, floor, f"{suffix:04X}".upper)
        created.append(floor)
    assert sorted(created) == created
    assert len(set(created)) == len(created)
    assert all(UID_RE.match(uid) for uid in created)


def test_a_full_suffix_space_moves_to_the_next_millisecond() -> None:
    moment = datetime(2026, 5, 1, 12, 0, 0, 5000, tzinfo=UTC)
    assert next_uid(moment, "20260501T120000.005Z-FFFF", lambda: "0000") == "20260501T120000.006Z-0000"
    assert next_uid(moment, "20260501T120000.005Z", lambda: "0000") == "20260501T120000.005Z-0000"
