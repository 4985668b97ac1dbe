"""The `request` step: build the request from the (rendered) step, send it, capture everything.

Unlike the original: a string body is sent as it is (not JSON-quoted), a body is sent on GET
too when given, the response is parsed as JSON whenever it is JSON (content type or content),
forms are supported, and the request as sent is kept for the failure report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from preflight_sdk.config.testfile import RequestStep
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.run import RequestInfo, ResponseInfo

from ..outcome import StepOutcome, cap_body
from .direct import Answer, DirectRequests
from .transport import LeanTransport
from .wire import WirePool

__all__ = ["HttpSession", "send"]

REQUEST_BODY_LIMIT = 2_000
RESPONSE_BODY_LIMIT = 4_000


class HttpSession:
    """One connection pool per run (keep-alive across cases), and the two ways onto it.

    A plain request goes straight on the wire (`direct`); the rest through httpx's client, whose
    transport is the same pool (`LeanTransport`), so both share connections and cookies.
    """

    def __init__(self, redactor: Redactor = DEFAULT) -> None:
        self.redactor = redactor
        pool = WirePool()
        self.client = httpx.AsyncClient(timeout=30.0, transport=LeanTransport(pool), trust_env=False)
        self.direct = DirectRequests(pool, self.client)

    async def aclose(self) -> None:
        """Close the pool."""
        await self.client.aclose()


async def send(
    session: HttpSession, step: RequestStep, *, base_url: str | None, traceparent: str | None = None
) -> StepOutcome:
    """Send `step` (already rendered) and return what happened.

    `traceparent` is sent as that header unless the step sets one itself.
    """
    method = step.method.upper()
    url = _url(step, base_url)
    if url is None:
        return StepOutcome(
            kind="request",
            error="the request has a `path` but there is no service to send it to: give `url`, "
            "`service`, or set BASE_URL",
            error_kind="input",
        )
    headers = {str(k): _text(v) for k, v in step.headers.items()}
    if traceparent is not None and not any(k.lower() == "traceparent" for k in headers):
        headers["traceparent"] = traceparent
    content, shown_body = _content(step, headers)
    params = {str(k): _param(v) for k, v in step.query.items()}
    full_url = url + (("&" if "?" in url else "?") + urlencode(params, doseq=True) if params else "")
    redactor = session.redactor
    shown, cut = cap_body(redactor.body(shown_body), REQUEST_BODY_LIMIT)
    shown_url = redactor.url(full_url)
    request_info = RequestInfo(
        method=method, url=shown_url, headers=redactor.headers(headers), body=shown, body_truncated=cut
    )
    timeout = parse_duration(step.timeout, field="request.timeout")
    started = time.perf_counter()
    try:
        answer = (
            None
            if step.follow_redirects
            else await session.direct.send(method, full_url, headers, content, timeout)
        )
        if answer is None:
            response = await session.client.request(
                method,
                full_url,
                headers=headers,
                content=content,
                timeout=timeout,
                follow_redirects=step.follow_redirects,
            )
            answer = Answer(response.status_code, dict(response.headers.items()), response.text)
    except httpx.HTTPError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        if isinstance(exc, httpx.TimeoutException):
            error, error_kind = f"{method} {shown_url} timed out after {timeout:g}s", "timeout"
        else:
            error, error_kind = f"{method} {shown_url} failed: {redactor.text(_reason(exc))}", "connection"
        return StepOutcome(
            kind="request", duration=elapsed, error=error, error_kind=error_kind, request=request_info
        )
    elapsed = (time.perf_counter() - started) * 1000
    text = answer.text
    body = _parse(text, answer.headers.get("content-type", ""))
    capped, body_cut = cap_body(redactor.body(body), RESPONSE_BODY_LIMIT)
    return StepOutcome(
        kind="request",
        status=answer.status,
        headers=answer.headers,
        body=body,
        text=text,
        duration=elapsed,
        request=request_info,
        response=ResponseInfo(
            status=answer.status,
            headers=redactor.headers(answer.headers),
            body=capped,
            body_truncated=body_cut,
            duration=round(elapsed),
        ),
    )


def _url(step: RequestStep, base_url: str | None) -> str | None:
    if step.url:
        return str(step.url)
    if base_url is None:
        return None
    path = str(step.path or "")
    return base_url.rstrip("/") + ("" if path.startswith("/") or not path else "/") + path


def _content(step: RequestStep, headers: dict[str, str]) -> tuple[bytes | None, Any]:
    lowered = {k.lower() for k in headers}
    if step.json is not None:
        if "content-type" not in lowered:
            headers["Content-Type"] = "application/json"
        return json.dumps(step.json).encode(), step.json
    if step.form is not None:
        if "content-type" not in lowered:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        fields = {str(k): _param(v) for k, v in step.form.items()}
        return urlencode(fields, doseq=True).encode(), fields
    body = step.body
    if body is None:
        return None, None
    if isinstance(body, str):
        if "content-type" not in lowered:
            headers["Content-Type"] = "text/plain; charset=utf-8"
        return body.encode(), body
    if "content-type" not in lowered:
        headers["Content-Type"] = "application/json"
    return json.dumps(body).encode(), body


def _parse(text: str, kind: str) -> Any:
    """JSON when the body is JSON (by its content type or its first character), else the text."""
    if "json" in kind or text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list):
        return json.dumps(value)
    return "" if value is None else str(value)


def _param(value: Any) -> Any:
    if isinstance(value, list):
        return [_text(v) for v in value]
    return _text(value)


def _reason(exc: httpx.HTTPError) -> str:
    # httpx wraps the socket error twice, and anyio keeps the refusal only as the context of its
    # "All connection attempts failed": walk both links to the root.
    if isinstance(exc, httpx.RemoteProtocolError):
        # The server was reached: its own words say what went wrong, not the socket error under it
        # (an end of stream that anyio reports through an emptied deque).
        return str(exc)
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return "connection refused"
    text = str(chain[-1]) or str(exc) or type(exc).__name__
    if "refused" in text.lower() or "Errno 111" in text:
        return "connection refused"
    if "Name or service not known" in text or "nodename nor servname" in text:
        try:
            host = urlsplit(str(exc.request.url)).hostname
        except RuntimeError:
            host = "?"
        return f"cannot resolve host {host}"
    return text
