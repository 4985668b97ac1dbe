"""A plain request put on the wire as httpx's client would send it, without the client's pipeline.

At thousands of cases the runner's time is its requests, and most of a request's cost was httpx's
client around the wire (building and re-parsing the URL, merging headers, the auth and redirect
generators, the cookie jar's compatibility objects on every response): more than the exchange
itself. For the requests that need none of that, this builds the same bytes httpx would (the
client's default headers, then the step's, `Host` and `Content-Length` where httpx puts them),
exchanges them on the runner's `WirePool`, and reads the answer the way httpx would (header
names folded to lower case and repeated ones joined, the charset of `Content-Type` or UTF-8, and
httpx itself for any `Content-Encoding`).

Anything else goes to httpx's client, which shares the pool: `https://`, redirects to follow, a
URL httpx would rewrite (percent-escapes to add, dot segments, user info, upper-case or
international hosts, a fragment), non-ASCII header text, and every request once a server has set
a cookie (the jar then decides what to send). A `Set-Cookie` in a direct answer goes into the
client's jar, so both paths see the same cookies.
"""

from __future__ import annotations

import codecs
import email.message
import re
from typing import NamedTuple
from urllib.parse import urlsplit

import httpx

from .wire import Reply, WirePool

__all__ = ["Answer", "DirectRequests"]

# Characters httpx leaves as they are in a path and a query (a subset of its WHATWG sets), and
# escapes it keeps; any other character makes httpx rewrite the URL, so httpx sends it.
_PLAIN_PATH = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")
_PLAIN_QUERY = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})+")
_PLAIN_HOST = re.compile(r"[a-z0-9.\-]+|\[[0-9a-f:.]+\]")
_WITH_BODY_METHODS = ("POST", "PUT", "PATCH")


class Answer(NamedTuple):
    """What a request step reads of a response, whichever path sent it."""

    status: int
    headers: dict[str, str]
    text: str


class _Target(NamedTuple):
    host: str
    port: int
    netloc: bytes
    target: bytes


class DirectRequests:
    """Sends eligible requests on `pool` with `client`'s default headers and cookie jar."""

    def __init__(self, pool: WirePool, client: httpx.AsyncClient) -> None:
        self.pool = pool
        self.client = client
        self.defaults = [(name, value, name.decode("ascii").lower()) for name, value in client.headers.raw]

    async def send(
        self, method: str, url: str, headers: dict[str, str], content: bytes | None, timeout: float
    ) -> Answer | None:
        """Send the request and return its answer; None when httpx's client must send it."""
        where = _plain_target(url)
        if where is None or len(self.client.cookies) or not _ascii(headers):
            return None
        payload = _request_bytes(method, where, self.defaults, headers, content)
        reply = await self.pool.exchange(
            where.host,
            where.port,
            payload,
            head_only=method == "HEAD",
            connect_timeout=timeout,
            read_timeout=timeout,
        )
        body = reply.body
        encoded = set_cookie = False
        for name, _ in reply.headers:
            lowered = name.lower()
            encoded = encoded or lowered == b"content-encoding"
            set_cookie = set_cookie or lowered == b"set-cookie"
        if set_cookie or encoded:
            response = httpx.Response(
                reply.status, headers=reply.headers, content=body, request=httpx.Request(method, url)
            )
            if set_cookie:
                self.client.cookies.extract_cookies(response)
            body = response.content  # httpx decodes what it can, as its client would
        fields = _fields(reply)
        return Answer(reply.status, fields, _text(body, fields.get("content-type", "")))


def _plain_target(url: str) -> _Target | None:
    """Where to send `url` and the request target, when httpx would send the URL as it is."""
    if not url.startswith("http://") or "#" in url or url.endswith("?"):
        return None
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        return None
    host_text, _, port_text = netloc.rpartition(":") if not netloc.endswith("]") else (netloc, "", "")
    if not host_text:
        host_text, port_text = netloc, ""
    if not _PLAIN_HOST.fullmatch(host_text) or (port_text and not port_text.isdigit()):
        return None
    port = int(port_text) if port_text else 80
    if not 0 < port < 65536:
        return None
    path = parts.path or "/"
    if "/." in path or not _PLAIN_PATH.fullmatch(path):
        return None
    if parts.query and not _PLAIN_QUERY.fullmatch(parts.query):
        return None
    host = host_text[1:-1] if host_text.startswith("[") else host_text
    shown = host_text if port == 80 else f"{host_text}:{port}"
    target = path + ("?" + parts.query if parts.query else "")
    return _Target(host, port, shown.encode("ascii"), target.encode("ascii"))


def _ascii(headers: dict[str, str]) -> bool:
    return all(name.isascii() and value.isascii() for name, value in headers.items())


def _request_bytes(
    method: str,
    where: _Target,
    defaults: list[tuple[bytes, bytes, str]],
    headers: dict[str, str],
    content: bytes | None,
) -> bytes:
    """The request as httpx builds it: the client's defaults not overridden, the step's headers,
    `Content-Length` for a body, then `Host` (and `Content-Length: 0` for a bodiless POST, PUT or
    PATCH) in front."""
    given = {name.lower() for name in headers}
    lines = [name + b": " + value for name, value, lowered in defaults if lowered not in given]
    lines += [f"{name}: {value}".encode("ascii") for name, value in headers.items()]
    if content and "content-length" not in given:
        lines.append(b"Content-Length: " + str(len(content)).encode("ascii"))
        given.add("content-length")
    front = [method.encode("ascii") + b" " + where.target + b" HTTP/1.1"]
    if "host" not in given:
        front.append(b"Host: " + where.netloc)
    if "content-length" not in given and "transfer-encoding" not in given and method in _WITH_BODY_METHODS:
        front.append(b"Content-Length: 0")
    return b"\r\n".join(front + lines) + b"\r\n\r\n" + (content or b"")


def _fields(reply: Reply) -> dict[str, str]:
    """Header names in lower case, repeated ones joined with ", " (httpx's `headers.items()`)."""
    raw = reply.headers
    encoding = _header_encoding(raw)
    fields: dict[str, str] = {}
    for name, value in raw:
        key = name.decode(encoding).lower()
        text = value.decode(encoding)
        fields[key] = f"{fields[key]}, {text}" if key in fields else text
    return fields


def _header_encoding(raw: list[tuple[bytes, bytes]]) -> str:
    for encoding in ("ascii", "utf-8"):
        try:
            for name, value in raw:
                name.decode(encoding)
                value.decode(encoding)
        except UnicodeDecodeError:
            continue
        return encoding
    return "iso-8859-1"


def _text(body: bytes, content_type: str) -> str:
    """The body as text: the charset `Content-Type` names when Python knows it, else UTF-8."""
    if not body:
        return ""
    encoding = "utf-8"
    if "charset" in content_type.lower():
        message = email.message.Message()
        message["content-type"] = content_type
        named = message.get_content_charset(failobj=None)
        if named:
            try:
                codecs.lookup(named)
                encoding = named
            except LookupError:
                pass
    return body.decode(encoding, errors="replace")
