"""Dynamic variables (`{{$guid}}`, `{{$timestamp}}`, `{{$processEnv X}}`) as the grammar's own.

Postman and `.http` files share most names. Those that mean the same become `{{uuid}}`, `{{now}}`,
`{{timestamp}}` (listed: milliseconds, not seconds) or `{{env.X}}`; any other is listed and read
from the environment under its own name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from preflight_sdk.core.results.imports import NotConverted

from .model import DraftCase, DraftRequest, not_converted

__all__ = ["case_fields", "map_strings", "request_text", "system_text", "system_variables"]

_SYSTEM = re.compile(r"\{\{\s*\$([A-Za-z.]+)((?:\s+[^}]*)?)\}\}")
# The names that mean what one of the grammar's own does (Postman, REST Client, JetBrains, httpyac).
_SAME = dict.fromkeys(("guid", "uuid", "random.uuid", "randomUUID"), "{{uuid}}") | {"isoTimestamp": "{{now}}"}


def system_variables(case: DraftCase, missing: list[NotConverted]) -> DraftCase:
    """System variables as the grammar's own; the others as variables read from the environment."""
    unknown: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, args = match.group(1), match.group(2).strip()
        if name in _SAME:
            return _SAME[name]
        if name in ("processEnv", "dotenv") and re.fullmatch(r"%?[A-Za-z_]\w*", args):
            return "{{env." + args.lstrip("%") + "}}"
        if name == "datetime" and args == "iso8601":
            return "{{now}}"
        if name == "timestamp" and not args:
            return "{{timestamp}}"
        unknown.append(match.group(0))
        return "{{" + re.sub(r"\W+", "_", name).strip("_") + "}}"

    changed = map_strings(case, lambda s: _SYSTEM.sub(replace, s))
    for token in dict.fromkeys(unknown):
        missing.append(
            not_converted(
                case.name,
                token,
                "a system variable with no equivalent: it is read from the environment instead",
            )
        )
    if "{{timestamp}}" in request_text(changed) and "{{timestamp}}" not in request_text(case):
        missing.append(
            not_converted(case.name, "{{$timestamp}}", "`{{timestamp}}` is in milliseconds, not seconds")
        )
    return changed


def system_text(value: Any) -> Any:
    if isinstance(value, str):
        return _SYSTEM.sub(lambda m: _SAME.get(m.group(1), m.group(0)), value)
    return value


def map_strings(case: DraftCase, change: Callable[[str], str]) -> DraftCase:
    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return change(value)
        if isinstance(value, dict):
            return {walk(k): walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    request = case.request
    return DraftCase(
        **{
            **case_fields(case),
            "request": DraftRequest(
                method=request.method,
                url=walk(request.url),
                headers=walk(request.headers),
                body_kind=request.body_kind,
                body=walk(request.body),
                follow_redirects=request.follow_redirects,
                timeout=request.timeout,
            ),
        }
    )


def case_fields(case: DraftCase) -> dict[str, Any]:
    return {f: getattr(case, f) for f in case.__struct_fields__}


def request_text(case: DraftCase) -> str:
    request = case.request
    return json.dumps([request.url, request.headers, request.body], default=str)
