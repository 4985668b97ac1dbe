"""`.http` files (VS Code REST Client, JetBrains HTTP Client, httpyac) as a test-file draft.

Requests are separated by `###` (the text after it names the request, as does `# @name x`); file
variables (`@host = http://localhost:8080`) become the file's variables; a request line is
`METHOD URL [HTTP/1.1]` (or a bare URL, a GET), continued on indented `?`/`&` lines; headers run
to the first blank line and the body to the end of the request, `< ./file` reading it from a
file. A JSON body is sent as JSON, a `application/x-www-form-urlencoded` one as a form.

A named request's response used later (`{{login.response.body.$.token}}`,
`{{login.response.headers.Location}}`) becomes a value that request saves. System variables
become the grammar's own where they mean the same (`{{$guid}}`, `{{$uuid}}`, `{{$randomUUID}}`,
`{{$isoTimestamp}}`, `{{$datetime iso8601}}`, `{{$processEnv X}}`, `{{$dotenv X}}`). Response
handlers convert where they only check the status or keep a body value or a header
(`client.global.set`, `client.assert(response.status === 200)`), and so do httpyac's `??`
assertions on status, headers, duration and body paths. The rest is listed with its line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.imports import NotConverted

from .dynamic import case_fields, map_strings, request_text, system_text, system_variables
from .model import Draft, DraftCase, DraftRequest, merged, nest, not_converted

__all__ = ["read_http_file"]

_METHODS = "GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|TRACE|CONNECT"
_ORIGIN = re.compile(r"^[a-z]+://[^/?]*|^\{\{[^}]+\}\}")
_REQUEST_LINE = re.compile(rf"^(?:({_METHODS})\s+)?(\S+?)(?:\s+HTTP/[\d.]+)?\s*$")
_NEW_REQUEST = re.compile(rf"^({_METHODS})\s+(https?://|\{{\{{|/)\S*")
_FILE_VARIABLE = re.compile(r"^@([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*$")
_META = re.compile(r"^(?:#|//)\s*@([\w-]+)(?:\s*=?\s*(.*?))?\s*$")
_COMMENT = re.compile(r"^(?:#|//)")
_HEADER = re.compile(r"^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*(.*)$")
_RESPONSE_LINE = re.compile(r"^HTTP/\d(?:\.\d)?\s+\d{3}")
_REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)\.response\.(body|headers)\.([^}]+?)\s*\}\}")
_SET = re.compile(
    r"client\.global\.set\(\s*(['\"])([\w.-]+)\1\s*,\s*response\.(body|headers)(.*?)\)\s*;?\s*$"
)
_ASSERT_STATUS = re.compile(r"client\.assert\(\s*response\.status\s*={2,3}\s*(\d{3})")
_HANDLER_FRAME = re.compile(r"^(?:client\.test\(.*\{|\}\s*\)\s*;?|%\}|\{%|\}\s*;?)$")
_ASSERTION = re.compile(
    r"^\?\?\s*(\w+)\s*(.*?)\s*(==|!=|>=|<=|<|>|includes|contains|startsWith|endsWith|matches|exists|isFalse|isTrue)\s*(.*?)\s*$"
)


class _Block:
    """One request's lines, with the line number each came from."""

    def __init__(self, name: str | None, first: int) -> None:
        self.name = name
        self.first = first
        self.lines: list[tuple[int, str]] = []


def read_http_file(text: str, *, name: str, file: str, base: Path, redactor: Redactor = DEFAULT) -> Draft:
    """The draft of a `.http` file (`file` names it in places; `base`: where `< ./file` bodies are)."""
    variables: dict[str, Any] = {}
    secrets: list[str] = []
    missing: list[NotConverted] = []
    notes: list[str] = []
    blocks = _blocks(text, variables, secrets, redactor)
    drafts: list[tuple[str | None, DraftCase]] = []
    for block in blocks:
        for request in _split_requests(block):
            parsed = _request(request, file, base, missing, notes)
            if parsed is not None:
                drafts.append(parsed)
    cases = _references([case for _, case in drafts], [n for n, _ in drafts], missing)
    cases = [system_variables(case, missing) for case in cases]
    return Draft(
        name=name,
        variables={k: system_text(v) for k, v in variables.items() if k not in secrets},
        secret_variables=secrets,
        cases=cases,
        not_converted=missing,
        notes=notes,
    )


def _blocks(text: str, variables: dict[str, Any], secrets: list[str], redactor: Redactor) -> list[_Block]:
    blocks = [_Block(None, 1)]
    in_comment = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if in_comment:  # httpyac's /* … */ comment blocks
            in_comment = not stripped.endswith("*/")
            continue
        if stripped.startswith("/*") and not blocks[-1].lines:
            in_comment = not stripped.endswith("*/")
            continue
        if stripped.startswith("###"):
            title = stripped.lstrip("#").strip()
            blocks.append(_Block(title or None, number + 1))
            continue
        variable = _FILE_VARIABLE.match(stripped)
        if variable is not None and not _has_request(blocks[-1]):
            variables[variable.group(1)] = variable.group(2)
            if redactor.secret(variable.group(1)):
                secrets.append(variable.group(1))
            continue
        blocks[-1].lines.append((number, line))
    return [b for b in blocks if any(line.strip() for _, line in b.lines)]


def _has_request(block: _Block) -> bool:
    return any(line.strip() and not _COMMENT.match(line.strip()) for _, line in block.lines)


def _split_requests(block: _Block) -> list[_Block]:
    """httpyac and JetBrains allow several requests in one block: a new one starts after a blank line."""
    out = [_Block(block.name, block.first)]
    seen_request = False
    previous_blank = False
    for number, line in block.lines:
        stripped = line.strip()
        if seen_request and previous_blank and _NEW_REQUEST.match(stripped):
            out.append(_Block(None, number))
        if stripped and not _COMMENT.match(stripped):
            seen_request = True
        previous_blank = not stripped
        out[-1].lines.append((number, line))
    return out


def _request(
    block: _Block, file: str, base: Path, missing: list[NotConverted], notes: list[str]
) -> tuple[str | None, DraftCase] | None:
    name, label = block.name, None
    options: dict[str, Any] = {}
    lines = block.lines
    index = 0
    while index < len(lines):  # comments and metadata before the request line
        number, raw = lines[index]
        stripped = raw.strip()
        if not stripped:
            index += 1
            continue
        meta = _META.match(stripped)
        if meta is not None:
            key, value = meta.group(1), (meta.group(2) or "").strip()
            if key == "name":
                label = value
            elif key in ("no-redirect",):
                options["follow_redirects"] = False
            elif key == "timeout" and value.isdigit():
                options["timeout"] = f"{value}ms"
            elif key not in ("note", "title", "description"):
                missing.append(
                    not_converted(f"{file}:{number}", stripped, f"the `@{key}` option has no equivalent")
                )
            index += 1
            continue
        if _COMMENT.match(stripped):
            index += 1
            continue
        break
    if index >= len(lines):
        return None
    number, raw = lines[index]
    match = _REQUEST_LINE.match(raw.strip())
    if match is None:
        missing.append(not_converted(f"{file}:{number}", raw, "not a request line (`METHOD URL`)"))
        return None
    method, url = (match.group(1) or "GET"), match.group(2)
    index += 1
    while index < len(lines) and re.match(r"^\s+[?&/]", lines[index][1]):  # a URL over several lines
        url += lines[index][1].strip()
        index += 1
    headers: dict[str, str] = {}
    while index < len(lines) and lines[index][1].strip():
        header_number, header_line = lines[index]
        header = _HEADER.match(header_line.strip())
        if header is None and not _COMMENT.match(header_line.strip()):
            missing.append(
                not_converted(f"{file}:{header_number}", header_line, "not a header (`Name: value`)")
            )
        elif header is not None:
            headers[header.group(1)] = header.group(2)
        index += 1
    body_lines, expect, save = _tail(lines[index:], file, base, missing, notes)
    kind, body = _body(body_lines, headers)
    title = name or label or f"{method} {_ORIGIN.sub('', url) or '/'}"
    return label, DraftCase(
        name=title,
        request=DraftRequest(method=method, url=url, headers=headers, body_kind=kind, body=body, **options),
        expect=expect,
        save=save,
    )


def _tail(
    lines: list[tuple[int, str]], file: str, base: Path, missing: list[NotConverted], notes: list[str]
) -> tuple[list[str], dict[str, Any], dict[str, str]]:
    """The body lines, and what the response handlers and assertions after them check and keep."""
    body: list[str] = []
    expect: dict[str, Any] = {}
    save: dict[str, str] = {}
    in_handler = False
    example = False
    for number, raw in lines:
        stripped = raw.strip()
        place = f"{file}:{number}"
        if example:
            continue
        if in_handler or stripped.startswith("> {%"):
            in_handler = not stripped.endswith("%}") or stripped == "> {%"
            code = stripped.removeprefix("> {%").removesuffix("%}").strip()
            if code:
                expect, save = _handler_line(code, place, expect, save, missing)
            continue
        if stripped.startswith((">>", "<>")):
            missing.append(not_converted(place, stripped, "writing the response to a file has no equivalent"))
            continue
        if stripped.startswith(">"):
            missing.append(
                not_converted(place, stripped, "a response handler script in a file does not convert")
            )
            continue
        if stripped.startswith("??"):
            addition = _assertion(stripped)
            if addition is None:
                missing.append(not_converted(place, stripped, "this assertion has no equivalent"))
            else:
                expect = merged(expect, addition)
            continue
        if _RESPONSE_LINE.match(stripped) and (not body or not body[-1].strip()):
            notes.append(
                f"{place}: the response written after the request is an example, not a check: left out"
            )
            example = True
            continue
        if stripped.startswith("<") and not stripped.startswith("<?") and re.match(r"^<@?\s+\S", stripped):
            body += _file_body(stripped, place, base, missing)
            continue
        body.append(raw)
    return body, expect, save


def _handler_line(
    code: str, place: str, expect: dict[str, Any], save: dict[str, str], missing: list[NotConverted]
) -> tuple[dict[str, Any], dict[str, str]]:
    setter = _SET.search(code)
    status = _ASSERT_STATUS.search(code)
    if setter is not None:
        name, where, rest = setter.group(2), setter.group(3), setter.group(4).strip()
        header = re.fullmatch(r"\.valueOf\(\s*(['\"])(.+?)\1\s*\)", rest)
        if where == "headers" and header is not None:
            return expect, {**save, name: f"headers.{header.group(2).lower()}"}
        if where == "body" and re.fullmatch(r"(?:\.[A-Za-z_]\w*|\[\d+\])*", rest):
            path = rest.lstrip(".")
            return expect, {**save, name: path or "body"}
    elif status is not None:
        return merged(expect, {"status": int(status.group(1))}), save
    elif _HANDLER_FRAME.match(code):
        return expect, save
    missing.append(not_converted(place, code, "response handler code with no equivalent in the test grammar"))
    return expect, save


def _assertion(line: str) -> dict[str, Any] | None:
    """httpyac's `?? status == 200`, `?? header content-type includes json`, `?? duration < 500`…"""
    match = _ASSERTION.match(line)
    if match is None:
        return None
    subject, argument, operator, value = match.groups()
    operand = _value(value)
    check: Any = {
        "==": operand,
        "!=": {"ne": operand},
        ">": {"gt": operand},
        ">=": {"gte": operand},
        "<": {"lt": operand},
        "<=": {"lte": operand},
        "includes": {"contains": operand},
        "contains": {"contains": operand},
        "startsWith": {"startsWith": operand},
        "endsWith": {"endsWith": operand},
        "matches": {"matches": operand},
        "exists": {"exists": True},
        "isTrue": True,
        "isFalse": False,
    }[operator]
    if subject == "status" and not argument:
        return {"status": operand} if operator == "==" and isinstance(operand, int) else None
    if subject == "header" and argument:
        return {"headers": {argument: check}}
    if subject == "duration" and operator in ("<", "<="):
        return {"responseTime": check}
    if subject == "body":
        if not argument:
            return {"body": check}
        return {"body": nested} if (nested := nest(argument.removeprefix("$.").lstrip("."), check)) else None
    if subject == "js" and argument.startswith("response.parsedBody."):
        nested = nest(argument.removeprefix("response.parsedBody."), check)
        return {"body": nested} if nested else None
    return None


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text.strip("'\"")


def _file_body(line: str, place: str, base: Path, missing: list[NotConverted]) -> list[str]:
    target = base / re.sub(r"^<@?\s+", "", line).strip()
    try:
        return target.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        missing.append(
            not_converted(place, line, f"the body file {target} cannot be read: the body is left out")
        )
        return []


def _body(lines: list[str], headers: dict[str, str]) -> tuple[Any, Any]:
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        return "none", None
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "").lower()
    if "x-www-form-urlencoded" in content_type and "\n" not in text.strip():
        return "form", dict(parse_qsl(text.strip(), keep_blank_values=True))
    if "json" in content_type or text.lstrip().startswith(("{", "[")):
        try:
            return "json", json.loads(text)
        except ValueError:
            pass
    return "text", text


def _references(
    cases: list[DraftCase], labels: list[str | None], missing: list[NotConverted]
) -> list[DraftCase]:
    """`{{login.response.body.$.token}}` → `{{login_token}}`, saved by the request named `login`."""
    saves: dict[str, dict[str, str]] = {}

    def replace(match: re.Match[str]) -> str:
        label, where, path = match.group(1), match.group(2), match.group(3).strip()
        if label not in labels:
            return match.group(0)
        if where == "headers":
            name, source = label + "_" + re.sub(r"\W", "_", path).lower(), f"headers.{path.lower()}"
        else:
            dotted = path.removeprefix("$").lstrip(".")
            if path == "*" or not re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*|\[\d+\])*", dotted):
                return match.group(0)
            name, source = label + "_" + re.sub(r"\W+", "_", dotted).strip("_"), dotted
        saves.setdefault(label, {})[name] = source
        return "{{" + name + "}}"

    rewritten = [map_strings(case, lambda s: _REFERENCE.sub(replace, s)) for case in cases]
    out = []
    for case, label in zip(rewritten, labels, strict=True):
        if label in saves:
            case = DraftCase(**{**case_fields(case), "save": {**case.save, **saves[label]}})
        out.append(case)
    for case in out:
        for leftover in _REFERENCE.finditer(request_text(case)):
            missing.append(
                not_converted(
                    case.name,
                    leftover.group(0),
                    "a reference to a request that is not in the file, or a path with no equivalent",
                )
            )
    return out
