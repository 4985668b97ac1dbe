"""tools/list is answered from the cache and written as its JSON text, encoded once, in ASCII."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.shared.message import SessionMessage

from preflight_sdk.faces.mcp.list_cache import EncodedResponse, EncodedWriteStream, ListCache

pytestmark = pytest.mark.anyio

ANSWER = {
    "tools": [{"name": "t", "description": "Waits … then × retries.", "inputSchema": {"type": "object"}}]
}


def _ctx(method: str = "tools/list", version: str = "2025-11-25", cursor: str | None = None) -> Any:
    return SimpleNamespace(
        method=method, params={"cursor": cursor} if cursor else None, protocol_version=version
    )


async def test_the_list_is_made_once_per_protocol_version() -> None:
    cache, made = ListCache(), []

    async def call_next(ctx: Any) -> dict[str, Any]:
        made.append(ctx.protocol_version)
        return {"tools": list(ANSWER["tools"])}

    first = await cache.middleware(_ctx(), call_next)
    again = await cache.middleware(_ctx(), call_next)
    assert first == again == ANSWER and first is not again and first["tools"] is again["tools"]  # type: ignore[index]
    await cache.middleware(_ctx(version="2025-06-18"), call_next)
    await cache.middleware(_ctx(cursor="x"), call_next)  # a cursor is the handler's to refuse
    await cache.middleware(_ctx(method="tools/call"), call_next)
    assert made == ["2025-11-25", "2025-06-18", "2025-11-25", "2025-11-25"]


async def test_the_cached_answer_is_written_as_ascii_text_and_anything_else_as_usual() -> None:
    cache = ListCache()

    async def call_next(ctx: Any) -> dict[str, Any]:
        return dict(ANSWER)

    served = await cache.middleware(_ctx(), call_next)
    assert isinstance(served, dict)
    send, receive = anyio.create_memory_object_stream[SessionMessage](10)
    async with receive, EncodedWriteStream(send, cache) as writing:
        listed = types.JSONRPCResponse(jsonrpc="2.0", id="list-1", result=served)
        changed = types.JSONRPCResponse(jsonrpc="2.0", id=2, result={**served, "_meta": {"k": 1}})
        other = types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"tools": []})
        for message in (listed, changed, other):
            await writing.send(SessionMessage(message))
        written = [receive.receive_nowait().message for _ in range(3)]
    assert isinstance(written[0], EncodedResponse)
    line = written[0].model_dump_json(by_alias=True, exclude_unset=True)
    assert line.isascii() and "\\u2026" in line
    assert json.loads(line) == json.loads(listed.model_dump_json(by_alias=True, exclude_unset=True))
    assert written[1:] == [changed, other] and not isinstance(written[1], EncodedResponse)
