"""A raw socket HTTP server that answers each connection with scripted bytes.

Each framing case is then exactly what a real server can send, byte for byte; `seen` keeps every
request head and body as it arrived.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Callable, Iterator

import pytest

Script = Callable[[socket.socket, bytes], None]
RawServer = Callable[[Script], str]


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def read_request(sock: socket.socket, data: bytes = b"") -> bytes:
    """Read until one whole request (its head, and a body as long as its Content-Length) is in."""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.fixture
def raw_server() -> Iterator[RawServer]:
    """`raw_server(script)` serves each connection with `script(sock, first_request_head)`; returns its URL."""
    servers: list[_Server] = []

    def start(script: Script) -> str:
        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                script(sock, data)

        server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
