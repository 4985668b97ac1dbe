"""Whole lines from output read in pieces: `LineSplitter`."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from preflight_sdk.engine.output import LineSplitter


def _split(chunks: Sequence[bytes]) -> list[str]:
    splitter = LineSplitter()
    lines: list[str] = []
    for chunk in chunks:
        lines += splitter.feed(chunk)
    return lines + splitter.flush()


def _every_cut(data: bytes) -> list[list[bytes]]:
    """`data` cut in two at every byte position."""
    return [[data[:cut], data[cut:]] for cut in range(len(data) + 1)]


def test_a_line_split_across_chunks_comes_out_whole() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"Step 1/3 : FR") == []
    assert splitter.feed(b"OM scr") == []
    assert splitter.feed(b"atch\nStep 2/3") == ["Step 1/3 : FROM scratch"]
    assert splitter.feed(b" : RUN true\n") == ["Step 2/3 : RUN true"]
    assert splitter.flush() == []


def test_crlf_lf_and_a_lone_cr_each_end_one_line() -> None:
    assert _split([b"a\r\nb\nc\rd\r\n"]) == ["a", "b", "c", "d"]
    # Empty lines stay (one per terminator), whatever the terminator.
    assert _split([b"a\n\nb\r\n\r\nc\r\rd\n"]) == ["a", "", "b", "", "c", "", "d"]


@pytest.mark.parametrize("chunks", _every_cut(b"one\r\ntwo\r\n\r\nthree\rfour\n"))
def test_a_crlf_torn_between_chunks_ends_one_line_not_two(chunks: list[bytes]) -> None:
    assert _split(chunks) == ["one", "two", "", "three", "four"]


def test_a_crlf_whose_halves_come_one_byte_at_a_time() -> None:
    data = b"progress 50%\rprogress 100%\r\ndone\r\n"
    assert _split([data[i : i + 1] for i in range(len(data))]) == ["progress 50%", "progress 100%", "done"]


def test_the_last_line_without_a_newline_comes_out_on_flush() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"first\nlast, no newline") == ["first"]
    assert splitter.flush() == ["last, no newline"]
    assert splitter.flush() == [], "flush empties the buffer"
    assert _split([b"only\n"]) == ["only"], "no phantom empty line after a final newline"


@pytest.mark.parametrize("text", ["héllo wörld", "日本語のログ", "emoji 🚀 launched"])
def test_multibyte_utf8_cut_anywhere_decodes_intact(text: str) -> None:
    data = (text + "\n" + text).encode()
    for chunks in _every_cut(data):
        assert _split(chunks) == [text, text], chunks


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert _split([b"bad \xff byte\n"]) == ["bad \ufffd byte"]
