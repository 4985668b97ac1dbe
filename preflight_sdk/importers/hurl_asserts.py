"""Hurl's captures and asserts: queries, filters and predicates as the test grammar's checks.

A query converts when it reads the status, a header, a simple JSONPath, the body or the
duration; of the filters, `count` and `nth`; predicates map onto the grammar's operators. What
does not convert is listed with its line and why.
"""

from __future__ import annotations

import json
import re
from typing import Any

from preflight_sdk.core.results.imports import NotConverted

from .model import json_path, nest, not_converted

__all__ = ["assertion", "capture", "functions", "literal", "unquote"]

_KEY_VALUE = re.compile(r"^([^:\s][^:]*?)\s*:\s*(.*?)\s*$")
_STRING = r"\"(?:[^\"\\]|\\.)*\""
_QUERY = re.compile(
    rf"^(?:(status|url|body|duration|bytes|sha256|md5|version|ip|redirects)\b|"
    rf"(header|jsonpath|xpath|regex|cookie|variable|certificate)\s+({_STRING}|/(?:[^/\\]|\\.)*/))\s*(.*)$"
)
_PREDICATES = (
    "==", "!=", ">=", "<=", ">", "<", "startsWith", "endsWith", "contains", "includes", "matches", "exists",
    "isBoolean", "isCollection", "isDate", "isEmpty", "isFloat", "isInteger", "isIsoDate", "isNumber",
    "isString", "isIpv4", "isIpv6", "isUuid", "isList", "isObject",
)  # fmt: skip
_TYPES: dict[str, dict[str, Any]] = {
    "isBoolean": {"type": "boolean"},
    "isCollection": {"type": ["array", "object"]},
    "isList": {"type": "array"},
    "isObject": {"type": "object"},
    "isFloat": {"type": "number"},
    "isNumber": {"type": "number"},
    "isInteger": {"type": "integer"},
    "isString": {"type": "string"},
    "isEmpty": {"length": 0},
    "isIsoDate": {"matches": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$"},
    "isUuid": {"matches": r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
}
_OPERATORS = {"!=": "ne", ">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "includes": "contains"}
_FUNCTIONS = {"newUuid": "{{uuid}}", "newDate": "{{now}}"}


def capture(line: str, where: str, save: dict[str, str], missing: list[NotConverted]) -> None:
    match = _KEY_VALUE.match(line)
    query = _QUERY.match(match.group(2)) if match else None
    if match is None or query is None:
        missing.append(not_converted(where, line, "this capture does not convert"))
        return
    name = match.group(1)
    source, filters = _source(query)
    path, rest = _filters(source, filters)
    if path is None or rest.strip():
        missing.append(not_converted(where, line, _why(query, rest)))
        return
    save[name] = path


def assertion(line: str, where: str, missing: list[NotConverted], notes: list[str]) -> dict[str, Any] | None:
    query = _QUERY.match(line)
    if query is None:
        missing.append(not_converted(where, line, "this assert does not convert"))
        return None
    source, filters = _source(query)
    counted = False
    parts = filters.split()
    if parts and parts[0] == "count":
        counted, filters = True, filters.strip()[len("count") :]
    path, rest = _filters(source, filters)
    predicate = _predicate(rest)
    if path is None or predicate is None:
        missing.append(
            not_converted(
                where,
                line,
                _why(query, rest) if path is None or not predicate else "this predicate does not convert",
            )
        )
        return None
    check, comparison = predicate
    if counted:
        check = {"length": check}
    if isinstance(check, dict) and check.get("_unsupported"):
        missing.append(not_converted(where, line, str(check["_unsupported"])))
        return None
    if path == "status":
        if isinstance(check, int):
            return {"status": check}
        if comparison:
            return {"expr": f"status {comparison}"}
        missing.append(not_converted(where, line, "this predicate does not convert"))
        return None
    if path == "responseTime":
        return {"responseTime": check}
    if path.startswith("headers."):
        return {"headers": {path.removeprefix("headers."): check}}
    if path == "body":
        return {"body": check}
    nested = nest(path, check)
    if nested is not None:
        return {"body": nested}
    if comparison:
        return {"expr": f"body.{path}{'.length' if counted else ''} {comparison}"}
    missing.append(
        not_converted(
            where, line, f"`{path}` is read by index, which only comparisons (`==`, `<`…) can check here"
        )
    )
    return None


def _source(query: re.Match[str]) -> tuple[str | None, str]:
    """The test-grammar path a query reads (None when it has none), and the text after it."""
    simple, kind, argument, rest = query.group(1), query.group(2), query.group(3), query.group(4)
    if simple == "status":
        return "status", rest
    if simple == "body":
        return "body", rest
    if simple == "duration":
        return "responseTime", rest
    if kind == "header":
        return f"headers.{unquote(argument).lower()}", rest
    if kind == "jsonpath":
        path = json_path(unquote(argument))
        return (path or "body") if path is not None else None, rest
    return None, rest


def _filters(path: str | None, text: str) -> tuple[str | None, str]:
    """Apply `nth N` filters to the path; stop at the first other one (returned in the rest)."""
    rest = text.strip()
    while path is not None and (nth := re.match(r"^nth\s+(\d+)\s*(.*)$", rest)):
        if path in ("status", "responseTime") or path.startswith("headers."):
            return None, rest
        path = ("" if path == "body" else path) + f"[{nth.group(1)}]"
        if path.startswith("["):
            return None, rest
        rest = nth.group(2)
    if path is not None and rest and rest.split()[0] not in _PREDICATES and rest.split()[0] != "not":
        return path, rest  # an unknown filter: the caller lists it
    return path, rest


def _predicate(text: str) -> tuple[Any, str | None] | None:
    """A predicate as an operand of the grammar, and the comparison text for `expr` if it is one."""
    negate = text.startswith("not ")
    text = text.removeprefix("not ").strip()
    name = next(
        (
            p
            for p in _PREDICATES
            if text == p
            or text.startswith(p + " ")
            or (p in ("==", "!=", ">=", "<=", ">", "<") and text.startswith(p))
        ),
        None,
    )
    if name is None:
        return None
    value_text = text[len(name) :].strip()
    value = literal(value_text) if value_text else None
    comparison = (
        f"{name} {json.dumps(value)}" if name in ("==", "!=", ">", ">=", "<", "<=") and not negate else None
    )
    if name == "exists":
        check: Any = {"exists": not negate}
        return check, None
    if name in _TYPES:
        check = dict(_TYPES[name])
    elif name in ("isDate", "isIpv4", "isIpv6"):
        return {"_unsupported": f"`{name}` has no equivalent"}, None
    elif name == "==":
        check = value
    elif name == "matches" and isinstance(value, str):
        check = {"matches": value}
    else:
        check = {_OPERATORS.get(name, name): value}
    return ({"not": check} if negate else check), comparison


def _why(query: re.Match[str], rest: str) -> str:
    kind = query.group(2) or query.group(1)
    if kind in (
        "xpath",
        "regex",
        "cookie",
        "certificate",
        "variable",
        "url",
        "bytes",
        "sha256",
        "md5",
        "version",
        "ip",
        "redirects",
    ):
        return f"the `{kind}` query has no equivalent"
    word = rest.split()[0] if rest.split() else ""
    if word and word not in _PREDICATES and word != "not":
        return f"the `{word}` filter has no equivalent"
    return "this JSONPath has no equivalent (wildcards, filters and slices do not convert)"


def literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "`":
        return functions(text[1:-1])
    if text.startswith("/") and text.endswith("/") and len(text) > 1:
        return text[1:-1].replace("\\/", "/")
    try:
        value = json.loads(text)
    except ValueError:
        return functions(text)
    return functions(value) if isinstance(value, str) else value


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return str(json.loads(text))
        except ValueError:
            return text[1:-1]
    return text


def functions(text: str) -> str:
    """Hurl's generators `{{newUuid}}`, `{{newDate}}` as the grammar's `{{uuid}}`, `{{now}}`."""
    return re.sub(r"\{\{\s*(newUuid|newDate)\s*\}\}", lambda m: _FUNCTIONS[m.group(1)], text)
