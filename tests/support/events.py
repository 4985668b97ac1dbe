"""Reading a run's events.ndjson in tests: the suite and case events, in the runners' short names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_SHORT = {
    "SUITE_STARTED": "suite_start",
    "SUITE_FINISHED": "suite_end",
    "CASE_STARTED": "case_start",
    "CASE_FINISHED": "case_end",
    "CASE_FAILED": "case_end",
}


def suite_events(path: str | Path) -> list[dict[str, Any]]:
    """The events about a suite or a case, with `type` as suite_start/suite_end/case_start/case_end
    and `timestamp` for `ts` (run-level events such as RUN_CREATED are left out)."""
    out = []
    for line in Path(path).read_text().splitlines():
        event = json.loads(line)
        if event["type"] in _SHORT:
            out.append({**event, "type": _SHORT[event["type"]], "timestamp": event["ts"]})
    return out
