"""What a recording mock keeps: each exchange it forwarded to its upstream, as the upstream answered.

The hot path of a recording mock is the proxy's, plus one `keep`: a tuple of the bytes already in
hand appended to a list. Everything costly (parsing, denoising, redacting, writing) happens once the
recording ends (see `derive` and `files`). Bounded: past `limit` exchanges or `max_bytes` of bodies
nothing more is kept, and the recording says how many were left out.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import msgspec

__all__ = ["Exchange", "Recorder"]

Head = Sequence[tuple[bytes, bytes]]


class Exchange(msgspec.Struct, frozen=True, kw_only=True):
    """One request a recording mock forwarded, and the upstream's answer, as raw as they came."""

    method: str
    path: str
    query_string: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes
    status: int
    response_headers: list[tuple[bytes, bytes]]
    response_body: bytes
    epoch: float  # when the request arrived (seconds since the epoch)


class Recorder:
    """The exchanges of one recording mock, in arrival order; safe to read from another thread."""

    def __init__(self, upstream: str, *, limit: int = 10_000, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.upstream = upstream
        self.limit = limit
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._kept: list[tuple[str, str, bytes, bytes, bytes, int, bytes, bytes, float]] = []
        self._bytes = 0
        self.left_out = 0  # exchanges over the bounds
        self.failed = 0  # requests the upstream did not answer (the mock answered 502)
        self.first_failure: str | None = None

    def keep(
        self,
        method: str,
        path: str,
        query_string: bytes,
        headers: Head,
        body: bytes,
        status: int,
        response_headers: Head,
        response_body: bytes,
        epoch: float,
    ) -> None:
        """Keep one forwarded exchange (called on the server thread)."""
        size = len(body) + len(response_body)
        # Headers as their wire text, so the kept tuple holds atomic values only and the garbage
        # collector stops tracking it (as the journal's): a long recording costs no pauses.
        sent = b"\r\n".join([name + b":" + value for name, value in headers])
        answered = b"\r\n".join([name + b":" + value for name, value in response_headers])
        with self._lock:
            if len(self._kept) >= self.limit or self._bytes + size > self.max_bytes:
                self.left_out += 1
                return
            self._bytes += size
            self._kept.append(
                (method, path, query_string, sent, body, status, answered, response_body, epoch)
            )

    def failure(self, error: str) -> None:
        """Count a request the upstream did not answer."""
        with self._lock:
            self.failed += 1
            if self.first_failure is None:
                self.first_failure = error

    def __len__(self) -> int:
        return len(self._kept)

    def exchanges(self) -> list[Exchange]:
        """Return the exchanges kept so far, oldest first (a copy: keeping goes on)."""
        with self._lock:
            kept = list(self._kept)
        kept.sort(key=lambda item: item[8])  # answers may finish out of order
        return [
            Exchange(
                method=m,
                path=p,
                query_string=q,
                headers=_pairs(h),
                body=b,
                status=s,
                response_headers=_pairs(rh),
                response_body=rb,
                epoch=e,
            )
            for m, p, q, h, b, s, rh, rb, e in kept
        ]


def _pairs(wire: bytes) -> list[tuple[bytes, bytes]]:
    if not wire:
        return []
    pairs = []
    for line in wire.split(b"\r\n"):
        name, _, value = line.partition(b":")
        pairs.append((name, value))
    return pairs
