"""The one redaction policy of every output: run results, reports, mock journals, logs, replies.

A name is secret when it contains (case-insensitive, at any position) one of `auth`, `token`,
`secret`, `password`, `passwd`, `key`, `cookie`, `session`, or one of the extra names an e2e.yaml
lists under `redact:`. The policy replaces the value, never the name, of:

- headers with a secret name (`Authorization`, `X-Custom-Auth`, `X-Access-Key`...);
- query parameters with a secret name, and the password of a URL's userinfo (`user:***@host`);
- JSON body fields with a secret name, at any depth;
- `name=value`, `name: value`, `"name": "value"` and `'name': 'value'` in free text (log lines,
  process output; the last two are how a mapping prints as JSON and in Python);
- and, wherever they appear (any text, any field, in any output), the values known to be secret:
  the values of a project's secret-named variables (a service's `environment:` and build `args:`,
  a suite's `env:`, the MCP server's `env:`, `name=value` pairs of suites' commands; see
  `secret_values`). A value shorter than `MIN_SECRET_CHARS`, a number of up to 5 digits and a URL
  without a password are not masked by value (they would hide ordinary words, ports, durations and
  addresses); their name still hides them in name/value pairs.

Everything shown to a person or a model goes through a `Redactor` first; nothing else redacts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

import msgspec

if TYPE_CHECKING:
    from .assertions import AssertionResult
    from .results.lifecycle import LogsResult
    from .results.mocks import MockAnswer, RecordedRequest
    from .results.run import Failure

__all__ = [
    "DEFAULT",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SECRET_WORDS",
    "Redactor",
    "redact_failure",
    "redact_logs",
    "redact_recorded",
    "redactor_for",
    "secret_values",
]

_T = TypeVar("_T")

REDACTED = "[redacted]"
SECRET_WORDS = ("auth", "token", "secret", "password", "passwd", "key", "cookie", "session")
# A known secret value shorter than this is not masked wherever it appears.
MIN_SECRET_CHARS = 4
# A body nested deeper than this is not walked further (it is replaced, not recursed into).
_MAX_DEPTH = 64
# In a URL's userinfo brackets would read as an IPv6 host: the password becomes `***` there.
USERINFO_MASK = "***"
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s:@]*):([^/\s@]*)@")


class Redactor:
    """The redaction policy, with the extra secret names and the secret values of one project."""

    def __init__(self, extra: Iterable[str] = (), values: Iterable[str] = ()) -> None:
        self.words = tuple(dict.fromkeys([*SECRET_WORDS, *(w.lower() for w in extra if w)]))
        # Longest first, so a value that contains another is replaced whole.
        self.values = tuple(
            sorted({v for v in values if len(v) >= MIN_SECRET_CHARS and v != REDACTED}, key=len, reverse=True)
        )
        self._known = re.compile("|".join(re.escape(v) for v in self.values)) if self.values else None
        alternatives = "|".join(re.escape(w) for w in self.words)
        name = rf"[A-Za-z0-9_.\-]*(?:{alternatives})[A-Za-z0-9_.\-]*"
        # "name": "value" (JSON) and 'name': 'value' (a Python mapping's repr), either quote on
        # either side; then name=value / name: value (logs, env dumps, headers).
        self._quoted = re.compile(
            rf"""(?i)((?P<q>["']){name}(?P=q)\s*:\s*)(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
        )
        scheme = r"(?:(?:bearer|basic|token|digest)\s+)?"
        self._plain = re.compile(rf"(?i)\b({name})(\s*[=:]\s*)(?!\[redacted\])({scheme}[^\s&,;\"']+)")

    def secret(self, name: str) -> bool:
        """Whether a header, parameter or field called `name` holds a secret."""
        lowered = name.lower()
        return any(word in lowered for word in self.words)

    def known(self, text: str) -> str:
        """`text` with every known secret value replaced, wherever it appears."""
        return self._known.sub(REDACTED, text) if self._known is not None and text else text

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """`headers` with the values of secret names, and known secret values, replaced."""
        return {name: REDACTED if self.secret(name) else self.known(value) for name, value in headers.items()}

    def query(self, query: Mapping[str, Any]) -> dict[str, Any]:
        """Query parameters (name to value or list of values) with secret values replaced."""
        return {
            name: _replaced(value) if self.secret(name) else self.scrub(value)
            for name, value in query.items()
        }

    def scrub(self, value: _T) -> _T:
        """`value` (text, a JSON value or a result Struct) with every known secret value replaced.

        The net under every output: whatever field a secret value reached (a case name, an
        assertion message, a captured output), it is masked there too.
        """
        if self._known is None:
            return value
        if isinstance(value, str):
            shown = self.known(value)
            return value if shown == value else shown  # type: ignore[return-value]
        if isinstance(value, msgspec.Struct):
            changes = {}
            for name in value.__struct_fields__:
                item = getattr(value, name)
                cleaned = self.scrub(item)
                if cleaned is not item:
                    changes[name] = cleaned
            return msgspec.structs.replace(value, **changes) if changes else value
        if isinstance(value, dict):
            pairs = {key: self.scrub(item) for key, item in value.items()}
            same = all(pairs[key] is item for key, item in value.items())
            return value if same else pairs  # type: ignore[return-value]
        if isinstance(value, list):
            items = [self.scrub(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items  # type: ignore[return-value]
        return value

    def url(self, url: str) -> str:
        """`url` without its userinfo password and with secret query parameters replaced."""
        cleaned = self.known(_USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{USERINFO_MASK}@", url))
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
        """Free text with known secret values, `name=value`, `name: value`, `"name": "value"`,
        `'name': 'value'` and URL passwords replaced."""
        if not text:
            return text
        text = self.known(text)
        text = _USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{USERINFO_MASK}@", text)
        text = self._quoted.sub(lambda m: f"{m.group(1)}{m.group('q')}{REDACTED}{m.group('q')}", text)
        return self._plain.sub(_plain_pair, text)

    def paired(self, text: str) -> list[str]:
        """The values `text` gives to secret names (`password=…`, `token: …`): secret from then on."""
        return [m.group(3) for m in self._plain.finditer(text) if _plain_pair(m) != m.group(0) and m.group(3)]

    def lines(self, lines: Iterable[str]) -> list[str]:
        """Each line through `text`."""
        return [self.text(line) for line in lines]


# `auth.py:12`, `session.ts:4:7`, `test_token.py::test_x`: a place in a source file (or a pytest
# node), not a name and its value.
_SOURCE_FILE = re.compile(
    r"(?i)\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rb|rs|java|kt|kts|scala|cs|c|cc|cpp|h|hpp|php|sh|swift|"
    r"ex|exs|lua|pl|yaml|yml|json|toml|txt|md|log)$"
)
_LINE = re.compile(r"\d+(?::\d+)?:?")


def _plain_pair(match: re.Match[str]) -> str:
    name, separator, value = match.group(1), match.group(2), match.group(3)
    if separator == ":" and (
        value.startswith(":") or (_SOURCE_FILE.search(name) is not None and _LINE.fullmatch(value))
    ):
        return match.group(0)
    return f"{name}{separator}{REDACTED}"


def secret_values(
    redactor: Redactor, variables: Iterable[Mapping[str, Any]], commands: Iterable[str] = ()
) -> list[str]:
    """The values of the secret-named entries of `variables` (environments), as text, and those
    that `commands` give to secret names (`--password=…`)."""
    found = [
        str(value)
        for mapping in variables
        for name, value in mapping.items()
        if redactor.secret(name) and isinstance(value, str | int) and not isinstance(value, bool)
    ]
    paired = [value for command in commands for value in redactor.paired(command)]
    return [value for value in found + paired if _maskable(value)]


# A URL without a password (`KEYCLOAK_URL: http://keycloak:8080`: "key" is in the name) and a
# short number (`SESSION_TTL: 3600`, `AUTH_PORT: 8080`) are settings, not secrets: masked wherever
# they appear they would hide addresses and durations from every failure. Their name still hides
# them in name=value pairs.
_PLAIN_URL = re.compile(r"(?i)[a-z][a-z0-9+.-]*://[^\s@]*")
_SHORT_NUMBER = re.compile(r"\d{1,5}")


def _maskable(value: str) -> bool:
    return not (_PLAIN_URL.fullmatch(value) or _SHORT_NUMBER.fullmatch(value.strip()))


def _replaced(value: Any) -> Any:
    return [REDACTED for _ in value] if isinstance(value, list) else REDACTED


DEFAULT = Redactor()
"""The policy without project-specific names."""


@lru_cache(maxsize=32)
def redactor_for(extra: tuple[str, ...], values: tuple[str, ...] = ()) -> Redactor:
    """The policy with the extra names `extra` and secret `values` (one compiled instance per pair)."""
    return Redactor(extra, values) if extra or values else DEFAULT


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
    return msgspec.structs.replace(
        result,
        message=redactor.text(result.message),
        actual=redactor.scrub(result.actual),
        expected=redactor.scrub(result.expected),
    )
