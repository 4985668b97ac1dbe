"""A run's files under `.preflight/runs/<runId>/`: report.json, junit.xml, events.ndjson, cases/.

Each file is listed in the result with its sha256. report.json is the RunResult itself (it cannot
hold its own digest, so its entry is added to the returned result only). Nothing else is written
anywhere, and nothing goes to stdout.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from ..results.run import Artifact, Failure, RunResult
from .context import Event
from .junit import write_junit

__all__ = ["new_run_id", "runs_dir", "write_artifacts"]


def new_run_id(now: datetime | None = None) -> str:
    """Return a run id that sorts by time: `20261122T140512Z-3fa9`."""
    moment = now or datetime.now(UTC)
    return moment.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def runs_dir(root: Path) -> Path:
    """The directory holding every run of the project."""
    return root / ".preflight" / "runs"


def write_artifacts(
    root: Path, result: RunResult, events: list[Event], failures: dict[str, Failure]
) -> RunResult:
    """Write the run's files and return `result` listing them (blocking: call in a thread)."""
    folder = runs_dir(root) / result.run_id
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    written: list[Artifact] = []
    junit = folder / "junit.xml"
    write_junit(result, junit)
    written.append(_artifact(folder, junit))
    events_file = folder / "events.ndjson"
    events_file.write_bytes(b"".join(msgspec.json.encode(event) + b"\n" for event in events))
    written.append(_artifact(folder, events_file))
    for identifier, failure in failures.items():
        target = folder / "cases" / f"{identifier}.json"
        target.write_bytes(msgspec.json.format(msgspec.json.encode(failure), indent=2))
        written.append(_artifact(folder, target))
    listed = msgspec.structs.replace(result, artifacts=written)
    report = folder / "report.json"
    report.write_bytes(msgspec.json.format(msgspec.json.encode(listed), indent=2))
    return msgspec.structs.replace(listed, artifacts=[_artifact(folder, report), *written])


def _artifact(folder: Path, path: Path) -> Artifact:
    data = path.read_bytes()
    return Artifact(
        name=str(path.relative_to(folder)),
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
    )
