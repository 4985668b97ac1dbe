"""The affected rule is sound: on a fixture of four services and 192 cases (YAML and pytest), each of
30 small edits (one or more per service file and per suite file; some break behaviour, some do not)
is followed by `run(affected=True)` and then by a full run on the same kept environment. Every case
whose verdict in the full run differs from what the affected run said (ran or carried) must have
been among the affected cases: zero misses. The share of cases each affected run ran is printed.

One environment serves all 30 edits, its suites side by side (`parallel=True`). The edits of one
file build on each other (an edit of a service changes what its cases and its dependents' see,
whatever was edited before it in that file); the file is then put back, with one more affected run,
before the next file's edits: 73 runs of a small project in all.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import anyio
import pytest
from support.docker import force_clean

from preflight_sdk import Project
from preflight_sdk.core.results.run import RunResult

pytestmark = [pytest.mark.slow]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "four-services"
SERVICES = {"catalog", "pricing", "cart", "audit"}
_LIST_ROUTE = (
    'if parts == ["products"]:\n            return self.reply(200, [])\n        if parts == ["health"]:'
)
_HEADER = 'self.send_header("Content-Type", "application/json")'
_NEW_PRODUCT = (
    "  - name: product 0\n    request: {path: /products/0}\n    expect: {status: 200, body: {name: item-0}}\n"
)
_NEW_QUOTE = (
    "  - name: quote 9\n    request: {path: /quote/9}\n    expect: {status: 200, body: {total: 56}}\n"
)
_EVENT_52 = "  - name: event 52\n    request: {path: /events/52}\n    expect: {status: 200, body: {n: 52, kind: view}}\n"
_CHECKOUT = "  - name: checkout tells notify\n"
# (file, text replaced, replacement): the edits of one file are applied one after the other (each
# on top of the ones before), then the file is put back before the next file's edits.
EDITS: list[tuple[str, str, str]] = [
    ("catalog/app.py", '"""catalog: the products, by id."""', '"""catalog: every product, by its id."""'),
    ("catalog/app.py", 'f"item-{number}"', 'f"product-{number}"'),
    ("catalog/app.py", '"tools" if number % 2 else "parts"', '"tools" if number % 5 else "parts"'),
    ("catalog/app.py", 'if parts == ["health"]:', _LIST_ROUTE),
    (
        "pricing/app.py",
        '"""pricing: the price of each product, in cents."""',
        '"""pricing: prices in cents."""',
    ),
    ("pricing/app.py", '"price": number * 3 + 1', '"price": number * 3 + (2 if number > 40 else 1)'),
    ("pricing/app.py", '{"id": number, "price"', '{"id": number, "currency": "EUR", "price"'),
    ("pricing/app.py", "and parts[1].isdigit():", 'and parts[1].isdigit() and parts[1] != "7":'),
    ("cart/app.py", '"""cart: a quote', '"""cart: gives a quote'),
    ("cart/app.py", '"total": cost["price"] * 2', '"total": cost["price"] * 3'),
    ("cart/app.py", 'f"{NOTIFY}/sent"', 'f"{NOTIFY}/sent-later"'),
    ("cart/app.py", "item = fetch(", "found = fetch("),
    ("audit/app.py", '"""audit: the event log, by sequence number."""', '"""audit: events by number."""'),
    ("audit/app.py", '"login" if number % 3 == 0', '"login" if number % 4 == 0'),
    ("audit/app.py", _HEADER, _HEADER + '\n        self.send_header("X-Audit", "1")'),
    ("audit/app.py", "and parts[1].isdigit():", "and parts[1].isdigit() and int(parts[1]) <= 50:"),
    ("tests/catalog.yaml", "name: item-5}", "name: item-five}"),
    ("tests/catalog.yaml", "  - name: product 48\n", _NEW_PRODUCT + "  - name: product 48\n"),
    ("tests/pricing.yaml", "request: {path: /prices/9}", "request: {path: /prices/10}"),
    ("tests/pricing.yaml", "name: price 12\n", "name: the price of 12\n"),
    ("tests/cart.yaml", "count: 1, body: {ordered: 3}", "count: 2, body: {ordered: 3}"),
    ("tests/cart.yaml", _CHECKOUT, _NEW_QUOTE + _CHECKOUT),
    ("tests/audit.yaml", _EVENT_52, ""),
    ("tests/audit.yaml", "body: {n: 30, kind: login}", "body: {n: 30, kind: view}"),
    ("pytests/catalog/test_catalog.py", '== ("tools" if number % 2 else "parts")', '== "tools"'),
    ("pytests/catalog/test_catalog.py", "range(101, 113)", "range(101, 115)"),
    ("pytests/pricing/test_pricing.py", '"""Prices through', '"""The prices through'),
    ("pytests/cart/test_cart.py", "[20, 21]", "[20, 21, 0]"),
    ("pytests/audit/test_audit.py", "range(101, 115)", "range(101, 117)"),
    (
        "pytests/audit/test_audit.py",
        "def test_event(number):",
        "def test_event(number):\n    assert number != 104",
    ),
]


def _verdicts(run: RunResult) -> dict[str, str]:
    return {c.id: c.verdict for s in run.suites for c in s.cases}


def _ran(run: RunResult) -> set[str]:
    return {c.id for s in run.suites for c in s.cases if c.status != "carried"}


def _edit(root: Path, path: str, old: str, new: str) -> None:
    target = root / path
    text = target.read_text()
    assert text.count(old) == 1, f"{path}: {old!r} is not there exactly once"
    target.write_text(text.replace(old, new))


def test_every_verdict_an_edit_changes_is_among_the_affected_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_WARM_PYTEST", "1")  # a kept environment: pytest stays warm
    root = tmp_path / "four-services"
    shutil.copytree(FIXTURE, root)
    began = time.perf_counter()
    rows: list[tuple[str, int, int, int, int, int]] = []
    misses: list[str] = []

    async def main() -> None:
        async with Project.open(root) as project:
            baseline = await project.run(parallel=True)
            assert baseline.ok, baseline.summary
            assert baseline.totals.total == 192
            originals: dict[str, str] = {}
            before = _verdicts(baseline)  # the verdicts of the full run before each edit
            for index, (path, old, new) in enumerate(EDITS):
                originals.setdefault(path, (root / path).read_text())
                _edit(root, path, old, new)
                affected = await project.run(affected=True, parallel=True)
                full = await project.run(parallel=True)
                claimed, truth = _verdicts(affected), _verdicts(full)
                ran = _ran(affected)
                changed = {c for c in truth if truth[c] != claimed.get(c)}
                misses.extend(
                    f"{path} {new[:30]!r}: {c} is {truth[c]}, was {claimed.get(c)}" for c in changed - ran
                )
                differs = sum(truth[c] != before.get(c) for c in truth)  # what this edit changed
                rows.append((path, len(ran), len(truth), affected.totals.carried, len(changed), differs))
                before = truth
                if index + 1 == len(EDITS) or EDITS[index + 1][0] != path:
                    # The file's edits are done: back to where the next file's edits start.
                    (root / path).write_text(originals.pop(path))
                    undone = await project.run(affected=True, parallel=True)
                    assert undone.ok, f"after undoing {path}: {undone.summary}"
                    before = _verdicts(baseline)

    anyio.run(main)
    seconds = time.perf_counter() - began
    with capsys.disabled():
        print(f"\naffected runs after each of {len(EDITS)} edits (then a full run), {seconds:.0f} s in all:")
        print(f"{'edited file':34} {'ran':>4} {'of':>4} {'share':>6} {'carried':>7} {'verdicts changed':>16}")
        for path, ran, total, carried, _, differs in rows:
            print(f"{path:34} {ran:4} {total:4} {ran / total:6.0%} {carried:7} {differs:16}")
    assert misses == []
    assert sum(r[5] for r in rows) >= 40  # the edits do break verdicts: the test can fail
    service_edits = [r for r in rows if r[0].split("/")[0] in SERVICES]
    assert all(ran / total <= 0.35 for _, ran, total, *_ in service_edits)
    assert all(ran + carried == total for _, ran, total, carried, *_ in rows)


@pytest.fixture(autouse=True)
def _cleaned(tmp_path: Path) -> object:
    yield None
    force_clean(tmp_path / "four-services")
