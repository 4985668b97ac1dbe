"""The request journal: every request a mock answered, bounded, thread-safe, in arrival order.

The server thread fills a cheap `Record` while it answers, then freezes it into a plain tuple of
bytes, strings and numbers and appends that. Such tuples are untracked by Python's garbage
collector, so a full journal (10,000 entries by default) adds nothing to collection pauses, which
would otherwise show up in the latency tail of every mock.

Readers on other threads (the test runner, `mock_requests`) take a snapshot under a lock, put it
in arrival order (answers may finish out of order) and turn entries into `RecordedRequest`
Structs; the costly parts (decoding headers, query and body, formatting times) happen there, off
the hot path. A request appears once answered; a `timeout` fault as soon as it starts hanging.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from preflight_sdk.core import decoding
from preflight_sdk.core.results.mocks import ClosestRoute, MockAnswer, RecordedRequest

from .request import RequestView, parse_body, parse_headers, parse_query

__all__ = ["BODY_KEEP_LIMIT", "Journal", "Record", "iso_time", "to_entry"]

BODY_KEEP_LIMIT = 256 * 1024
"""Bytes of a body the journal keeps; larger bodies are cut (`bodyTruncated`), the size is kept."""

Frozen = tuple[Any, ...]
"""A journal entry as stored (see `Record.freeze`)."""


def iso_time(epoch: float) -> str:
    """Return `epoch` (seconds) as ISO 8601 UTC with milliseconds: `2026-11-22T10:00:00.123Z`."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Record:
    """A request being answered; `freeze()` turns it into the stored tuple."""

    __slots__ = (
        "answer_body",
        "answer_head",
        "answer_size",
        "body",
        "body_size",
        "closest",
        "duration",
        "epoch",
        "error",
        "fault",
        "params",
        "proxied_to",
        "request",
        "route_index",
        "route_label",
        "route_recorded",
        "scheme",
        "sequence_step",
        "server",
        "status",
    )

    def __init__(self, request: RequestView, server: Sequence[Any] | None, epoch: float) -> None:
        self.epoch = epoch
        self.request = request  # `freeze` keeps its method, path, query and headers
        self.server = server
        self.body = b""
        self.body_size = 0
        self.status: int | None = None
        self.route_index: int | None = None
        self.route_label: str | None = None
        self.route_recorded: str | None = None  # when the route that answered was recorded
        self.scheme = "http"
        self.params: dict[str, str] | None = None
        self.fault: str | None = None
        self.proxied_to: str | None = None
        self.error: str | None = None
        self.duration: float | None = None
        # Why no route matched (a 404 only): the JSON list the answer carries as `closestRoutes`,
        # kept encoded so the entry stays flat; b"" for every other request.
        self.closest = b""
        # What the mock answered: its headers (wire list), body (first BODY_KEEP_LIMIT bytes), size.
        self.answer_head: Sequence[tuple[bytes, bytes]] = ()
        self.answer_body = b""
        self.answer_size = 0
        self.sequence_step: int | None = None

    def set_body(self, body: bytes) -> None:
        """Keep the body (its first `BODY_KEEP_LIMIT` bytes) and its full size."""
        self.body_size = len(body)
        self.body = body if len(body) <= BODY_KEEP_LIMIT else body[:BODY_KEEP_LIMIT]

    def set_answer(self, head: Sequence[tuple[bytes, bytes]], body: bytes) -> None:
        """Keep what the mock sent back (the body's first `BODY_KEEP_LIMIT` bytes)."""
        self.answer_head = head
        self.answer_size = len(body)
        self.answer_body = body if len(body) <= BODY_KEEP_LIMIT else body[:BODY_KEEP_LIMIT]

    def freeze(self) -> Frozen:
        """Return the record as a flat tuple of atomic values (see the module docstring).

        Nested containers would keep the tuple tracked by the garbage collector until several
        full collections have passed, so headers are stored as their wire form (`name:value`
        lines, which cannot hold a CR LF), parameters and near misses as JSON and the server as
        `host:port`.
        """
        server, request = self.server, self.request
        return (
            self.epoch,
            request.method,
            request.path,
            request.query_string,
            b"\r\n".join([name + b":" + value for name, value in request.raw_headers]),
            f"{server[0]}:{server[1]}" if server else "",
            self.body,
            self.body_size,
            self.status,
            self.route_index,
            self.route_label,
            msgspec.json.encode(self.params) if self.params else b"",
            self.fault,
            self.proxied_to,
            self.error,
            self.duration,
            self.closest,
            b"\r\n".join([name + b":" + value for name, value in self.answer_head]),
            self.answer_body,
            self.answer_size,
            self.sequence_step,
            self.route_recorded,
            self.scheme,
        )


_EPOCH = 0


def _headers(wire: bytes) -> list[tuple[bytes, bytes]]:
    pairs = []
    for line in wire.split(b"\r\n") if wire else []:
        name, _, value = line.partition(b":")
        pairs.append((name, value))
    return pairs


def to_entry(frozen: Frozen) -> RecordedRequest:
    """Return the journal entry of a stored tuple."""
    (epoch, method, path, query_string, wire, server, body, body_size, status, route_index, route_label,
     params, fault, proxied_to, error, duration, closest, answer_wire, answer_body, answer_size,
     sequence_step, route_recorded, scheme) = frozen  # fmt: skip
    headers = parse_headers(_headers(wire))
    parsed = parse_body(body, headers.get("content-type"))
    host = headers.get("host") or server or "localhost"
    query = query_string.decode("latin-1")
    return RecordedRequest(
        method=method,
        url=f"{scheme}://{host}{path}" + (f"?{query}" if query else ""),
        path=path,
        query=parse_query(query_string),
        headers=headers,
        body=parsed.value,
        body_encoding=parsed.encoding,  # type: ignore[arg-type]
        body_note=parsed.note,
        form=parsed.form,
        body_size=body_size,
        body_truncated=body_size > len(body) or parsed.cut,
        matched_route=route_label,
        route_recorded=route_recorded,
        closest_routes=decoding.decode(closest, list[ClosestRoute]) if closest else None,
        route_index=route_index,
        params=msgspec.json.decode(params) if params else None,
        status=status,
        fault=fault,
        proxied_to=proxied_to,
        error=error,
        timestamp=iso_time(epoch),
        epoch_ms=int(epoch * 1000),
        duration_ms=None if duration is None else round(duration * 1000, 3),
        sequence_step=sequence_step,
        response=None if status is None else _answer(status, answer_wire, answer_body, answer_size),
    )


def _answer(status: int, wire: bytes, body: bytes, size: int) -> MockAnswer:
    headers = parse_headers(_headers(wire))
    parsed = parse_body(body, headers.get("content-type"))
    return MockAnswer(
        status=status,
        headers=headers,
        body=parsed.value,
        body_encoding=parsed.encoding,  # type: ignore[arg-type]
        body_size=size,
        body_truncated=size > len(body) or parsed.cut,
    )


def _epoch(frozen: Frozen) -> float:
    return float(frozen[_EPOCH])


class Journal:
    """The last `limit` entries of one mock, with counts of those received and dropped."""

    def __init__(self, limit: int = 10_000) -> None:
        self._lock = threading.Lock()
        self._entries: deque[Frozen] = deque(maxlen=limit)
        self._limit = limit
        self._dropped = 0
        self._received = 0

    def arrived(self) -> None:
        """Count a request as it arrives."""
        with self._lock:
            self._received += 1

    def append(self, record: Record) -> None:
        """Store a finished record; the oldest entry goes when the journal is full."""
        frozen = record.freeze()
        with self._lock:
            if len(self._entries) == self._limit:
                self._dropped += 1
            self._entries.append(frozen)

    @property
    def received(self) -> int:
        """Requests received since start, reset or clear (in flight and dropped ones included)."""
        return self._received

    @property
    def dropped(self) -> int:
        """Entries discarded because the journal was full."""
        return self._dropped

    def __len__(self) -> int:
        return len(self._entries)

    def snapshot(self, since_epoch: float | None = None, *, clear: bool = False) -> tuple[list[Frozen], int]:
        """Return the entries that arrived at or after `since_epoch`, oldest first, and the dropped count.

        Reading and clearing happen under one lock, so a request answered meanwhile is either in
        the snapshot or stays in the journal, never lost.
        """
        with self._lock:
            entries = list(self._entries)
            dropped = self._dropped
            if clear:
                self._clear_locked()
        entries.sort(key=_epoch)  # stable, and linear on the almost sorted list
        if since_epoch is not None:
            entries = [e for e in entries if e[_EPOCH] >= since_epoch]
        return entries, dropped

    def clear(self) -> None:
        """Forget every entry and the counts."""
        with self._lock:
            self._clear_locked()

    def _clear_locked(self) -> None:
        self._entries.clear()
        self._dropped = 0
        self._received = 0
