"""Build and pull output as whole lines, none torn between two reads, without the legacy builder's notice."""

from __future__ import annotations

from .base import LineSink

__all__ = ["BuildLines", "LineSplitter"]

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
