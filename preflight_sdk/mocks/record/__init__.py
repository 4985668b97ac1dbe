"""Recording mocks: real traffic kept, turned into routes, written beside e2e.yaml, checked for drift.

While a mock records (`MockHost.record`), every request no hand-written route answers goes to its
real upstream and the exchange is kept (`recorder`). When the recording ends, `save_recording`
turns the exchanges into routes (`derive`: deduplicated, denoised, secrets masked, path
parameters found), merges them with the routes recorded before (`merge`) and writes the route
file whole (`files`). `check` sends a mock's routes to the real upstream and reports drift.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from preflight_sdk.config.mocks.recorded import check_no_route_file_problems, read_route_file
from preflight_sdk.core.redaction import Redactor

from .derive import derive_routes
from .files import write_route_file
from .merge import Merged, merge_routes
from .recorder import Exchange, Recorder

__all__ = ["Exchange", "Merged", "Recorder", "SavedRecording", "save_recording"]


class SavedRecording(msgspec.Struct, frozen=True, kw_only=True):
    """What writing a recording did: the merge, and how many exchanges it came from."""

    merged: Merged | None  # None when nothing was recorded (the file is left as it was)
    exchanges: int


def save_recording(
    recorder: Recorder, *, mock: str, path: Path, redactor: Redactor, at: str
) -> SavedRecording:
    """Write what `recorder` kept as mock `mock`'s routes at `path`, merged with the routes there.

    Blocking (file I/O). Nothing is written when nothing was recorded.

    Raises:
        ConfigError: the existing route file is invalid (it is left as it was).
        OSError: the file cannot be written (the previous one is left whole).
    """
    exchanges = recorder.exchanges()
    if not exchanges:
        return SavedRecording(merged=None, exchanges=0)
    before, problems = read_route_file(path)
    check_no_route_file_problems(problems, str(path))
    merged = merge_routes(
        before.routes if before is not None else [], derive_routes(exchanges, redactor, at=at)
    )
    write_route_file(path, mock=mock, upstream=redactor.url(recorder.upstream), routes=merged.routes)
    return SavedRecording(merged=merged, exchanges=len(exchanges))
