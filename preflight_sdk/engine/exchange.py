"""One HTTP/1.1 request and its whole answer on a unix socket, spoken with h11 over anyio.

The Engine API's plain requests (list, inspect, create, start, remove) are one request, one
answer, one connection (`Connection: close`). httpx does that too, but importing it costs about a
quarter of a second of a CLI process on a loaded 2-CPU machine (httpcore, its transports and, when
rich is installed, httpx's own command line), which `preflight status` paid on every call; h11 (the
protocol state machine under httpcore) costs a tenth of that. Answers that last (events, waits,
exec output) stay on httpx (`EngineAPI.stream`).

Cancelling the caller closes the connection. A socket that refuses, hangs up mid-answer or sends
something that is not HTTP raises `Unanswered` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import anyio
import h11
from anyio.abc import ByteStream

__all__ = ["Unanswered", "exchange"]

_READ = 1 << 16


class Unanswered(Exception):
    """The socket gave no whole answer (refused, hung up, not HTTP, or too slow)."""


async def exchange(
    socket_path: str,
    method: str,
    path: str,
    *,
    params: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float,
) -> tuple[int, bytes]:
    """Send `method path?params` with `body` (JSON) on the unix socket; return `(status, body)`."""
    target = path + ("?" + urlencode(params) if params else "")
    headers = [("Host", "docker"), ("Connection", "close"), ("Content-Length", str(len(body or b"")))]
    if body is not None:
        headers.append(("Content-Type", "application/json"))
    connection = h11.Connection(h11.CLIENT)
    try:
        with anyio.fail_after(timeout):
            stream = await anyio.connect_unix(socket_path)
            async with stream:
                # The whole request in one send: the daemon answers a complete request at once
                # and closes (`Connection: close`), so a later send, even of nothing, can meet a
                # closed socket while the answer waits unread.
                request = connection.send(h11.Request(method=method, target=target, headers=headers))
                request += connection.send(h11.Data(data=body)) if body else b""
                request += connection.send(h11.EndOfMessage()) or b""
                await stream.send(request)
                return await _answer(stream, connection)
    except TimeoutError as exc:
        raise Unanswered(f"no answer within {timeout:g} s") from exc
    except (OSError, anyio.BrokenResourceError, anyio.EndOfStream, h11.ProtocolError) as exc:
        raise Unanswered(str(exc) or type(exc).__name__) from exc


async def _answer(stream: ByteStream, connection: h11.Connection) -> tuple[int, bytes]:
    status = 0
    chunks: list[bytes] = []
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(_READ)
            except anyio.EndOfStream:
                data = b""
            connection.receive_data(data)
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            chunks.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return status, b"".join(chunks)
        elif isinstance(event, h11.ConnectionClosed):
            raise Unanswered("the daemon hung up before its answer")
