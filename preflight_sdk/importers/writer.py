"""Turn a `Draft` into a YAML test file: hosts placed, variables declared, checked by loading it.

The file is written only after it loads as the project would load it (so it runs as written),
through a temporary file beside it, and never over an existing file unless asked.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import yaml

from preflight_sdk.config import load_test_file
from preflight_sdk.core.errors import ConfigError, InputError, PreflightError
from preflight_sdk.core.redaction import DEFAULT, REDACTED, Redactor
from preflight_sdk.core.results.imports import HostMatch, NotConverted

from .hosts import Placed, Target, place
from .model import UNMERGED, Draft, DraftCase, not_converted, template_names, tidy

__all__ = ["Rendered", "render", "write_test_file"]

_MAX_LISTED = 40


class _Dumper(yaml.SafeDumper):
    """YAML without anchors: a test file reads top to bottom, each check written where it applies."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class Rendered(msgspec.Struct, frozen=True, kw_only=True):
    """A test file's text and what the conversion decided on the way."""

    text: str
    cases: int
    hosts: list[HostMatch]
    variables_needed: list[str]
    not_converted: list[NotConverted]


def render(
    draft: Draft,
    *,
    source: str,
    format_name: str,
    targets: list[Target],
    asked: Mapping[str, str],
    redactor: Redactor = DEFAULT,
) -> Rendered:
    """The YAML of `draft`, with each request's host placed on a service or mock where one matches.

    A header the redaction policy calls secret (`Authorization`, `X-Api-Key`) with a value
    written out in the source is read from the environment instead: no secret is copied.
    """
    placed = [place(case.request.url, draft.variables, targets, asked) for case in draft.cases]
    services = Counter(p.service for p in placed if p.service)
    default = services.most_common(1)[0][0] if services else None
    cases = [_case(case, where, default) for case, where in zip(draft.cases, placed, strict=True)]
    _distinct_names(cases)
    secret_headers = _secret_headers(cases, redactor)
    variables, needed = _variables(draft, cases)
    needed += [name for name in secret_headers if name not in needed]
    missing = [
        msgspec.structs.replace(item, source=_redacted(item.source, redactor))
        for item in [
            *draft.not_converted,
            *(
                not_converted(case.name, check, "it conflicts with another check on the same place")
                for case in draft.cases
                for check in case.expect.get(UNMERGED, [])
            ),
        ]
    ]
    document: dict[str, Any] = {"name": draft.name}
    if draft.description:
        document["description"] = draft.description.strip()
    if default is not None:
        document["service"] = default
    if variables:
        document["variables"] = variables
    document["cases"] = cases
    body = yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False
    )
    return Rendered(
        text=_header(source, format_name, missing, needed) + body,
        cases=len(cases),
        hosts=_hosts(placed),
        variables_needed=needed,
        not_converted=missing,
    )


def _case(case: DraftCase, where: Placed, default: str | None) -> dict[str, Any]:
    step: dict[str, Any] = {"name": case.name}
    if case.description:
        step["description"] = case.description.strip()
    if case.skip is not None:
        step["skip"] = case.skip
    if case.delay is not None:
        step["delay"] = case.delay
    request: dict[str, Any] = {"method": case.request.method}
    if where.path is not None:
        request["path"] = where.path
        if where.service != default:
            request["service"] = where.service
    else:
        request["url"] = where.url
    if case.request.headers:
        request["headers"] = dict(case.request.headers)
    kind = case.request.body_kind
    if kind == "json":
        request["json"] = case.request.body
    elif kind == "text":
        request["body"] = case.request.body
    elif kind == "form":
        request["form"] = case.request.body
    if case.request.follow_redirects is not None:
        request["followRedirects"] = case.request.follow_redirects
    if case.request.timeout is not None:
        request["timeout"] = case.request.timeout
    step["request"] = request
    expect = {k: v for k, v in case.expect.items() if k != UNMERGED}
    if expect:
        step["expect"] = {k: tidy(v) if k in ("body", "all") else v for k, v in expect.items()}
    if case.save:
        step["save"] = dict(case.save)
    if case.retry:
        step["retry"] = case.retry
    return step


_NAMED_ARGUMENT = re.compile(r"""(['"])([\w.-]+)\1(\s*,\s*)(['"`])(.*?)\4""")


def _redacted(text: str, redactor: Redactor) -> str:
    """Script text through the policy, and `set("password", "…")`-style calls too."""

    def hide(match: re.Match[str]) -> str:
        if not redactor.secret(match.group(2)):
            return match.group(0)
        quote = match.group(4)
        return f"{match.group(1)}{match.group(2)}{match.group(1)}{match.group(3)}{quote}{REDACTED}{quote}"

    return _NAMED_ARGUMENT.sub(hide, redactor.text(text))


def _secret_headers(cases: list[dict[str, Any]], redactor: Redactor) -> list[str]:
    """Move written-out values of secret headers to the environment; return the variables' names."""
    names: list[str] = []
    for case in cases:
        headers = case["request"].get("headers", {})
        for header, value in headers.items():
            if redactor.secret(header) and isinstance(value, str) and value and "{{" not in value:
                name = _env_name(header.upper())
                headers[header] = "{{env." + name + "}}"
                names.append(name)
    return list(dict.fromkeys(names))


def _distinct_names(cases: list[dict[str, Any]]) -> None:
    """Case names are unique in a test file: a repeated one gets ` (2)`, ` (3)`…"""
    seen: Counter[str] = Counter()
    taken = {case["name"] for case in cases}
    for case in cases:
        name = case["name"]
        seen[name] += 1
        if seen[name] > 1:
            number = seen[name]
            while f"{name} ({number})" in taken:
                number += 1
            case["name"] = f"{name} ({number})"
            taken.add(case["name"])


def _variables(draft: Draft, cases: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The file's `variables`: those the cases use, secrets and unknown ones from the environment."""
    used = list(dict.fromkeys(template_names(cases)))
    saved = {name for case in cases for name in case.get("save", {})}
    declared: dict[str, Any] = {}
    needed: list[str] = []
    wanted = list(dict.fromkeys(n for n in used if n not in saved))
    # a variable's value may itself use others, which then are wanted too
    index = 0
    while index < len(wanted):
        name = wanted[index]
        index += 1
        if name in draft.variables and name not in draft.secret_variables:
            for inner in template_names(draft.variables[name]):
                if inner not in wanted and inner not in saved:
                    wanted.append(inner)
    for name in draft.variables:  # the source's order, so a value uses only the ones before it
        if name in wanted and name not in draft.secret_variables:
            declared[name] = draft.variables[name]
    for name in wanted:
        if name not in declared:
            declared[name] = "{{env." + _env_name(name) + "}}"
            needed.append(_env_name(name))
    return declared, needed


def _env_name(name: str) -> str:
    return re.sub(r"\W", "_", name) or "VALUE"


def _hosts(placed: list[Placed]) -> list[HostMatch]:
    counts = Counter((p.found, p.target, p.how) for p in placed)
    return [
        HostMatch(found=found, target=target, how=how, requests=count)
        for (found, target, how), count in counts.items()
    ]


def _header(source: str, format_name: str, missing: list[NotConverted], needed: list[str]) -> str:
    lines = [f"# Converted by `preflight import` from {source} ({format_name})."]
    if needed:
        lines.append(f"# Read from the environment: {', '.join(needed)}.")
    if missing:
        lines.append(f"# Not converted ({len(missing)}):")
        for item in missing[:_MAX_LISTED]:
            lines.append(f"#   {item.place}: {item.source}  ({item.reason})".replace("\n", " "))
        if len(missing) > _MAX_LISTED:
            lines.append(f"#   … and {len(missing) - _MAX_LISTED} more (see the import result)")
    return "\n".join(lines) + "\n"


def write_test_file(text: str, target: Path, *, overwrite: bool) -> None:
    """Check `text` loads as a test file, then write it to `target` (never over a file unless asked).

    Raises:
        InputError: `INVALID_INPUT` when `target` exists and `overwrite` is false.
        PreflightError: `INTERNAL` when the converted file does not load (a bug of the converter).
    """
    if target.exists() and not overwrite:
        raise _exists(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(prefix=f".{target.stem}-", suffix=target.suffix, dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        check_loads(Path(scratch))
        if overwrite:
            os.replace(scratch, target)
        else:
            try:
                os.link(scratch, target)  # fails if the file appeared meanwhile: never replaced
            except FileExistsError:
                raise _exists(target) from None
    finally:
        Path(scratch).unlink(missing_ok=True)


def check_loads(path: Path) -> None:
    """Load `path` as the runner would; a failure is ours, not the caller's."""
    try:
        load_test_file(path)
    except ConfigError as exc:
        raise PreflightError(
            f"the converted test file does not load: {exc}",
            code="INTERNAL",
            hint="report it with the source file; the not-converted parts may be the cause",
        ) from exc


def _exists(target: Path) -> InputError:
    return InputError(
        f"{target} already exists",
        hint="pass `overwrite: true` to replace it, or choose another `output`",
        details={"path": str(target)},
    )
