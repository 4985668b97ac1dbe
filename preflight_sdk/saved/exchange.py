"""Saved tests to and from YAML test files inside the project (blocking file work in a thread).

Export writes an ordinary test file (`name`, `cases`) and returns the e2e.yaml `tests.suites`
entry that runs it, so an agent's tests can become reviewed, versioned tests. Import saves the
cases of an existing test file, one stored test per case. Both refuse paths outside the project.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import yaml

from preflight_sdk.config import load_test_file
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.results.saved import ExportResult, ImportResult
from preflight_sdk.core.yaml_source import parse_yaml
from preflight_sdk.runs.supervisor import now_text
from preflight_sdk.store import SavedTestRow

from .definition import check_id, parse_case
from .service import SavedTests

__all__ = ["export_tests", "import_tests"]


async def export_tests(
    saved: SavedTests,
    *,
    path: str,
    test_ids: Sequence[str] | None,
    suite_id: str | None,
    overwrite: bool,
) -> ExportResult:
    """Write saved tests (these ids, a saved suite's, or all) as a YAML test file inside the project."""
    if test_ids is not None and suite_id is not None:
        raise InputError("give `testIds` or `suiteId`, not both", hint="omit both to export every saved test")
    loaded = await saved.runs.ctx.ensure_loaded()
    root = Path(loaded.root)
    target = await anyio.to_thread.run_sync(_inside, root, path)
    if target.suffix not in (".yaml", ".yml"):
        raise InputError(f"{path!r} must end in .yaml or .yml", hint="e.g. tests/saved.yaml")
    store = await saved.store()
    name = "saved tests"
    if suite_id is not None:
        check_id(suite_id, field="suiteId")
        suite = await saved.call(store.suite, suite_id)
        if suite is None:
            known = [s.id for s in await saved.call(store.suites)]
            raise InputError(
                f"no saved suite with id {suite_id!r}",
                code="SUITE_NOT_FOUND",
                hint=f"saved suites: {', '.join(known) or '(none)'}",
                details={"valid": known},
            )
        ids, name = suite.test_ids, suite.name
    elif test_ids is not None:
        ids = list(test_ids)
        for index, test_id in enumerate(ids):
            check_id(test_id, field=f"testIds[{index}]")
    else:
        ids = await saved.call(store.test_ids)
    if not ids:
        raise InputError("there is no saved test to export", hint="save_test first")
    rows = await saved.require_tests(ids)
    text = yaml.safe_dump(
        {"name": name, "cases": [row.definition for row in rows]}, sort_keys=False, allow_unicode=True
    )
    await anyio.to_thread.run_sync(_write, target, text, overwrite)
    relative = target.relative_to(root).as_posix()
    entry_id = suite_id or _slug(target.stem) or "saved"
    entry = {"id": entry_id, "name": name, "runner": "yaml", "file": relative}
    return ExportResult(
        path=str(target),
        test_ids=list(ids),
        suite_entry=entry,
        suite_entry_yaml=yaml.safe_dump({"tests": {"suites": [entry]}}, sort_keys=False),
    )


async def import_tests(
    saved: SavedTests, *, path: str, tags: Sequence[str] | None, overwrite: bool
) -> ImportResult:
    """Save each case of a YAML test file as a stored test (id: the case name as a slug)."""
    loaded = await saved.runs.ctx.ensure_loaded()
    target = await anyio.to_thread.run_sync(_inside, Path(loaded.root), path)
    await anyio.to_thread.run_sync(load_test_file, target)  # CONFIG_NOT_FOUND / CONFIG_INVALID with lines
    data = parse_yaml(await anyio.to_thread.run_sync(target.read_text), file=str(target)).data
    cases: list[dict[str, Any]] = list(data.get("cases") or [])
    warnings = [
        f"the file's `{key}` is not part of saved tests: cases that use it may need editing"
        for key in ("variables", "setup", "teardown", "service")
        if data.get(key)
    ]
    store = await saved.store()
    taken: set[str] = set()
    rows: list[SavedTestRow] = []
    now = now_text()
    for case in cases:
        name = str(case.get("name") or "case")
        test_id = _unique(_slug(name) or "case", taken)
        definition, _ = parse_case(case, name=name)
        row = SavedTestRow(
            id=test_id, name=name, description=case.get("description"), tags=list(tags or []),
            definition=definition, created_at=now, updated_at=now,
        )  # fmt: skip
        rows.append(row)
    existing = set(await saved.call(store.test_ids)) & taken
    if existing and not overwrite:
        raise InputError(
            f"saved tests with these ids already exist: {', '.join(sorted(existing))}",
            hint="pass overwrite=true to replace them (nothing was saved)",
            details={"existing": sorted(existing)},
        )
    for row in rows:
        await saved.call(store.put_test, row, overwrite=True)
    return ImportResult(path=str(target), saved=[r.id for r in rows], warnings=warnings)


def _inside(root: Path, path: str) -> Path:
    """`path` (relative to the project, or absolute) resolved, when it lies inside the project."""
    if not isinstance(path, str) or not path.strip() or len(path) > 1000 or "\0" in path:
        raise InputError("path must be a file path inside the project", hint="e.g. tests/saved.yaml")
    candidate = Path(path).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    base = root.resolve()
    if resolved != base and base not in resolved.parents:
        raise InputError(
            f"{path!r} is outside the project ({base})",
            hint="use a path relative to the directory holding e2e.yaml, e.g. tests/saved.yaml",
            details={"path": path, "project": str(base)},
        )
    return resolved


def _write(target: Path, text: str, overwrite: bool) -> None:
    if target.exists() and not overwrite:
        raise InputError(
            f"{target} already exists", hint="pass overwrite=true to replace it, or choose another path"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(target)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:90]


def _unique(base: str, taken: set[str]) -> str:
    candidate, number = base, 2
    while candidate in taken:
        candidate = f"{base}-{number}"
        number += 1
    taken.add(candidate)
    return candidate
