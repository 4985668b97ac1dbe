"""A spawned `preflight-mcp` spoken to in raw JSON-RPC lines (for wire forms no SDK client sends yet)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from support.cli import BIN

# The 2026-07-28 request envelope: no handshake, each request says who it is and what it supports.
TASKS = "io.modelcontextprotocol/tasks"


def modern_meta(*, extensions: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `_meta` of a 2026-07-28 request (declaring `extensions`)."""
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-tests", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": extensions or {}},
    }


class RawMcp:
    """One `preflight-mcp --project ROOT` process; `request` sends a line and waits for its answer."""

    def __init__(self, project: Path, log: Path) -> None:
        self._log = log.open("a")
        self.process = subprocess.Popen(
            [str(BIN / "preflight-mcp"), "--project", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=dict(os.environ),
            cwd=project,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._next = 0
        self.notifications: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, method: str, params: dict[str, Any]) -> int:
        """Send a request without waiting for its answer (a stream such as subscriptions/listen); its id."""
        self._next += 1
        self._write({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self._next

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification."""
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any], *, timeout: float = 120) -> dict[str, Any]:
        """The JSON-RPC response (with `result` or `error`) to one request."""
        request_id = self.send(method, params)
        deadline = time.monotonic() + timeout
        while True:
            line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message
            self.notifications.append(message)

    def drain(self, seconds: float) -> list[dict[str, Any]]:
        """Every message that arrives in the next `seconds` (added to `notifications`); all received so far."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.notifications.append(json.loads(self._lines.get(timeout=left)))
            except queue.Empty:
                break
        return self.notifications

    def close(self) -> None:
        """Close stdin (the server cleans up and exits), or kill it after 60 s."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._release()

    def kill(self) -> None:
        """SIGKILL: the server dies without cleaning anything."""
        self.process.kill()
        self.process.wait()
        self._release()

    def _release(self) -> None:
        self._reader.join(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None and not pipe.closed:
                try:
                    pipe.close()
                except BrokenPipeError:
                    pass
        self._log.close()
