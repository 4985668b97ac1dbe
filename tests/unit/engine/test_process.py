"""Whole lines from child processes: `LineSplitter`, `iter_lines` and `stream_command`."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from preflight_sdk.engine.process import LineSplitter, iter_lines, run_command, stream_command


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


class _Chunks(ByteReceiveStream):
    """A byte stream that hands out fixed chunks, then ends."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        self._chunks.clear()


@pytest.mark.anyio
async def test_iter_lines_yields_whole_lines_and_the_unterminated_tail() -> None:
    stream = _Chunks([b"#1 [inter", b"nal] load\r", b"\n#2 d\xc3", b"\xa9j\xc3\xa0 vu\n", b"exit 0"])
    assert [line async for line in iter_lines(stream)] == ["#1 [internal] load", "#2 déjà vu", "exit 0"]


_HALF_LINES = textwrap.dedent(
    """
    import sys, time

    def put(stream, data):
        stream.buffer.write(data)
        stream.buffer.flush()
        time.sleep(0.02)  # a separate pipe read for each piece

    put(sys.stdout, b"Step 1/2 : FR")
    put(sys.stderr, b"warn")
    put(sys.stdout, b"OM busybox\\r")
    put(sys.stdout, b"\\nStep 2/2 : caf\\xc3")
    put(sys.stderr, b"ing: slow\\n")
    put(sys.stdout, b"\\xa9 \\xe2\\x98")
    put(sys.stdout, b"\\x95\\n")
    put(sys.stdout, b"Successfully built")
    """
)


@pytest.mark.anyio
async def test_stream_command_hands_whole_lines_from_a_child_writing_half_lines() -> None:
    seen: list[tuple[str, str]] = []
    code = await stream_command(
        [sys.executable, "-c", _HALF_LINES], lambda stream, line: seen.append((stream, line))
    )
    assert code == 0
    assert [line for stream, line in seen if stream == "stdout"] == [
        "Step 1/2 : FROM busybox",
        "Step 2/2 : café ☕",
        "Successfully built",
    ]
    assert [line for stream, line in seen if stream == "stderr"] == ["warning: slow"]


@pytest.mark.anyio
async def test_stream_command_returns_the_exit_code() -> None:
    lines: list[str] = []
    code = await stream_command(
        [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"],
        lambda _, line: lines.append(line),
    )
    assert code == 3
    assert lines == ["boom"]


@pytest.mark.anyio
async def test_cancelling_stream_command_kills_the_child() -> None:
    pids: list[int] = []
    started = anyio.Event()

    def on_line(_: str, line: str) -> None:
        pids.append(int(line))
        started.set()

    script = "import os, time; print(os.getpid(), flush=True); time.sleep(60)"
    async with anyio.create_task_group() as tg:
        tg.start_soon(stream_command, [sys.executable, "-c", script], on_line)
        with anyio.fail_after(10):
            await started.wait()
        tg.cancel_scope.cancel()
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # killed and reaped: no such process any more


@pytest.mark.anyio
async def test_run_command_times_out_and_kills_the_child() -> None:
    begun = anyio.current_time()
    with pytest.raises(TimeoutError):
        await run_command([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.3)
    assert anyio.current_time() - begun < 5


def _gone(pid: int) -> bool:
    """Whether `pid` no longer runs (absent, or a zombie waiting for its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def _until_gone(pid: int) -> bool:
    with anyio.move_on_after(5):
        while not _gone(pid):
            await anyio.sleep(0.05)
    return _gone(pid)


@pytest.mark.anyio
async def test_run_command_kills_what_the_command_left_running_and_does_not_wait_for_it() -> None:
    # The background sleep holds the command's stdout open: without killing it, reading the
    # output to its end would wait the whole 300 s.
    with anyio.fail_after(10):
        done = await run_command(["sh", "-c", "sleep 300 & echo $!; echo done >&2"], input=b"ignored")
    pid = int(done.stdout.strip())
    assert (done.returncode, done.stderr) == (0, "done\n")
    assert await _until_gone(pid), "the leftover sleep was killed"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["timeout", "cancel"])
async def test_run_command_stopped_early_kills_the_command_and_its_children(
    tmp_path: os.PathLike[str], how: str
) -> None:
    pidfile = os.path.join(tmp_path, "pids")
    argv = ["sh", "-c", f"sleep 300 & echo $$ $! > {pidfile}; wait"]
    with anyio.fail_after(10):
        if how == "timeout":
            with pytest.raises(TimeoutError):
                await run_command(argv, timeout=0.5)
        else:
            with anyio.move_on_after(0.5):
                await run_command(argv)
    with open(pidfile) as pids:
        shell, sleeper = (int(p) for p in pids.read().split())
    assert await _until_gone(shell) and await _until_gone(sleeper)
