"""What `exec` keeps of a command's output, on either lane: split by stream (`Frames` splits the
Engine API's multiplexed stream), each stream bounded (`BoundedOutput`), so a command that writes
gigabytes costs a few megabytes of memory and both lanes return the same text.
"""

from __future__ import annotations

import struct

__all__ = ["STDERR", "STDOUT", "BoundedOutput", "Frames"]

STDOUT = 1
STDERR = 2
# Bytes kept of each stream: the first half and the last half of this (what a file check reads
# is at the start, why a command failed is usually at the end).
OUTPUT_LIMIT = 8 * 1024 * 1024
_HEADER = struct.Struct(">BxxxL")  # stream (0 stdin, 1 stdout, 2 stderr, 3 the daemon's own), size


class Frames:
    """A parser of the multiplexed stream of a container without a tty, fed as the bytes arrive: frames
    of an 8-byte header (stream, three zero bytes, size as a big-endian uint32) and a payload, either
    split across reads; payloads come out in pieces as they arrive, never held whole."""

    def __init__(self) -> None:
        self._header = b""
        self._stream = STDOUT
        self._left = 0  # payload bytes of the current frame still to come

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Take the next bytes read; return the `(stream, payload piece)` pairs they complete."""
        pieces: list[tuple[int, bytes]] = []
        at = 0
        while at < len(data):
            if self._left == 0:
                needed = _HEADER.size - len(self._header)
                self._header += data[at : at + needed]
                at += needed
                if len(self._header) < _HEADER.size:
                    break
                self._stream, self._left = _HEADER.unpack(self._header)
                self._header = b""
                continue
            piece = data[at : at + self._left]
            at += len(piece)
            self._left -= len(piece)
            pieces.append((self._stream, piece))
        return pieces

    @property
    def cut(self) -> bool:
        """Whether the stream stopped inside a frame (the daemon went away mid-answer)."""
        return bool(self._header) or self._left > 0


class BoundedOutput:
    """The bytes one stream wrote: all of them up to `limit`, else the first and last `limit / 2`."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self._head_room = limit // 2
        self._tail_room = limit - limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0  # bytes written between the head and the tail, not kept

    def add(self, data: bytes) -> None:
        """Take the next bytes the stream wrote."""
        room = max(0, self._head_room - len(self._head))
        self._head += data[:room]
        self._tail += data[room:]
        # Trimmed once the tail holds twice its room, so many small writes cost no more than one big one.
        if len(self._tail) > 2 * self._tail_room:
            extra = len(self._tail) - self._tail_room
            self.dropped += extra
            del self._tail[:extra]

    def text(self) -> str:
        """The output kept, decoded as UTF-8; what was dropped is marked and counted."""
        extra = max(0, len(self._tail) - self._tail_room)
        if not self.dropped and not extra:
            return (self._head + self._tail).decode("utf-8", "replace")
        return (
            self._head.decode("utf-8", "replace")
            + f"\n… [{self.dropped + extra} bytes not kept] …\n"
            + self._tail[extra:].decode("utf-8", "replace")
        )
