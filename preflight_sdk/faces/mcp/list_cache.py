"""`tools/list` answered from its wire form, encoded once.

The list never changes while the server runs, yet the SDK would validate the whole result on every
request, and pydantic would walk its 60 kB again to write every answer (about 150 µs). `ListCache`
keeps the answer the SDK made the first time (per protocol version) with its JSON text, and on the
stdio transport `EncodedWriteStream` writes that text instead of serialising the answer again.

The text escapes non-ASCII characters: one `…` in a description would make every client decode the
whole answer as wide text (measured: `json.loads` 1.5x slower).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.message import SessionMessage
from pydantic import PrivateAttr

from .wire_guard import WrappedStream

__all__ = ["EncodedResponse", "EncodedWriteStream", "ListCache"]

logger = logging.getLogger("preflight_sdk.faces.mcp")


class ListCache:
    """The `tools/list` answers served so far, by protocol version, with their JSON text."""

    def __init__(self) -> None:
        self._answers: dict[str, tuple[dict[str, Any], str | None]] = {}

    async def middleware(self, ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """Answer `tools/list` from the cache; the first request of a protocol version fills it."""
        params = ctx.params or {}
        if ctx.method != "tools/list" or params.get("cursor"):
            return await call_next(ctx)
        cached = self._answers.get(ctx.protocol_version)
        if cached is None:
            answer = await call_next(ctx)
            if not isinstance(answer, dict):
                return answer
            cached = self._answers[ctx.protocol_version] = (answer, _encode(answer))
        # A fresh top level per response (the pipeline may set keys on it); the tools inside are
        # only ever read.
        return dict(cached[0])

    def text_of(self, result: Mapping[str, Any]) -> str | None:
        """The JSON text of `result` when it is a cached answer as the cache returned it, else None."""
        for answer, text in self._answers.values():
            if (
                text is not None
                and result.keys() == answer.keys()
                and all(result[k] is answer[k] for k in answer)
            ):
                return text
        return None


def _encode(answer: dict[str, Any]) -> str | None:
    try:
        return json.dumps(answer, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # not plain JSON data after all: the SDK writes it as usual
        logger.debug("the tools/list answer is written without its cached text", exc_info=True)
        return None


class EncodedResponse(types.JSONRPCResponse):
    """A response whose `result` is already JSON text: written without walking the result again."""

    _text: str = PrivateAttr(default="{}")

    @classmethod
    def of(cls, response: types.JSONRPCResponse, text: str) -> EncodedResponse:
        """`response` (whose result `text` encodes) as an encoded response."""
        encoded = cls.model_construct(jsonrpc="2.0", id=response.id, result=response.result)
        encoded._text = text
        return encoded

    def model_dump_json(self, **_: Any) -> str:
        """The response as one line of JSON (the transport passes only `by_alias` and `exclude_unset`,
        which change nothing here)."""
        return f'{{"jsonrpc":"2.0","id":{json.dumps(self.id)},"result":{self._text}}}'


class EncodedWriteStream(WrappedStream):
    """The transport's write stream, sending a cached `tools/list` answer as its encoded text."""

    def __init__(self, inner: Any, cache: ListCache) -> None:
        super().__init__(inner)
        self._cache = cache

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCResponse) and not isinstance(message, EncodedResponse):
            text = self._cache.text_of(message.result)
            if text is not None:
                item = SessionMessage(EncodedResponse.of(message, text), metadata=item.metadata)
        await self._inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
