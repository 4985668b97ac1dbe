"""A container's output made readable in a few lines: colours dropped, repeats folded, the start
kept, and the line that says why it stopped found.

A service that fails its health check has often printed its start-up lines and then one access
line per probe (`GET /health 404`, tens a second): a plain tail shows thirty copies of that line
and none of the start-up. `excerpt` folds each run of similar lines (equal once digits are
masked: timestamps, ports, counts) into its first and last with a count between, then keeps the
first lines and the last. `cause` picks what a one-line summary should quote: the last line of a
Python traceback first (`ModuleNotFoundError: No module named 'psycopg'`), then the last other
line that says something, never a blank one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["cause", "excerpt", "fold_repeats", "plain", "uncoloured"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_DIGITS = re.compile(r"\d+")
_STREAM = re.compile(r"^(?:stderr|stdout): ?")
_FOLD = re.compile(r"^… \d+ more lines? like (?:this|these) …$|^… \d+ lines? between …$")
_TRACEBACK = "Traceback (most recent call last):"
_SUMMARY_LIMIT = 240


def uncoloured(text: str) -> str:
    """`text` without terminal colour and cursor codes (the escape sequences a logger writes to a tty)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def plain(text: str) -> str:
    """`text` without terminal colour and cursor codes, and with no trailing white space."""
    return uncoloured(text).rstrip()


def _shape(line: str) -> str:
    return _DIGITS.sub("#", line)


def fold_repeats(lines: Sequence[str], *, at_least: int = 3, widest: int = 4) -> list[str]:
    """Fold each run of `at_least` or more similar lines (or blocks of up to `widest` lines: a
    server may write two lines a request) into its first, a count, and its last."""
    shapes = [_shape(line) for line in lines]
    folded: list[str] = []
    index = 0
    while index < len(lines):
        width, times = _repeat_at(shapes, index, at_least, widest)
        if times < at_least:
            folded.append(lines[index])
            index += 1
            continue
        between = (times - 2) * width
        end = index + times * width
        folded += [
            *lines[index : index + width],
            f"… {between} more line{'s' if between > 1 else ''} like these …",
        ]
        folded += lines[end - width : end]
        index = end
    return folded


def _repeat_at(shapes: Sequence[str], index: int, at_least: int, widest: int) -> tuple[int, int]:
    """The narrowest block starting at `index` that repeats `at_least` times, and how many times it does."""
    for width in range(1, widest + 1):
        block = shapes[index : index + width]
        times = 1
        while shapes[index + times * width : index + (times + 1) * width] == block:
            times += 1
        if times >= at_least and len(block) == width:
            return width, times
    return 1, 1


def excerpt(lines: Sequence[str], *, limit: int = 30, head: int = 8) -> list[str]:
    """At most `limit` lines of `lines`: colours dropped, repeats folded, the first `head` and the rest from the end."""
    folded = fold_repeats([plain(line) for line in lines])
    if len(folded) <= limit:
        return folded
    tail = limit - head - 1
    skipped = len(folded) - head - tail
    return [*folded[:head], f"… {skipped} line{'s' if skipped > 1 else ''} between …", *folded[-tail:]]


def _meaningful(line: str) -> str:
    text = _STREAM.sub("", plain(line)).strip()
    return "" if _FOLD.match(text) or not any(ch.isalnum() for ch in text) else text


def cause(lines: Sequence[str]) -> str | None:
    """What a one-line summary quotes from `lines`: a traceback's last line first, then the last other
    meaningful line (None when no line says anything)."""
    texts = [_meaningful(line) for line in lines]
    said = [text for text in texts if text]
    if not said:
        return None
    quoted: list[str] = []
    start = max((i for i, text in enumerate(texts) if text == _TRACEBACK), default=None)
    if start is not None:
        # The exception is the first line after the traceback's header that is not indented.
        for raw, text in zip(lines[start + 1 :], texts[start + 1 :], strict=True):
            body = _STREAM.sub("", plain(raw))
            if text and not body.startswith((" ", "\t")):
                quoted.append(text)
                break
    last = said[-1]
    if last not in quoted:
        quoted.append(last)
    summary = " … ".join(quoted)
    return summary if len(summary) <= _SUMMARY_LIMIT else summary[: _SUMMARY_LIMIT - 1] + "…"
