"""Answer what the MCP SDK's stdio transport cannot parse, instead of staying silent.

The transport turns a line that is not a JSON-RPC message into an exception on the read stream,
which the server drops: the client then waits forever for an answer. This wrapper answers each
such line with a JSON-RPC error (`-32700` parse error for text that is not JSON, including a lone
surrogate escape or nesting past the parser's limit; `-32600` invalid request for JSON that is not a
message, such as `[]`), with the request's id when it can be read, and logs it on stderr.
"""

from __future__ import annotations

import contextvars
import logging
import re
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

__all__ = ["AnsweringReadStream", "WrappedStream", "error_for"]

logger = logging.getLogger("preflight_sdk.faces.mcp")

_ID = re.compile(r'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_SHOWN = 120  # characters of the offending line quoted in the log


class WrappedStream:
    """A wrapper of one of the transport's streams: closing it closes the stream it wraps."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AnsweringReadStream(WrappedStream):
    """A read stream that answers malformed input itself and passes only real messages on."""

    def __init__(self, inner: Any, write: Any) -> None:
        super().__init__(inner)
        self._write = write

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message (see the SDK's context streams)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item  # type: ignore[no-any-return]
            reply, shown = error_for(item)
            logger.warning("answered a malformed message with %s: %s", reply.error.code, shown)
            try:
                await self._write.send(SessionMessage(reply))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                logger.debug("the error reply could not be sent", exc_info=True)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def error_for(exc: Exception) -> tuple[types.JSONRPCError, str]:
    """The JSON-RPC error answering the input behind `exc`, and a short description for the log."""
    errors: list[dict[str, Any]] = []
    if hasattr(exc, "errors"):
        try:
            errors = list(exc.errors())
        except Exception:  # not a pydantic error after all
            errors = []
    raw = errors[0].get("input") if errors else None
    not_json = any(e.get("type") == "json_invalid" for e in errors) or not errors
    if not_json:
        code, message = types.PARSE_ERROR, "Parse error: the message is not valid JSON"
        detail = next((str(e.get("msg")) for e in errors if e.get("type") == "json_invalid"), str(exc))
    else:
        code, message = types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message object"
        detail = str(errors[0].get("msg", exc))
    reply = types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(raw),
        error=types.ErrorData(code=code, message=f"{message} ({detail})"[:300]),
    )
    shown = repr(raw)[:_SHOWN] if raw is not None else type(exc).__name__
    return reply, f"{detail}; input {shown}"


def _request_id(raw: Any) -> int | str | None:
    """The id of the request, when it can be read from what arrived (else null, as JSON-RPC says)."""
    if isinstance(raw, dict):
        found = raw.get("id")
        return found if isinstance(found, int | str) and not isinstance(found, bool) else None
    if isinstance(raw, str):
        match = _ID.search(raw[:2000])
        if match:
            text = match.group(1)
            return int(text) if not text.startswith('"') else text[1:-1]
    return None
