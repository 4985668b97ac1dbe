"""A stand-in Docker daemon on a unix socket: each connection gets the next canned answer, then a
hang-up (the Engine API lane's error and cut-connection cases, without a real daemon)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path


def read_request(conn: socket.socket) -> None:
    """Read one request to its end (headers, then the body its Content-Length announces)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        body += conn.recv(65536)


def stand_in_daemon(path: Path, answers: list[bytes]) -> threading.Thread:
    """A daemon on `path` that answers each request with the next of `answers`, then hangs up."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()

    def serve() -> None:
        for answer in answers:
            conn, _ = server.accept()
            conn.settimeout(5)  # a request that never ends fails the test instead of hanging it
            read_request(conn)
            conn.sendall(answer)
            conn.close()
        server.close()

    thread = threading.Thread(target=serve)
    thread.start()
    return thread
