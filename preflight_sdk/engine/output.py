"""What the engine keeps of the output of what it runs, on every lane.

- Build and pull output as whole lines, none torn between two reads, without the legacy
  builder's notice (`LineSplitter`, `BuildLines`).
- What `exec` keeps of a command's output: split by stream (`Frames` splits the Engine API's
  multiplexed stream), each stream bounded (`BoundedOutput`), so a command that writes gigabytes
  costs a few megabytes of memory and both lanes return the same text.
- What `docker rm` and `docker network rm` (or Podman's) of several resources did to each one
  (`removal_outcomes`): python-on-whales raises one `DockerException` when any of them fails; its
  stdout still lists what was removed and its stderr says why each other one was not.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from .base import LineSink, RemoveOutcome
from .errors import is_daemon_down, translate

__all__ = ["STDERR", "STDOUT", "BoundedOutput", "BuildLines", "Frames", "LineSplitter", "removal_outcomes"]

# Printed by the docker CLI (23+) before every legacy build, and nothing about the project's build:
# this line, two indented ones ("BuildKit is currently disabled; ..." or "Install the buildx
# component ...") and an empty line. Those lines are dropped.
_NOTICE = "DEPRECATED: The legacy builder is deprecated"


class LineSplitter:
    """Accumulate bytes and hand out complete lines (CR LF, LF and lone CR all end a line).

    A CR LF torn between two chunks ends one line, not two: a chunk that ends with CR hands its
    line out at once and the LF that may open the next chunk is then skipped.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._after_cr = False

    def feed(self, chunk: bytes) -> list[str]:
        """Add `chunk`; return the lines it completed."""
        if not chunk:
            return []
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the second half of a CR LF whose CR ended the previous chunk
        self._after_cr = chunk.endswith(b"\r")
        self._buffer += chunk
        if b"\n" not in chunk and b"\r" not in chunk:
            return []  # the buffer holds no line end either: nothing completed
        *complete, self._buffer = self._buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return [line.decode("utf-8", "replace") for line in complete]

    def flush(self) -> list[str]:
        """Return the last, unterminated line (if any)."""
        rest, self._buffer = self._buffer, b""
        self._after_cr = False
        return [rest.decode("utf-8", "replace")] if rest else []


class BuildLines:
    """Split python-on-whales' output pieces into whole lines (CR, LF and CR LF end one) for a sink,
    keeping the last `tail` lines for an error message."""

    def __init__(self, sink: LineSink, *, tail: int, legacy: bool = False) -> None:
        self._sink = sink
        self._keep = tail
        self._splitters: dict[str, LineSplitter] = {}
        self._in_notice: set[str] = set()  # the streams inside the notice
        self._legacy = legacy
        self.tail: list[str] = []
        self.last_error: str | None = None  # the last line on stderr: the build's own complaint

    def feed(self, raw: bytes, source: str = "stdout") -> None:
        """Take one piece of output (a line, usually, with its newline)."""
        splitter = self._splitters.setdefault(source, LineSplitter())
        for line in splitter.feed(raw):
            self._line(line, source)

    def flush(self) -> None:
        """Hand out what is left without a final newline."""
        for source, splitter in self._splitters.items():
            for line in splitter.flush():
                self._line(line, source)

    def _line(self, line: str, source: str) -> None:
        if self._legacy and self._skip(line, source):
            return
        self.tail.append(line)
        del self.tail[: -self._keep]
        if source == "stderr" and line.strip():
            self.last_error = line
        self._sink(line)

    def _skip(self, line: str, source: str) -> bool:
        if line.startswith(_NOTICE):
            self._in_notice.add(source)
            return True
        if source in self._in_notice:
            if line.startswith(" ") and line.strip():
                return True
            self._in_notice.discard(source)
            return not line.strip()  # the empty line that ends the notice
        return False


# -- exec output ------------------------------------------------------------------------------

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


# -- removals of several resources -------------------------------------------------------------

# The daemon's words for a resource that is already gone: "No such container: <id>",
# "Error: No such network: <name>" (docker 20.10) and "network <name> not found" (docker 24+).
_MISSING = ("No such container", "No such network", "not found")


def removal_outcomes(
    refs: Sequence[str],
    stdout: str,
    stderr: str,
    returncode: int,
    *,
    action: str,
    unnamed_missing: bool = False,
) -> list[RemoveOutcome]:
    """Return one truthful outcome per ref; raise `DOCKER_ERROR` when the daemon is unreachable.

    With `unnamed_missing` (`podman rm --ignore`), a ref neither printed nor named by an error was
    not there.
    """
    removed = {line.strip() for line in stdout.splitlines() if line.strip()}
    errors = [line for line in stderr.splitlines() if line.strip()]
    if any(is_daemon_down(line) for line in errors):
        raise translate(stderr, action=action)

    def outcome(ref: str) -> RemoveOutcome:
        mine = [line for line in errors if ref in line]
        if ref in removed or (not mine and not unnamed_missing and returncode == 0):
            return RemoveOutcome(ref=ref, action="removed")
        if any(gone in line for line in mine for gone in _MISSING) or (not mine and unnamed_missing):
            return RemoveOutcome(ref=ref, action="not_found")
        error = mine[0].removeprefix("Error response from daemon: ").removeprefix("Error: ") if mine else None
        return RemoveOutcome(
            ref=ref, action="failed", error=error or (errors[0] if errors else "docker rm failed")
        )

    return [outcome(ref) for ref in refs]
