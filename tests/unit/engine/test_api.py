"""When the Engine API lane applies, and what it does with a socket that does not answer."""

from __future__ import annotations

import http.server
import json
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from support.stand_in_daemon import read_request, stand_in_daemon

from preflight_sdk import PreflightError
from preflight_sdk.engine.api import local_socket
from preflight_sdk.engine.base import ContainerSpec
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.engine.output import BoundedOutput, Frames
from preflight_sdk.engine.podman import PodmanLane, podman_engine
from preflight_sdk.engine.socket_lane import SocketLane, container_body
from preflight_sdk.engine.whales import CliLane


@pytest.fixture
def sock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A listening unix socket named by DOCKER_HOST (nothing answers on it)."""
    path = tmp_path / "docker.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    monkeypatch.delenv("PREFLIGHT_DOCKER_API", raising=False)
    yield path
    server.close()


def test_the_lane_applies_to_the_stock_client_on_a_local_socket_only(
    sock: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert local_socket(None, None) == str(sock)
    engine = DockerEngine()
    assert isinstance(engine.lane, SocketLane) and engine.lane.api.path == str(sock)
    # A client given by path (a stand-in, another build of docker) and Podman get every call.
    assert isinstance(DockerEngine("/usr/local/bin/docker").lane, CliLane)
    assert isinstance(podman_engine().lane, PodmanLane)
    # Engines elsewhere keep the CLI.
    assert local_socket("tcp://192.0.2.2:2375", None) is None
    assert local_socket("ssh://root@192.0.2.2", None) is None
    assert local_socket(None, "remote") is None
    # A socket that is not there: the CLI, which says so in its own words.
    assert local_socket(f"unix://{tmp_path}/absent.sock", None) is None
    monkeypatch.setenv("PREFLIGHT_DOCKER_API", "0")
    assert local_socket(None, None) is None and isinstance(DockerEngine().lane, CliLane)


@pytest.mark.anyio
async def test_a_socket_that_does_not_answer_is_a_retryable_docker_error(tmp_path: Path) -> None:
    refused = tmp_path / "refused.sock"
    refused.write_text("")  # a file, not a socket: connecting is refused
    with pytest.raises(PreflightError) as caught:
        await SocketLane(str(refused)).listed_containers({"preflight.root": "/x"})
    assert caught.value.code == "DOCKER_ERROR" and caught.value.retryable
    assert "not reachable" in caught.value.message and caught.value.hint
    assert str(refused) in caught.value.message


def test_the_create_body_says_what_docker_run_would() -> None:
    plain = container_body(ContainerSpec(name="a", image="img", network="n"))
    # No command and no entrypoint: the image's own are kept.
    assert "Cmd" not in plain and "Entrypoint" not in plain and "Healthcheck" not in plain
    assert plain["NetworkingConfig"] == {"EndpointsConfig": {"n": {"Aliases": []}}}
    assert plain["HostConfig"]["NetworkMode"] == "n" and "Init" not in plain["HostConfig"]
    # `--entrypoint ''` resets the image's entrypoint.
    reset = container_body(ContainerSpec(name="a", image="img", network="n", entrypoint="", command=["x"]))
    assert reset["Entrypoint"] == [""] and reset["Cmd"] == ["x"]


@pytest.mark.anyio
async def test_a_daemon_that_goes_away_mid_stream_is_a_docker_error(tmp_path: Path) -> None:
    # A stand-in daemon: it starts a chunked answer to the events request, then hangs up.
    path = tmp_path / "dies.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()

    def answer_then_hang_up() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        conn.sendall(b'10\r\n{"id": "abc"}\n\n\r\n')  # one event, 16 bytes
        conn.close()

    thread = threading.Thread(target=answer_then_hang_up)
    thread.start()
    seen: list[str] = []
    with pytest.raises(PreflightError) as caught:
        async for died in SocketLane(str(path)).deaths({}, None):
            seen.append(died)
    await anyio.to_thread.run_sync(thread.join)
    assert seen == ["abc"]
    server.close()
    assert caught.value.code == "DOCKER_ERROR" and caught.value.retryable


def _frame(stream: int, payload: bytes) -> bytes:
    return struct.pack(">BxxxL", stream, len(payload)) + payload


def test_frames_come_apart_however_the_reads_split_them() -> None:
    wire = (
        _frame(1, b"out\n")
        + _frame(2, b"err\n")
        + _frame(1, b"")
        + _frame(3, b"daemon")
        + _frame(1, b"x" * 70)
    )
    whole = Frames().feed(wire)
    assert whole == [(1, b"out\n"), (2, b"err\n"), (3, b"daemon"), (1, b"x" * 70)]
    # Every split point, then one byte per read: a header or a payload across reads.
    for cut in range(1, len(wire)):
        frames = Frames()
        pieces = frames.feed(wire[:cut]) + frames.feed(wire[cut:])
        assert _joined(pieces) == _joined(whole), cut
        assert not frames.cut
    frames = Frames()
    bytewise = [piece for i in range(len(wire)) for piece in frames.feed(wire[i : i + 1])]
    assert _joined(bytewise) == _joined(whole)


def _joined(pieces: list[tuple[int, bytes]]) -> dict[int, bytes]:
    joined: dict[int, bytes] = {}
    for stream, piece in pieces:
        joined[stream] = joined.get(stream, b"") + piece
    return joined


def test_a_stream_that_stops_inside_a_frame_is_cut() -> None:
    wire = _frame(1, b"hello")
    for end in (3, 8, 10):  # in the header, at the payload's start, in the payload
        frames = Frames()
        frames.feed(wire[:end])
        assert frames.cut, end
    frames = Frames()
    frames.feed(wire)
    assert not frames.cut


def test_bounded_output_keeps_the_start_and_the_end() -> None:
    small = BoundedOutput(limit=100)
    small.add(b"a" * 60)
    small.add(b"b" * 40)
    assert small.text() == "a" * 60 + "b" * 40 and small.dropped == 0
    big = BoundedOutput(limit=100)
    for i in range(1000):
        big.add(f"{i:04d}\n".encode())
    text = big.text()
    head, marker, tail = text.partition("\n… [")
    assert head == "".join(f"{i:04d}\n" for i in range(10))  # the first 50 bytes
    assert tail.endswith("".join(f"{i:04d}\n" for i in range(990, 1000)))  # the last 50
    assert marker and "[4900 bytes not kept]" in text
    # One piece bigger than the whole limit.
    one = BoundedOutput(limit=10)
    one.add(b"0123456789abcdefghij")
    assert one.text() == "01234\n… [10 bytes not kept] …\nfghij"


@pytest.mark.anyio
async def test_a_daemon_that_goes_away_mid_exec_is_a_retryable_docker_error(tmp_path: Path) -> None:
    created = (
        b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"Id":"e1"}\n'
    )
    stream = b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n"
    # Hung up in the middle of a frame, then before any frame and before the exit code.
    for n, (answers, said) in enumerate(
        [
            ([created, stream + _frame(1, b"partial output")[:12]], "mid-frame"),
            ([created, stream + _frame(1, b"whole\n")], "not reachable"),
        ]
    ):
        path = tmp_path / f"dies{n}.sock"
        thread = stand_in_daemon(path, answers)
        out, err = BoundedOutput(), BoundedOutput()
        with pytest.raises(PreflightError) as caught:
            await SocketLane(str(path)).exec("c1", ["true"], out, err)
        await anyio.to_thread.run_sync(thread.join)
        assert caught.value.code == "DOCKER_ERROR" and caught.value.retryable, caught.value
        assert said in caught.value.message


@pytest.mark.anyio
async def test_a_daemon_that_hangs_up_mid_answer_is_a_retryable_docker_error(tmp_path: Path) -> None:
    # It announces 100 bytes of JSON, sends 10, and hangs up.
    cut = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{"Id": "a'
    thread = stand_in_daemon(tmp_path / "cut.sock", [cut])
    with pytest.raises(PreflightError) as caught:
        await SocketLane(str(tmp_path / "cut.sock")).listed_containers({})
    await anyio.to_thread.run_sync(thread.join)
    assert caught.value.code == "DOCKER_ERROR" and caught.value.retryable
    assert "not reachable" in caught.value.message


@pytest.mark.anyio
async def test_a_cancelled_request_closes_its_connection_and_leaves_no_thread(tmp_path: Path) -> None:
    # A daemon that takes the wait and never answers: the caller gives up after 0.2 s.
    path = tmp_path / "silent.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    threads = threading.active_count()
    calls = SocketLane(str(path))
    with anyio.move_on_after(0.2) as scope:
        await calls.wait("c1")
    assert scope.cancelled_caught
    conn, _ = server.accept()
    conn.settimeout(5)
    try:
        read_request(conn)
        assert conn.recv(1) == b"", "the cancelled request's connection is still open"
    finally:
        conn.close()
        server.close()
    assert threading.active_count() <= threads  # none started (an idle worker of an earlier test may end)


class _TimedDaemon(socketserver.ThreadingUnixStreamServer):
    """A stand-in daemon on a unix socket that answers creates and starts slowly, and records
    how many of each it was serving at once."""

    daemon_threads = True

    def __init__(self, path: Path) -> None:
        self.lock = threading.Lock()
        self.busy = {"create": 0, "start": 0}
        self.most = {"create": 0, "start": 0}
        self.order: list[str] = []
        super().__init__(str(path), _TimedHandler)


class _TimedHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _TimedDaemon

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = "create" if self.path.startswith("/containers/create") else "start"
        name = self.path.split("name=")[-1] if kind == "create" else self.path.split("/")[2]
        with self.server.lock:
            self.server.busy[kind] += 1
            self.server.most[kind] = max(self.server.most[kind], self.server.busy[kind])
            self.server.order.append(f"{kind} {name}")
        time.sleep(0.03 if kind == "create" else 0.3)
        with self.server.lock:
            self.server.busy[kind] -= 1
        body = json.dumps({"Id": f"id-{name}"}).encode() if kind == "create" else b""
        self.send_response(201 if kind == "create" else 204)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_creates_go_one_at_a_time_and_each_container_starts_when_its_own_create_answers(
    tmp_path: Path,
) -> None:
    # Starts sent all at once cost the daemon more than starts spread out; creating one at a time
    # spreads them at no cost (docs/performance.md). Two event loops in a row: a lock is per loop.
    daemon = _TimedDaemon(tmp_path / "d.sock")
    thread = threading.Thread(target=daemon.serve_forever, daemon=True)
    thread.start()
    lane = SocketLane(str(tmp_path / "d.sock"))

    async def run_five(prefix: str) -> list[str]:
        ids: list[str] = []

        async def one(index: int) -> None:
            ids.append(await lane.run(ContainerSpec(name=f"{prefix}{index}", image="img", network="n")))

        async with anyio.create_task_group() as tg:
            for index in range(5):
                tg.start_soon(one, index)
        return ids

    try:
        begun = time.monotonic()
        first = anyio.run(run_five, "a")
        elapsed = time.monotonic() - begun
        second = anyio.run(run_five, "b")
    finally:
        daemon.shutdown()
        daemon.server_close()
    assert sorted(first) == [f"id-a{i}" for i in range(5)] and len(second) == 5
    assert daemon.most["create"] == 1, "two creates were sent at once"
    assert daemon.most["start"] >= 3, "the starts waited for each other"
    # Each start is sent as soon as its own create answers, not after the creates still to come.
    creates = [entry.split()[1] for entry in daemon.order if entry.startswith("create a")]
    assert daemon.order.index(f"start id-{creates[0]}") < daemon.order.index(f"create {creates[2]}")
    # Five creates of 30 ms in a row, then the last start's 300 ms: far from 5 x 330 ms.
    assert elapsed < 1.0


class _Lookups:
    """A finder that only counts the module lookups that reach it (it finds nothing)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        self.names.append(name)


def test_a_request_on_the_socket_looks_up_no_module(tmp_path: Path) -> None:
    # httpcore imports sniffio on every request to learn the async library: without it, each
    # request pays a failed import (about 0.2 ms of CPU, a third of the request).
    daemon = _TimedDaemon(tmp_path / "d.sock")
    thread = threading.Thread(target=daemon.serve_forever, daemon=True)
    thread.start()
    lane = SocketLane(str(tmp_path / "d.sock"))
    lookups = _Lookups()

    async def requests() -> None:
        await lane.run(ContainerSpec(name="warm", image="img", network="n"))  # imports made once
        sys.meta_path.insert(0, lookups)
        try:
            for index in range(3):
                await lane.run(ContainerSpec(name=f"c{index}", image="img", network="n"))
        finally:
            sys.meta_path.remove(lookups)

    try:
        anyio.run(requests)
    finally:
        daemon.shutdown()
        daemon.server_close()
    assert lookups.names == []


_PLAIN_REQUEST = """
import socket, sys, threading
import anyio
from preflight_sdk.engine.socket_lane import SocketLane

path = sys.argv[1]
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen()

def serve():
    conn, _ = server.accept()
    while b"\\r\\n\\r\\n" not in conn.recv(65536):
        pass
    # Chunked, as the daemon sends a long list: the body comes in two chunks.
    conn.sendall(
        b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n"
        b"6\\r\\n[{\\"Id\\"\\r\\n8\\r\\n: \\"a1\\"}]\\r\\n0\\r\\n\\r\\n"
    )
    conn.close()

threading.Thread(target=serve, daemon=True).start()
listed = anyio.run(SocketLane(path).listed_containers, {})
print([item.id for item in listed], "httpx" in sys.modules)
"""


def test_a_plain_request_reads_a_chunked_answer_without_importing_httpx(tmp_path: Path) -> None:
    # httpx (with httpcore) is a quarter of a second of a CLI process; a list or an inspect, all
    # that `preflight status` asks the daemon, needs only h11.
    done = subprocess.run(
        [sys.executable, "-c", _PLAIN_REQUEST, str(tmp_path / "d.sock")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['a1']", "False"]
