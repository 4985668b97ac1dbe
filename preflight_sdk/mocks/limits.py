"""What a mock accepts from a client: a body-size limit and a deadline for the request head.

Without them one client can hold a mock's memory (an endless body) or its connections (headers
sent a byte at a time). Both are per mock (`maxBodyBytes`, `headerTimeout` in e2e.yaml).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_MAX_BODY", "protocol_with_header_deadline"]

DEFAULT_MAX_BODY = 10 * 1024 * 1024
DEFAULT_HEADER_TIMEOUT = 10.0


def protocol_with_header_deadline(seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, closing a connection whose request head takes longer than `seconds`."""

    class HeadDeadlineProtocol(HttpToolsProtocol):
        _head_timer: Any = None  # the loop's TimerHandle while the head is awaited

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._head_timer is None:
                self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._head_timer = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _too_slow(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    return HeadDeadlineProtocol
