"""Postman collections (format v2.1, and v2.0 where it is the same) as a test-file draft.

The collection is decoded into Structs over the published v2.1 schema (unknown fields ignored:
Postman adds its own). Each request becomes a case named by its folders and its name
(`Auth / Login`); collection variables and an environment's enabled values become the file's
variables (an environment wins; a secret one is read from the environment instead); folder and
collection auth is inherited (`bearer`, `basic`, `apikey`); raw, urlencoded and GraphQL bodies
convert; test scripts convert as far as `postman_scripts` reads them. What does not convert is
listed with its place: pre-request scripts, other auth types, multipart and file bodies, disabled
requests' options, and every script line left.

No Python library parses collections better than these few Structs (Postman's own SDK is
JavaScript), so there is no dependency for it.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec

from preflight_sdk.core.errors import InputError
from preflight_sdk.core.redaction import DEFAULT, Redactor

from .dynamic import system_text, system_variables
from .model import Draft, DraftCase, DraftRequest, not_converted
from .postman_scripts import read_test_script

__all__ = ["read_postman"]


class _Loose(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=False):
    pass


class Variable(_Loose, frozen=True, kw_only=True):
    key: str | None = None
    id: str | None = None
    value: Any = None
    type: str | None = None
    disabled: bool = False
    enabled: bool = True


class Header(_Loose, frozen=True, kw_only=True):
    key: str = ""
    value: Any = ""
    disabled: bool = False


class Param(_Loose, frozen=True, kw_only=True):
    key: str | None = None
    value: Any = None
    disabled: bool = False
    type: str | None = None
    src: Any = None


class Url(_Loose, frozen=True, kw_only=True):
    raw: str = ""
    protocol: str | None = None
    host: list[str] | str | None = None
    port: str | None = None
    path: list[Any] | str | None = None
    query: list[Param] = msgspec.field(default_factory=list)
    variable: list[Variable] = msgspec.field(default_factory=list)


class GraphQl(_Loose, frozen=True, kw_only=True):
    query: str = ""
    variables: Any = None


class Body(_Loose, frozen=True, kw_only=True):
    mode: str = ""
    raw: str = ""
    urlencoded: list[Param] = msgspec.field(default_factory=list)
    formdata: list[Param] = msgspec.field(default_factory=list)
    graphql: GraphQl | None = None
    file: Any = None
    disabled: bool = False


class AuthAttribute(_Loose, frozen=True, kw_only=True):
    key: str = ""
    value: Any = None


class Auth(_Loose, frozen=True, kw_only=True):
    type: str = "noauth"
    bearer: list[AuthAttribute] | dict[str, Any] | None = None
    basic: list[AuthAttribute] | dict[str, Any] | None = None
    apikey: list[AuthAttribute] | dict[str, Any] | None = None


class Script(_Loose, frozen=True, kw_only=True):
    exec: list[str] | str = msgspec.field(default_factory=list)
    type: str | None = None


class Event(_Loose, frozen=True, kw_only=True):
    listen: str = ""
    script: Script | None = None
    disabled: bool = False


class Request(_Loose, frozen=True, kw_only=True):
    method: str = "GET"
    url: Url | str | None = None
    header: list[Header] | str = msgspec.field(default_factory=list)
    body: Body | None = None
    auth: Auth | None = None
    description: Any = None


class Item(_Loose, frozen=True, kw_only=True):
    name: str = ""
    description: Any = None
    item: list[Item] | None = None
    request: Request | str | None = None
    event: list[Event] = msgspec.field(default_factory=list)
    auth: Auth | None = None
    variable: list[Variable] = msgspec.field(default_factory=list)


class Info(_Loose, frozen=True, kw_only=True):
    name: str = "Postman collection"
    description: Any = None
    schema: str = ""


class Collection(_Loose, frozen=True, kw_only=True):
    info: Info
    item: list[Item]
    variable: list[Variable] = msgspec.field(default_factory=list)
    auth: Auth | None = None
    event: list[Event] = msgspec.field(default_factory=list)


class Environment(_Loose, frozen=True, kw_only=True):
    name: str = ""
    values: list[Variable] = msgspec.field(default_factory=list)


def read_postman(data: bytes, *, environment: bytes | None = None, redactor: Redactor = DEFAULT) -> Draft:
    """The draft of a collection (and an environment's values).

    Raises:
        InputError: `INVALID_INPUT` for a file that is not a v2.0/v2.1 collection or environment.
    """
    collection = _decode(data, Collection, "a Postman collection (v2.1)")
    if "v1." in collection.info.schema:
        raise InputError("this is a Postman collection v1", hint="export it from Postman as Collection v2.1")
    variables, secrets = _variables(collection.variable, redactor)
    if environment is not None:
        env = _decode(environment, Environment, "a Postman environment")
        extra, extra_secrets = _variables(env.values, redactor)
        variables.update(extra)
        secrets += [s for s in extra_secrets if s not in secrets]
    builder = _Builder()
    builder.events("collection", collection.event)
    builder.items(collection.item, [], collection.auth, variables)
    return Draft(
        name=collection.info.name,
        description=_text(collection.info.description),
        variables={k: system_text(v) for k, v in variables.items() if k not in secrets},
        secret_variables=secrets,
        cases=[system_variables(case, builder.missing) for case in builder.cases],
        not_converted=builder.missing,
        notes=builder.notes,
    )


def _decode(data: bytes, typ: type[Any], what: str) -> Any:
    try:
        return msgspec.json.decode(data, type=typ)
    except msgspec.ValidationError as exc:
        raise InputError(
            f"the file is not {what}: {exc}", hint="export it from Postman (Export, Collection v2.1)"
        ) from None
    except msgspec.DecodeError as exc:
        raise InputError(
            f"the file is not JSON: {exc}", hint="give a Postman collection exported as JSON"
        ) from None


def _variables(entries: list[Variable], redactor: Redactor) -> tuple[dict[str, Any], list[str]]:
    values: dict[str, Any] = {}
    secrets: list[str] = []
    for entry in entries:
        name = entry.key or entry.id
        if not name or entry.disabled or not entry.enabled:
            continue
        values[name] = entry.value if entry.value is not None else ""
        if entry.type == "secret" or redactor.secret(name):
            secrets.append(name)
    return values, secrets


class _Builder:
    def __init__(self) -> None:
        self.cases: list[DraftCase] = []
        self.missing: list[Any] = []
        self.notes: list[str] = []

    def items(
        self, items: list[Item], folders: list[str], auth: Auth | None, variables: dict[str, Any]
    ) -> None:
        for item in items:
            place = " / ".join([*folders, item.name or "(unnamed)"])
            if item.variable:
                names = ", ".join(v.key or v.id or "?" for v in item.variable)
                self.missing.append(
                    not_converted(place, names, "folder variables: move them to the collection")
                )
            if item.item is not None:
                self.events(place, item.event)
                self.items(item.item, [*folders, item.name], item.auth or auth, variables)
            elif item.request is not None:
                self.request(place, item, auth)

    def events(self, place: str, events: list[Event]) -> None:
        for event in events:
            lines = _lines(event.script)
            if any(line.strip() for line in lines):
                self.missing.append(
                    not_converted(
                        f"{place} › {event.listen} script",
                        " ".join(line.strip() for line in lines if line.strip()),
                        "a collection or folder script runs around every request: put its checks in the cases",
                    )
                )

    def request(self, place: str, item: Item, inherited: Auth | None) -> None:
        request = item.request if isinstance(item.request, Request) else Request(url=item.request)
        headers = {
            h.key: str(h.value)
            for h in (request.header if isinstance(request.header, list) else [])
            if h.key and not h.disabled
        }
        if isinstance(request.header, str) and request.header.strip():
            self.missing.append(
                not_converted(place, request.header, "headers as one string: give them as a list")
            )
        self._auth(place, request.auth or item.auth or inherited, headers)
        body_kind, body = self._body(place, request.body, headers)
        expect: dict[str, Any] = {}
        save: dict[str, str] = {}
        for event in item.event:
            lines = _lines(event.script)
            if event.disabled or not any(line.strip() for line in lines):
                continue
            if event.listen != "test":
                self.missing.append(
                    not_converted(
                        f"{place} › {event.listen} script",
                        " ".join(lines),
                        "pre-request scripts do not convert",
                    )
                )
                continue
            reading = read_test_script(lines)
            expect, save = reading.expect, reading.save
            for number, text, reason in reading.left:
                self.missing.append(not_converted(f"{place} › test script line {number}", text, reason))
        self.cases.append(
            DraftCase(
                name=place,
                description=_text(item.description) or _text(request.description),
                request=DraftRequest(
                    method=(request.method or "GET").upper(),
                    url=_url(request.url),
                    headers=headers,
                    body_kind=body_kind,
                    body=body,
                ),
                expect=expect,
                save=save,
            )
        )

    def _auth(self, place: str, auth: Auth | None, headers: dict[str, str]) -> None:
        if auth is None or auth.type in ("noauth", ""):
            return
        values = _attributes(getattr(auth, auth.type, None))
        if auth.type == "bearer" and "token" in values:
            headers.setdefault("Authorization", f"Bearer {values['token']}")
        elif auth.type == "basic" and "{{" not in str(values.get("username", "")) + str(
            values.get("password", "")
        ):
            pair = f"{values.get('username', '')}:{values.get('password', '')}".encode()
            headers.setdefault("Authorization", "Basic " + base64.b64encode(pair).decode())
        elif auth.type == "apikey" and values.get("in", "header") == "header" and values.get("key"):
            headers.setdefault(str(values["key"]), str(values.get("value", "")))
        else:
            self.missing.append(
                not_converted(
                    place, f"auth: {auth.type}", "this auth type does not convert: set its header in the case"
                )
            )

    def _body(self, place: str, body: Body | None, headers: dict[str, str]) -> tuple[Any, Any]:
        if body is None or body.disabled or not body.mode:
            return "none", None
        if body.mode == "raw":
            if not body.raw.strip():
                return "none", None
            content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            if "json" in content_type or body.raw.lstrip().startswith(("{", "[")):
                try:
                    return "json", json.loads(body.raw)
                except ValueError:
                    pass  # e.g. `{"n": {{count}}}`: sent as written
            return "text", body.raw
        if body.mode == "urlencoded":
            return "form", {p.key: str(p.value or "") for p in body.urlencoded if p.key and not p.disabled}
        if body.mode == "graphql" and body.graphql is not None:
            variables = body.graphql.variables
            if isinstance(variables, str):
                try:
                    variables = json.loads(variables) if variables.strip() else None
                except ValueError:
                    variables = None
            return "json", {"query": body.graphql.query, **({"variables": variables} if variables else {})}
        self.missing.append(
            not_converted(place, f"body: {body.mode}", "multipart and file bodies do not convert")
        )
        return "none", None


def _attributes(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {a.key: a.value for a in value if isinstance(a, AuthAttribute)}
    return {}


def _lines(script: Script | None) -> list[str]:
    if script is None:
        return []
    return script.exec.splitlines() if isinstance(script.exec, str) else list(script.exec)


def _url(url: Url | str | None) -> str:
    if url is None:
        return ""
    if isinstance(url, str):
        return url
    raw = url.raw
    if not raw:
        host = ".".join(url.host) if isinstance(url.host, list) else url.host or ""
        path = "/".join(str(p) for p in url.path) if isinstance(url.path, list) else url.path or ""
        raw = (
            (f"{url.protocol}://" if url.protocol else "")
            + host
            + (f":{url.port}" if url.port else "")
            + "/"
            + path
        )
    base, _, _query = raw.partition("?")
    for variable in url.variable:  # path variables: `/users/:id`
        if variable.key:
            base = base.replace(f":{variable.key}", str(variable.value or ""))
    query = [p for p in url.query if p.key and not p.disabled]
    if query or url.query:
        pairs = [f"{p.key}={p.value if p.value is not None else ''}" for p in query]
        return base + ("?" + "&".join(pairs) if pairs else "")
    return raw if not url.variable else base + (f"?{_query}" if _query else "")


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        content = value.get("content")
        return content if isinstance(content, str) and content else None
    return None
