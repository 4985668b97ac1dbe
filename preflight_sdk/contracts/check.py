"""Check one answer, or one request, against the operation of a contract it belongs to.

An answer is checked for what the document promises of it: a documented path and method, a
documented status, a documented media type, a body its schema allows, and every required header.
A request is checked for what the document asks of it: a documented path and method, the
required parameters, each parameter's schema, and the body (required, media type, schema).
Each way it falls short is a `ContractViolation` naming where (`body.items[0].sku`), the rule
(`required`), what the document allows, what was there, and the document's file and line.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from preflight_sdk.core.results.contracts import ContractViolation

from .document import Contract
from .operations import MediaType, Operation, media_type_of, pick_media, template_segments_match
from .schemas import Direction
from .source import Place

__all__ = ["Checked", "check_request", "check_response", "check_route"]

_EXCERPT = 600  # characters of a schema or a value a violation shows
_MAX_VIOLATIONS = 10


class Checked(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of one check: the operation it matched (its key), the status key, the violations."""

    operation: str | None
    status: str | None
    violations: list[ContractViolation]


def check_response(
    contract: Contract,
    owner: str,
    *,
    method: str,
    path: str,
    status: int,
    headers: dict[str, str],
    body: Any,
    root: str | None = None,
) -> Checked:
    """Check an answer to `method path` (`body` as parsed: JSON value, text, or None when empty).

    `owner` names the contract in the violations; `root` (the project's directory) shortens the
    document's file names.
    """
    say = _Say(contract, owner, root)
    operation, reason = _operation(contract, say, method, path)
    if operation is None:
        return Checked(operation=None, status=None, violations=say.found if reason else [])
    return _answer(say, contract, operation, status, headers, body)


def check_route(
    contract: Contract,
    owner: str,
    *,
    method: str,
    route: str,
    status: int,
    headers: dict[str, str],
    body: Any,
    root: str | None = None,
) -> Checked:
    """Check what a mock route answers (its path may hold `:param` and `*`) against its contract.

    Values that are templates (`{{request.body.amount}}`) are filled in per request, so they are
    not held to a schema here.
    """
    say = _Say(contract, owner, root)
    candidates = [
        op
        for op in contract.operations.values()
        if template_segments_match(route, op.template) and (method.upper() in ("ANY", op.method.upper()))
    ]
    if not candidates:
        _unknown_path(say, contract, route, f"{method.upper()} {route}: no operation of the contract matches")
        return Checked(operation=None, status=None, violations=say.found)
    checked = _answer(say, contract, candidates[0], status, headers, body)
    kept = [v for v in checked.violations if not (isinstance(v.actual, str) and "{{" in v.actual)]
    return msgspec.structs.replace(checked, violations=kept)


def _answer(
    say: _Say, contract: Contract, operation: Operation, status: int, headers: dict[str, str], body: Any
) -> Checked:
    say.operation = operation.key
    response = operation.response_for(status)
    if response is None:
        documented = ", ".join(operation.responses) or "none"
        say.add(
            "status",
            "status",
            f"status {status} is not documented for {operation.key} (documented: {documented})",
            operation.responses_place,
            expected=list(operation.responses),
            actual=status,
        )
        return Checked(operation=operation.key, status=None, violations=say.found)
    say.operation = f"{operation.key} → {response.status}"
    lowered = {name.lower(): value for name, value in headers.items()}
    for header in response.headers:
        if header.required and header.name.lower() not in lowered:
            say.add(
                f"headers.{header.name.lower()}",
                "required",
                f"the required header `{header.name}` is missing",
                header.place,
                expected={"name": header.name, "required": True},
            )
    _body(say, contract, response.content, lowered.get("content-type"), body, "body", "read", required=False)
    return Checked(operation=operation.key, status=response.status, violations=say.found)


def check_request(
    contract: Contract,
    owner: str,
    *,
    method: str,
    path: str,
    query: dict[str, str | list[str]],
    headers: dict[str, str],
    body: Any,
    root: str | None = None,
) -> Checked:
    """Check a request to `method path` (as a mock received it) against what the contract asks of it."""
    say = _Say(contract, owner, root)
    operation, reason = _operation(contract, say, method, path)
    if operation is None:
        return Checked(operation=None, status=None, violations=say.found if reason else [])
    say.operation = operation.key
    _, _, params = contract.index.find(method, path)
    lowered = {name.lower(): value for name, value in headers.items()}
    for parameter in operation.parameters:
        if parameter.location == "path":
            value: Any = params.get(parameter.name)
        elif parameter.location == "query":
            value = query.get(parameter.name)
        elif parameter.location == "header":
            value = lowered.get(parameter.name.lower())
        else:
            continue  # cookies are not journaled apart
        where = f"request.{parameter.location}.{parameter.name}"
        if value is None:
            if parameter.required:
                say.add(
                    where,
                    "required",
                    f"the required {parameter.location} parameter `{parameter.name}` is missing",
                    parameter.place,
                    expected={"name": parameter.name, "in": parameter.location, "required": True},
                )
            continue
        if parameter.schema is None:
            continue
        typed = _typed(value, contract, parameter.schema, parameter.uri)
        if not contract.schemas.is_valid(parameter.schema, parameter.uri, typed, "write"):
            for error in contract.schemas.errors(parameter.schema, parameter.uri, typed, "write", limit=3):
                say.schema_error(where, error, typed)
    if operation.body is not None:
        _body(
            say,
            contract,
            operation.body.content,
            lowered.get("content-type"),
            body,
            "request.body",
            "write",
            required=operation.body.required,
            body_place=operation.body.place,
        )
    return Checked(operation=operation.key, status=None, violations=say.found)


class _Say:
    """Collects the violations of one check, worded and located alike."""

    def __init__(self, contract: Contract, owner: str, root: str | None) -> None:
        self.contract = contract
        self.owner = owner
        self.root = root
        self.operation: str | None = None
        self.found: list[ContractViolation] = []

    def add(
        self,
        path: str,
        rule: str,
        message: str,
        place: Place | None,
        *,
        expected: Any = None,
        actual: Any = None,
    ) -> None:
        if len(self.found) >= _MAX_VIOLATIONS:
            return
        self.found.append(
            ContractViolation(
                contract=self.owner,
                operation=self.operation,
                path=path,
                rule=rule,
                message=message,
                expected=_excerpt(expected),
                actual=_excerpt(actual),
                file=self._file(place.file) if place else None,
                line=place.line if place else None,
                pointer=place.pointer if place else None,
            )
        )

    def schema_error(self, prefix: str, error: Any, value: Any) -> None:
        where = prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        keyword = str(error.validator)
        place = self.contract.sources.place(error.schema, keyword) if isinstance(error.schema, dict) else None
        expected = {keyword: error.validator_value} if keyword not in ("$ref",) else error.schema
        if keyword in ("oneOf", "anyOf", "allOf", "not", "discriminator"):
            expected = error.schema  # the alternatives are the rule (capped like any excerpt)
        self.add(where, keyword, f"{where}: {error.message}", place, expected=expected, actual=error.instance)

    def _file(self, path: str) -> str:
        if self.root and path.startswith(self.root.rstrip("/") + "/"):
            return path[len(self.root.rstrip("/")) + 1 :]
        return path


def _operation(contract: Contract, say: _Say, method: str, path: str) -> tuple[Operation | None, str | None]:
    operation, reason, _ = contract.index.find(method, path)
    shown = path.split("?", 1)[0]
    if reason == "path":
        _unknown_path(say, contract, shown, f"{method.upper()} {shown}: the path is not in the contract")
    elif reason == "method":
        methods = contract.index.methods_of(shown)
        say.add(
            "method",
            "method",
            f"{method.upper()} {shown}: the contract documents {', '.join(methods) or 'no method'} "
            f"for this path, not {method.upper()}",
            contract.index.paths_place,
            expected=methods,
            actual=method.upper(),
        )
    return operation, reason


def _unknown_path(say: _Say, contract: Contract, path: str, message: str) -> None:
    """A `path` violation: `message`, then the contract's closest path, if it has one."""
    closest = contract.index.closest(path)
    hint = f" (closest: {closest})" if closest else ""
    say.add("path", "path", f"{message}{hint}", contract.index.paths_place, actual=path)


def _body(
    say: _Say,
    contract: Contract,
    content: dict[str, MediaType],
    content_type: str | None,
    body: Any,
    where: str,
    direction: Direction,
    *,
    required: bool,
    body_place: Place | None = None,
) -> None:
    empty = body is None or body == ""
    if empty:
        if required:
            say.add(where, "required", f"{where}: the request body is required", body_place)
        return
    media = media_type_of(content_type)
    if not content:
        say.add(
            where,
            "body",
            f"{where}: the contract documents no body here, got {media or 'one'}",
            body_place,
            actual=_excerpt(body),
        )
        return
    documented = pick_media(content, media) if media else None
    if documented is None:
        names = list(content)
        say.add(
            "headers.content-type",
            "contentType",
            f"content type {media or '(none)'} is not documented here (documented: {', '.join(names)})",
            next(iter(content.values())).place,
            expected=names,
            actual=media,
        )
        return
    if documented.schema is None or not _is_json(media):
        return
    value = body
    if isinstance(body, str | bytes):
        try:
            value = json.loads(body)
        except ValueError:
            say.add(
                where,
                "type",
                f"{where}: the body is not JSON, though its content type is {media}",
                documented.place,
                actual=_excerpt(body),
            )
            return
    if contract.schemas.is_valid(documented.schema, documented.uri, value, direction):
        return
    for error in contract.schemas.errors(documented.schema, documented.uri, value, direction):
        say.schema_error(where, error, value)


def _is_json(media: str | None) -> bool:
    return media is not None and (media == "application/json" or media.endswith("+json") or media == "*/*")


def _typed(value: Any, contract: Contract, schema: Any, uri: str) -> Any:
    """A parameter's text as the type its schema asks for (`"2"` → 2), as a server would read it."""
    _, resolved = contract.sources.follow(uri, schema)
    kind = resolved.get("type") if isinstance(resolved, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "array":
        items = value if isinstance(value, list) else str(value).split(",")
        item_schema = resolved.get("items") if isinstance(resolved, dict) else None
        return [_typed(item, contract, item_schema, uri) for item in items]
    if isinstance(value, list):
        value = value[-1] if value else ""
    text = str(value)
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


def _excerpt(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else json.dumps(value, default=str, separators=(",", ":"))
    if len(text) <= _EXCERPT:
        return value
    return text[:_EXCERPT] + f"… [{len(text) - _EXCERPT} more characters]"
