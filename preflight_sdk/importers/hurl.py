"""Hurl files as a test-file draft: each entry a case, its asserts and captures as `expect` and `save`.

An entry is a request line (`GET {{host}}/orders`), its headers and sections (`[Query]`,
`[Form]`, `[Cookies]`, `[BasicAuth]`, `[Options]`), a body (JSON, ```` ``` ```` text, `` `text` ``),
then optionally `HTTP <status>` with response headers, `[Captures]`, `[Asserts]` and a body. The
comment just before an entry names its case.

Queries convert when they read the status, a header, a simple JSONPath, the body or the duration;
predicates map onto the grammar's operators (`==`, `!=`, `>`…, `contains`, `includes`,
`startsWith`, `endsWith`, `matches`, `exists`, `isInteger`, `isString`, `isBoolean`,
`isCollection`, `isEmpty`, `isNumber`, `isIsoDate`, `isUuid`, `not`); of the filters, `count`
and `nth` convert. The rest (XPath, regex and cookie queries, other filters, multipart bodies,
most options) is listed with its line. A response body is checked as a partial match, where Hurl
checks it exactly: said in the notes.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import quote

from preflight_sdk.core.results.imports import NotConverted

from .hurl_asserts import assertion, capture, functions, literal, unquote
from .model import Draft, DraftCase, DraftRequest, merged, not_converted, outside_quotes

__all__ = ["read_hurl"]

_ENTRY = re.compile(r"^([A-Z]+)\s+((?:https?://|\{\{)\S*)\s*$")
_RESPONSE = re.compile(r"^HTTP(?:/[\d.]+)?\s+(\d{3}|\*)\s*$")
_SECTION = re.compile(r"^\[([A-Za-z]+)\]\s*$")
_KEY_VALUE = re.compile(r"^([^:\s][^:]*?)\s*:\s*(.*?)\s*$")


class _Entry:
    def __init__(self, method: str, url: str, line: int, comment: str | None) -> None:
        self.method, self.url, self.line, self.comment = method, url, line, comment
        self.headers: dict[str, str] = {}
        self.sections: dict[str, list[tuple[int, str]]] = {}
        self.body: list[str] = []
        self.status: str | None = None
        self.response_headers: list[tuple[int, str]] = []
        self.response_sections: dict[str, list[tuple[int, str]]] = {}
        self.response_body: list[str] = []


def read_hurl(text: str, *, name: str, file: str) -> Draft:
    """The draft of a Hurl file (`file` names it in the places of what did not convert)."""
    missing: list[NotConverted] = []
    notes: list[str] = []
    variables: dict[str, Any] = {}
    entries = _entries(text, file, missing)
    cases = [_case(entry, number, file, variables, missing, notes) for number, entry in enumerate(entries, 1)]
    return Draft(
        name=name, variables=variables, cases=cases, not_converted=missing, notes=list(dict.fromkeys(notes))
    )


def _entries(text: str, file: str, missing: list[NotConverted]) -> list[_Entry]:
    entries: list[_Entry] = []
    comment: str | None = None
    state = "none"
    section = ""
    fence = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip() if fence or raw.lstrip().startswith("#") else _without_comment(raw).strip()
        if fence:  # inside a ``` body
            target = entries[-1].response_body if state == "rbody" else entries[-1].body
            target.append(raw)
            fence = not line.startswith("```")
            continue
        if not line:
            comment = None  # only the comment right above an entry names it
            continue
        if line.startswith("#"):
            if state not in ("body", "rbody"):
                comment = comment or line.lstrip("#").strip() or None
            continue
        entry = _ENTRY.match(line)
        if entry is not None:
            entries.append(_Entry(entry.group(1), entry.group(2), number, comment))
            comment, state = None, "headers"
            continue
        if not entries:
            missing.append(not_converted(f"{file}:{number}", raw, "text before the first request"))
            continue
        current = entries[-1]
        comment = None
        response = _RESPONSE.match(line)
        if response is not None and state in ("headers", "section", "body"):
            current.status, state = response.group(1), "response"
            continue
        header = _SECTION.match(line)
        if header is not None:
            section = header.group(1)
            if state in ("headers", "section"):
                current.sections.setdefault(section, [])
                state = "section"
            else:
                current.response_sections.setdefault(section, [])
                state = "rsection"
            continue
        starts_body = line.startswith(("{", "[", "`", "<", '"', "base64,", "hex,", "file,"))
        if state in ("headers", "section") and starts_body and not _SECTION.match(line):
            state = "body"
        elif state in ("response", "rsection") and starts_body:
            state = "rbody"
        if state in ("body", "rbody"):
            (current.response_body if state == "rbody" else current.body).append(raw)
            fence = line.startswith("```") and not (len(line) > 3 and line.endswith("```"))
        elif state == "headers":
            current.headers.update(_pair(line))
        elif state == "response":
            current.response_headers.append((number, line))
        elif state == "section":
            current.sections[section].append((number, line))
        elif state == "rsection":
            current.response_sections[section].append((number, line))
    return entries


def _without_comment(line: str) -> str:
    """A line without its trailing `# comment` (a `#` after a space, outside quotes and backticks)."""
    for index, char in outside_quotes(line, '"`'):
        if char == "#" and index > 0 and line[index - 1] in " \t":
            return line[:index]
    return line


def _pair(line: str) -> dict[str, str]:
    match = _KEY_VALUE.match(line)
    return {match.group(1): unquote(match.group(2))} if match else {}


def _case(
    entry: _Entry,
    number: int,
    file: str,
    variables: dict[str, Any],
    missing: list[NotConverted],
    notes: list[str],
) -> DraftCase:
    place = f"{file}:{entry.line}"
    headers = {k: functions(v) for k, v in entry.headers.items()}
    url = functions(entry.url)
    options: dict[str, Any] = {}
    form: dict[str, str] | None = None
    for section, lines in entry.sections.items():
        pairs = [(n, _pair(line)) for n, line in lines]
        if section in ("Query", "QueryStringParams"):
            query = "&".join(
                f"{k}={v if '{{' in v else quote(v, safe='')}" for _, p in pairs for k, v in p.items()
            )
            url += ("&" if "?" in url else "?") + query if query else ""
        elif section in ("Form", "FormParams"):
            form = {k: functions(v) for _, p in pairs for k, v in p.items()}
        elif section == "Cookies":
            headers["Cookie"] = "; ".join(f"{k}={v}" for _, p in pairs for k, v in p.items())
        elif section == "BasicAuth":
            for line_number, pair in pairs:
                for user, password in pair.items():
                    if "{{" in user + password:
                        missing.append(
                            not_converted(
                                f"{file}:{line_number}",
                                f"{user}: {password}",
                                "basic auth with variables: set the Authorization header by hand",
                            )
                        )
                    else:
                        headers["Authorization"] = (
                            "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
                        )
        elif section == "Options":
            for line_number, line in lines:
                _option(line, line_number, file, options, variables, missing)
        else:
            missing.append(
                not_converted(
                    f"{file}:{lines[0][0] - 1 if lines else entry.line}",
                    f"[{section}]",
                    f"the [{section}] section does not convert",
                )
            )
    kind, body = _request_body(entry.body, headers, place, missing)
    if form is not None:
        kind, body = "form", form
    expect: dict[str, Any] = {}
    if entry.status not in (None, "*"):
        expect["status"] = int(entry.status)
    for _number, line in entry.response_headers:
        pair = _pair(line)
        if pair:
            expect = merged(expect, {"headers": pair})
    save: dict[str, str] = {}
    for section, lines in entry.response_sections.items():
        for line_number, line in lines:
            where = f"{file}:{line_number}"
            if section == "Captures":
                capture(line, where, save, missing)
            elif section == "Asserts":
                addition = assertion(line, where, missing, notes)
                if addition is not None:
                    expect = merged(expect, addition)
            else:
                missing.append(not_converted(where, line, f"the [{section}] section does not convert"))
    if entry.response_body:
        addition = _response_body(entry.response_body, f"{file}:{entry.line}", missing, notes)
        if addition is not None:
            expect = merged(expect, {"body": addition})
    path = re.sub(r"^[a-z]+://[^/]*|^\{\{[^}]+\}\}", "", entry.url) or "/"
    return DraftCase(
        name=entry.comment or f"{entry.method} {path} (entry {number})",
        request=DraftRequest(
            method=entry.method,
            url=url,
            headers=headers,
            body_kind=kind,
            body=body,
            follow_redirects=options.pop("follow_redirects", None),
        ),
        expect=expect,
        save=save,
        delay=options.pop("delay", None),
        retry=options.pop("retry", None),
        skip=options.pop("skip", None),
    )


def _option(
    line: str,
    number: int,
    file: str,
    options: dict[str, Any],
    variables: dict[str, Any],
    missing: list[NotConverted],
) -> None:
    match = _KEY_VALUE.match(line)
    key, value = (match.group(1), match.group(2)) if match else (line, "")
    if key == "location" and value in ("true", "false"):
        options["follow_redirects"] = value == "true"
    elif key == "delay" and value.isdigit():
        options["delay"] = f"{value}ms"
    elif key == "retry" and value.lstrip("-").isdigit():
        options["retry"] = {
            **options.get("retry", {}),
            "maxAttempts": max(1, min(10, int(value) + 1 if int(value) >= 0 else 10)),
        }
    elif key == "retry-interval" and value.isdigit():
        options["retry"] = {**options.get("retry", {"maxAttempts": 2}), "delay": f"{value}ms"}
    elif key == "variable" and "=" in value:
        name, _, assigned = value.partition("=")
        variables[name.strip()] = literal(assigned.strip())
    elif key == "skip" and value == "true":
        options["skip"] = "skipped in the Hurl file"
    else:
        missing.append(not_converted(f"{file}:{number}", line, f"the `{key}` option has no equivalent"))


def _request_body(
    lines: list[str], headers: dict[str, str], place: str, missing: list[NotConverted]
) -> tuple[Any, Any]:
    text = "\n".join(lines).strip()
    if not text:
        return "none", None
    if text.startswith("```"):
        inner = text.split("\n", 1)[1] if "\n" in text else ""
        return "text", functions(inner.rsplit("```", 1)[0].rstrip("\n"))
    if text.startswith("`") and text.endswith("`"):
        return "text", functions(text[1:-1])
    if text.startswith(("{", "[")):
        try:
            return "json", json.loads(text)
        except ValueError:
            headers.setdefault("Content-Type", "application/json")
            return "text", functions(text)  # `{"id": {{id}}}`: a template makes it JSON when sent
    if text.startswith("<"):
        return "text", text
    missing.append(not_converted(place, text.splitlines()[0], "a base64, hex or file body does not convert"))
    return "none", None


def _response_body(lines: list[str], place: str, missing: list[NotConverted], notes: list[str]) -> Any:
    text = "\n".join(lines).strip()
    if text.startswith("```"):
        inner = text.split("\n", 1)[1] if "\n" in text else ""
        return inner.rsplit("```", 1)[0].rstrip("\n")
    if text.startswith("`") and text.endswith("`"):
        return text[1:-1]
    try:
        value = json.loads(text)
    except ValueError:
        missing.append(
            not_converted(place, text.splitlines()[0], "this response body check does not convert")
        )
        return None
    notes.append(
        "a JSON response body Hurl checks exactly is checked as a partial match (keys it lists must match)"
    )
    return value
