"""A run's files under `.preflight/runs/<runId>/`: report.json, junit.xml, events.ndjson, cases/, report.html.

A browser failure's screenshot and trace, and a Playwright test's attachments, are written there
by the suites while they run (`cases/<caseId>/…`); they are listed here with the rest.

Each file is listed in the result with its sha256 (over the raw bytes) and content type.
report.json is the RunResult itself (it cannot hold its own digest, so its entry is added to the
returned result only). The event log appends itself to events.ndjson (see `events.py`); it is
flushed here, after ARTIFACT_WRITTEN of every other file, and closed by the run's final event.
Nothing else is written anywhere, and nothing goes to stdout.
"""

from __future__ import annotations

import hashlib
import mimetypes
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from preflight_sdk.core.results.run import Artifact, Failure, RunResult

from .events import Event, EventLog
from .junit import write_junit

__all__ = ["artifact_of", "content_type_of", "runs_dir", "write_artifacts"]

_TYPES = {
    ".ndjson": "application/x-ndjson",
    ".json": "application/json",
    ".xml": "application/xml",
    ".html": "text/html",
}


def runs_dir(root: Path) -> Path:
    """The directory holding every run of the project."""
    return root / ".preflight" / "runs"


def write_artifacts(
    root: Path,
    result: RunResult,
    log: EventLog,
    failures: dict[str, Failure],
    final_event: str,
    pages: Callable[[Path, RunResult, Sequence[Event]], list[Path]] | None = None,
) -> RunResult:
    """Write the run's files and return `result` listing them (blocking: call in a thread).

    `final_event` (RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED) closes the event log. `pages` writes
    further files from the result and the whole event log (the run's report.html) into the folder
    it is given, and returns their paths; they are listed, and report.json lists them too.
    """
    folder = runs_dir(root) / result.run_id
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    log.path = folder / "events.ndjson"
    written: list[Artifact] = []
    junit = folder / "junit.xml"
    write_junit(result, junit)
    written.append(artifact_of(folder, junit))
    for identifier, failure in failures.items():
        target = folder / "cases" / f"{identifier}.json"
        target.write_bytes(msgspec.json.format(msgspec.json.encode(failure), indent=2))
        written.append(artifact_of(folder, target))
    written += [artifact_of(folder, path) for path in _evidence_files(folder)]
    for artifact in written:
        log.record("ARTIFACT_WRITTEN", name=artifact.name)
    if pages is not None:
        log.record("ARTIFACT_WRITTEN", name="report.html")
    log.record("ARTIFACT_WRITTEN", name="report.json")
    log.record(final_event, status=result.status, duration=result.duration, message=result.summary[:300])
    log.flush()
    written.insert(1, artifact_of(folder, log.path))
    listed = msgspec.structs.replace(result, artifacts=written)
    if pages is not None:
        written += [artifact_of(folder, path) for path in pages(folder, listed, log.events)]
        listed = msgspec.structs.replace(result, artifacts=written)
    report = folder / "report.json"
    report.write_bytes(msgspec.json.format(msgspec.json.encode(listed), indent=2))
    return msgspec.structs.replace(listed, artifacts=[artifact_of(folder, report), *written])


def _evidence_files(folder: Path) -> list[Path]:
    """The files the suites left in the run's folder while they ran: a browser failure's screenshot
    and trace (`cases/<caseId>/…`, `browser/…`), a Playwright test's attachments."""
    found = [p for p in (folder / "cases").rglob("*") if p.is_file() and p.parent != folder / "cases"]
    if (folder / "browser").is_dir():
        found += [p for p in (folder / "browser").rglob("*") if p.is_file()]
    return sorted(found)


def content_type_of(name: str) -> str:
    """The content type of an artifact, by its name."""
    suffix = Path(name).suffix.lower()
    return _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def artifact_of(folder: Path, path: Path) -> Artifact:
    """The listing entry of a file of the run in `folder`."""
    data = path.read_bytes()
    name = str(path.relative_to(folder))
    return Artifact(
        name=name,
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        content_type=content_type_of(name),
    )
