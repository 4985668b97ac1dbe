"""A run's event log, `events.ndjson`: one JSON object per line, chained by sha256.

Every event has `eventId, ts, type, runId, traceId, spanId, parentSpanId?, prevHash, hash` and
what it is about (`phase`, `suite`, `case`, `status`, `duration`, `name`, `message`). `hash` is the
sha256 (hex) of the event's canonical JSON without `hash` (keys sorted, no spaces, UTF-8), which
includes `prevHash`, the hash of the line before (64 zeros for the first): changing, dropping or
reordering a line breaks every hash after it. A case's CASE_STARTED and its CASE_FINISHED or
CASE_FAILED share one `spanId`, whose parent is its suite's span, whose parent is the run's.

Events are collected as they happen and appended to the file in batches (by the run's heartbeat
and at its end) under an exclusive `flock`, flushed each time: cheap enough for thousands of
cases, and a running run's log is readable from another process within a second.
"""

from __future__ import annotations

import fcntl
import hashlib
import random
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from preflight_sdk.core.redaction import Redactor

__all__ = ["GENESIS", "Event", "EventLog", "event_hash"]

GENESIS = "0" * 64


class Event(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One line of events.ndjson."""

    event_id: str
    ts: str
    type: str
    run_id: str
    trace_id: str
    span_id: str
    prev_hash: str
    hash: str = ""
    parent_span_id: str | None = None
    phase: str | None = None
    suite: str | None = None
    case: str | None = None
    status: str | None = None
    duration: int | None = None
    name: str | None = None
    message: str | None = None


_canonical = msgspec.json.Encoder(order="sorted")


def event_hash(event: Event) -> str:
    """The sha256 of `event`'s canonical JSON without its `hash` field."""
    unhashed = msgspec.structs.replace(event, hash="")
    return hashlib.sha256(_canonical.encode(unhashed)).hexdigest()


class EventLog:
    """The events of one run: `record` on the loop (cheap), `flush` in a worker thread (writes)."""

    def __init__(self, run_id: str, trace_id: str, run_span: str, parent_span: str | None) -> None:
        self.run_id = run_id
        self.trace_id = trace_id
        self.run_span = run_span
        self.parent_span = parent_span
        self.path: Path | None = None
        # Recorded, not yet chained: each event's time is formatted, and its id and hashes set, then.
        self._pending: list[tuple[float, Event]] = []
        self._written: list[Event] = []
        self._last_hash = GENESIS
        self._count = 0
        self._lock = threading.Lock()
        self._suite_spans: dict[str, str] = {}
        self._case_spans: dict[str, str] = {}
        # Set once the project is loaded: every name and message recorded after is redacted.
        self.redactor: Redactor | None = None

    def suite_span(self, suite: str) -> str:
        """The span of a suite in this run (made on first use)."""
        span = self._suite_spans.get(suite)
        if span is None:
            span = self._suite_spans[suite] = _span()
        return span

    def case_span(self, case: str) -> str:
        """The span of a case in this run (made on first use; shared by its start and end)."""
        span = self._case_spans.get(case)
        if span is None:
            span = self._case_spans[case] = _span()
        return span

    def record(
        self,
        type: str,
        *,
        suite: str | None = None,
        case: str | None = None,
        at: datetime | None = None,
        phase: str | None = None,
        status: str | None = None,
        duration: int | None = None,
        name: str | None = None,
        message: str | None = None,
    ) -> None:
        """Record an event of the run (or of `suite`, or of `case` within it) at `at` (default now)."""
        parent: str | None
        if case is not None:
            span, parent = self.case_span(case), (self.suite_span(suite) if suite else self.run_span)
        elif suite is not None:
            span, parent = self.suite_span(suite), self.run_span
        else:
            span, parent = self.run_span, self.parent_span
        stamp = at.timestamp() if at is not None else time.time()
        if self.redactor is not None:
            name = self.redactor.text(name) if name else name
            message = self.redactor.text(message) if message else message
        pending = Event(
            event_id="", ts="", type=type, run_id=self.run_id, trace_id=self.trace_id, span_id=span,
            parent_span_id=parent, prev_hash="", suite=suite, case=case, phase=phase, status=status,
            duration=duration, name=name, message=message,
        )  # fmt: skip
        with self._lock:
            self._pending.append((stamp, pending))

    @property
    def events(self) -> list[Event]:
        """Every event written so far (chained)."""
        with self._lock:
            return list(self._written)

    def chain(self) -> list[Event]:
        """Chain the pending events (without writing them) and return them."""
        with self._lock:
            return self._chain_locked()

    def _chain_locked(self) -> list[Event]:
        pending, self._pending = self._pending, []
        chained: list[Event] = []
        previous = self._last_hash
        for stamp, item in pending:
            self._count += 1
            event = msgspec.structs.replace(
                item, event_id=f"{self.run_id}-{self._count:06d}", ts=_stamp(stamp), prev_hash=previous
            )
            previous = event_hash(event)
            chained.append(msgspec.structs.replace(event, hash=previous))
        self._last_hash = previous
        self._written.extend(chained)
        return chained

    def flush(self) -> None:
        """Append the pending events to `path` (blocking; locked and flushed). No-op without a path."""
        with self._lock:
            if self.path is None or not self._pending:
                return
            chained = self._chain_locked()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = b"".join(msgspec.json.encode(e) + b"\n" for e in chained)
            with open(self.path, "ab") as out:
                fcntl.flock(out, fcntl.LOCK_EX)
                try:
                    out.write(data)
                    out.flush()
                finally:
                    fcntl.flock(out, fcntl.LOCK_UN)


def _stamp(moment: float) -> str:
    """ISO 8601 in UTC with milliseconds: `2026-11-24T21:49:53.123Z`."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _span() -> str:
    # Span ids need to be unique within a trace, not secret: a PRNG costs no system call per case.
    return f"{random.getrandbits(64) or 1:016x}"
