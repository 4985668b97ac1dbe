"""The one redaction policy of every output: run results, reports, mock journals, logs, replies.

A name is secret when it contains (case-insensitive, at any position) one of `auth`, `token`,
`secret`, `password`, `passwd`, `key`, `cookie`, `session`, or one of the extra names an e2e.yaml
lists under `redact:`. The policy replaces the value, never the name, of:

- headers with a secret name (`Authorization`, `X-Custom-Auth`, `X-Access-Key`...);
- query parameters with a secret name, and the password of a URL's userinfo (`user:***@host`);
- JSON body fields with a secret name, at any depth;
- `name=value`, `name: value` and `"name": "value"` in free text (log lines, process output).

Everything shown to a person or a model goes through a `Redactor` first; nothing else redacts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

import msgspec

if TYPE_CHECKING:
    from .assertions import AssertionResult
    from .results.lifecycle import LogsResult
    from .results.mocks import MockAnswer, RecordedRequest
    from .results.run import Failure

__all__ = [
    "DEFAULT",
    "REDACTED",
    "SECRET_WORDS",
    "Redactor",
    "redact_failure",
    "redact_logs",
    "redact_recorded",
    "redactor_for",
]

REDACTED = "[redacted]"
SECRET_WORDS = ("auth", "token", "secret", "password", "passwd", "key", "cookie", "session")
# A body nested deeper than this is not walked further (it is replaced, not recursed into).
_MAX_DEPTH = 64
# In a URL's userinfo brackets would read as an IPv6 host: the password becomes `***` there.
USERINFO_MASK = "***"
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]*):([^/\s@]*)@")


class Redactor:
    """The redaction policy, with the extra secret names of one project."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.words = tuple(dict.fromkeys([*SECRET_WORDS, *(w.lower() for w in extra if w)]))
        alternatives = "|".join(re.escape(w) for w in self.words)
        name = rf"[A-Za-z0-9_.\-]*(?:{alternatives})[A-Za-z0-9_.\-]*"
        # "name": "value" (JSON-ish text), then name=value / name: value (logs, env dumps, headers).
        self._quoted = re.compile(rf'(?i)("{name}"\s*:\s*)"(?:[^"\\]|\\.)*"')
        scheme = r"(?:(?:bearer|basic|token|digest)\s+)?"
        self._plain = re.compile(rf"(?i)\b({name})(\s*[=:]\s*)(?!\[redacted\])({scheme}[^\s&,;\"']+)")

    def secret(self, name: str) -> bool:
        """Whether a header, parameter or field called `name` holds a secret."""
        lowered = name.lower()
        return any(word in lowered for word in self.words)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """`headers` with the values of secret names replaced."""
        return {name: REDACTED if self.secret(name) else value for name, value in headers.items()}

    def query(self, query: Mapping[str, Any]) -> dict[str, Any]:
        """Query parameters (name to value or list of values) with secret values replaced."""
        return {name: _replaced(value) if self.secret(name) else value for name, value in query.items()}

    def url(self, url: str) -> str:
        """`url` without its userinfo password and with secret query parameters replaced."""
        cleaned = _USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{USERINFO_MASK}@", url)
        try:
            parts = urlsplit(cleaned)
        except ValueError:
            return self.text(cleaned)
        if not parts.query:
            return cleaned
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if not any(self.secret(name) for name, _ in pairs):
            return cleaned
        query = "&".join(
            f"{quote(name, safe='')}={REDACTED if self.secret(name) else quote(value, safe='')}"
            for name, value in pairs
        )
        return urlunsplit(parts._replace(query=query))

    def body(self, body: Any, _depth: int = 0) -> Any:
        """A JSON value with the values of secret field names replaced (any depth); text is scanned."""
        if _depth > _MAX_DEPTH:
            return body
        if isinstance(body, dict):
            return {
                key: REDACTED if isinstance(key, str) and self.secret(key) else self.body(value, _depth + 1)
                for key, value in body.items()
            }
        if isinstance(body, list):
            return [self.body(item, _depth + 1) for item in body]
        if isinstance(body, str):
            return self.text(body)
        return body

    def text(self, text: str) -> str:
        """Free text with `name=value`, `name: value`, `"name": "value"` and URL passwords replaced."""
        if not text:
            return text
        text = _USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{USERINFO_MASK}@", text)
        text = self._quoted.sub(lambda m: f'{m.group(1)}"{REDACTED}"', text)
        return self._plain.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)

    def lines(self, lines: Iterable[str]) -> list[str]:
        """Each line through `text`."""
        return [self.text(line) for line in lines]


def _replaced(value: Any) -> Any:
    return [REDACTED for _ in value] if isinstance(value, list) else REDACTED


DEFAULT = Redactor()
"""The policy without project-specific names."""


@lru_cache(maxsize=32)
def redactor_for(extra: tuple[str, ...]) -> Redactor:
    """The policy with the extra names `extra` (one compiled instance per list)."""
    return Redactor(extra) if extra else DEFAULT


def redact_recorded(entry: RecordedRequest, redactor: Redactor = DEFAULT) -> RecordedRequest:
    """A mock's journal entry with its secrets (request and answer) replaced."""
    changes: dict[str, Any] = {
        "url": redactor.url(entry.url),
        "query": redactor.query(entry.query),
        "headers": redactor.headers(entry.headers),
        "body": redactor.body(entry.body),
    }
    if entry.form is not None:
        changes["form"] = redactor.query(entry.form)
    if entry.error is not None:
        changes["error"] = redactor.text(entry.error)
    if entry.proxied_to is not None:
        changes["proxied_to"] = redactor.url(entry.proxied_to)
    if entry.response is not None:
        changes["response"] = _answer(entry.response, redactor)
    return msgspec.structs.replace(entry, **changes)


def _answer(answer: MockAnswer, redactor: Redactor) -> MockAnswer:
    return msgspec.structs.replace(
        answer, headers=redactor.headers(answer.headers), body=redactor.body(answer.body)
    )


def redact_logs(result: LogsResult, redactor: Redactor = DEFAULT) -> LogsResult:
    """A `logs` reply with `name=value` secrets and URL passwords in its lines replaced."""
    lines = [msgspec.structs.replace(line, text=redactor.text(line.text)) for line in result.lines]
    return msgspec.structs.replace(result, lines=lines)


def redact_failure(failure: Failure, redactor: Redactor = DEFAULT) -> Failure:
    """A case's failure with its secrets replaced: the exchange, assertions, output and evidence."""
    replace = msgspec.structs.replace
    changes: dict[str, Any] = {
        "error": redactor.text(failure.error),
        "summary": redactor.text(failure.summary),
        "assertions": [_assertion(a, redactor) for a in failure.assertions],
    }
    if failure.output is not None:
        changes["output"] = redactor.text(failure.output)
    if failure.suggested_fix is not None:
        changes["suggested_fix"] = redactor.text(failure.suggested_fix)
    if failure.request is not None:
        request = failure.request
        changes["request"] = replace(
            request,
            url=redactor.url(request.url),
            headers=redactor.headers(request.headers),
            body=redactor.body(request.body),
        )
    if failure.response is not None:
        response = failure.response
        changes["response"] = replace(
            response, headers=redactor.headers(response.headers), body=redactor.body(response.body)
        )
    if failure.diagnostics is not None:
        found = failure.diagnostics
        logs = [replace(log, lines=redactor.lines(log.lines)) for log in found.container_logs]
        traffic = [
            replace(
                mock,
                requests=[
                    replace(
                        r,
                        url=redactor.url(r.url) if r.url else r.url,
                        headers=redactor.headers(r.headers),
                        body=redactor.body(r.body),
                        error=redactor.text(r.error) if r.error else r.error,
                        response=_answer(r.response, redactor) if r.response else None,
                    )
                    for r in mock.requests
                ],
            )
            for mock in found.mock_requests
        ]
        changes["diagnostics"] = replace(found, container_logs=logs, mock_requests=traffic)
    return replace(failure, **changes)


def _assertion(result: AssertionResult, redactor: Redactor) -> AssertionResult:
    """An assertion on a secret field (`body.token`, `headers.x-api-key`) shows no values."""
    last = result.path.replace("[", ".").split(".")[-1] if result.path else ""
    if last and redactor.secret(last):
        message = result.message
        for value in (result.actual, result.expected):
            if isinstance(value, str) and value and value != REDACTED:
                message = message.replace(value, REDACTED)
        actual = REDACTED if isinstance(result.actual, str) else result.actual
        return msgspec.structs.replace(result, actual=actual, message=message)
    return msgspec.structs.replace(result, message=redactor.text(result.message))
