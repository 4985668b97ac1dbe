"""The operations of a document: what each one accepts and answers, and which one a request is.

An operation is found as the OpenAPI specification says: the path without the servers' base path
(`servers[].url`), matched against the path templates, concrete paths before templated ones
(`/orders/mine` before `/orders/{id}`); then the method. A response is the documented status
(`404`), else its range (`4XX`), else `default`; a media type is the one named, else
`type/*`, else `*/*`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import msgspec

from .source import Place, Sources

__all__ = [
    "HTTP_METHODS",
    "Body",
    "Header",
    "Index",
    "MediaType",
    "Operation",
    "Parameter",
    "Response",
    "media_key",
    "media_type_of",
    "pick_media",
]

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class MediaType(msgspec.Struct, frozen=True, kw_only=True):
    """One media type of a body: its schema where it is, the file it is in (for its `$ref`s), its example."""

    name: str
    schema: Any
    uri: str
    place: Place
    example: Any = None
    has_example: bool = False


class Header(msgspec.Struct, frozen=True, kw_only=True):
    """A documented response header."""

    name: str
    required: bool
    schema: Any
    uri: str
    place: Place


class Parameter(msgspec.Struct, frozen=True, kw_only=True):
    """A documented parameter (`location`: path, query, header, cookie)."""

    name: str
    location: str
    required: bool
    schema: Any
    uri: str
    place: Place
    example: Any = None


class Body(msgspec.Struct, frozen=True, kw_only=True):
    """A documented request body."""

    required: bool
    content: dict[str, MediaType]
    place: Place


class Response(msgspec.Struct, frozen=True, kw_only=True):
    """A documented response: its status key (`200`, `4XX`, `default`), media types and headers."""

    status: str
    content: dict[str, MediaType]
    headers: list[Header]
    place: Place


class Operation(msgspec.Struct, frozen=True, kw_only=True):
    """One method of one path template; `key` is `METHOD /template`."""

    method: str
    template: str
    operation_id: str | None
    parameters: list[Parameter]
    body: Body | None
    responses: dict[str, Response]
    place: Place
    responses_place: Place
    key: str = ""  # `GET /orders/{id}` (set from method and template when left out)

    def __post_init__(self) -> None:
        if not self.key:
            msgspec.structs.force_setattr(self, "key", f"{self.method.upper()} {self.template}")

    def response_for(self, status: int) -> Response | None:
        """The documented response for `status`: exact, else its range (`4XX`), else `default`."""
        return (
            self.responses.get(str(status))
            or self.responses.get(f"{status // 100}XX")
            or self.responses.get(f"{status // 100}xx")
            or self.responses.get("default")
        )


def media_type_of(content_type: str | None) -> str | None:
    """`application/json` of `Application/JSON; charset=utf-8` (None without one)."""
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def pick_media(content: dict[str, MediaType], media: str) -> MediaType | None:
    """The documented media type a body of type `media` is checked against: exact, `type/*`, `*/*`.

    `content` is keyed by bare, lower-case media types (`media_key`), as the loader keeps them.
    """
    return content.get(media) or content.get(media.split("/", 1)[0] + "/*") or content.get("*/*")


def media_key(name: str) -> str:
    """`application/json` of a document's `Application/JSON; charset=utf-8` key."""
    return name.split(";", 1)[0].strip().lower()


class _Template:
    def __init__(self, template: str, item: dict[str, Any]) -> None:
        self.template = template
        self.item = item
        self.params: list[str] = []
        pattern = ""
        for part in re.split(r"(\{[^}/]+\})", template):
            if part.startswith("{") and part.endswith("}"):
                pattern += f"(?P<p{len(self.params)}>[^/]+)"
                self.params.append(part[1:-1])
            else:
                pattern += re.escape(part)
        self.regex = re.compile(pattern.rstrip("/") + "/?$")
        self.literal = not self.params
        self.literal_length = len(re.sub(r"\{[^}/]+\}", "", template))

    def match(self, path: str) -> dict[str, str] | None:
        found = self.regex.match(path)
        if found is None:
            return None
        return {name: found.group(f"p{index}") for index, name in enumerate(self.params)}


class Index:
    """The document's path templates and base paths, to find the operation of a request."""

    def __init__(self, sources: Sources, operations: dict[str, Operation]) -> None:
        root = sources.root.data
        paths = root.get("paths") if isinstance(root, dict) else None
        self.operations = operations
        self.templates = [_Template(t, item) for t, item in (paths or {}).items() if isinstance(item, dict)]
        # Concrete paths first, then the templates with the most literal text.
        self.templates.sort(key=lambda t: (not t.literal, -t.literal_length))
        self.literal = {t.template.rstrip("/") or "/": t for t in self.templates if t.literal}
        self.bases = _base_paths(root)
        self.paths_place = sources.place_at(sources.root.uri, ("paths",), key=True)

    def find(self, method: str, path: str) -> tuple[Operation | None, str | None, dict[str, str]]:
        """The operation of `method path`, else why there is none; and the path parameters' values.

        Returns `(operation, None, params)`, or `(None, reason, {})` where `reason` is `path`
        (no template matches) or `method` (the path exists, the method does not).
        """
        clean = path.split("?", 1)[0].split("#", 1)[0] or "/"
        template_found: _Template | None = None
        params: dict[str, str] = {}
        for candidate in self._candidates(clean):
            literal = self.literal.get(candidate.rstrip("/") or "/")
            if literal is not None:
                template_found, params = literal, {}
                break
            for template in self.templates:
                if template.literal:
                    continue
                matched = template.match(candidate)
                if matched is not None:
                    template_found, params = template, matched
                    break
            if template_found is not None:
                break
        if template_found is None:
            return None, "path", {}
        operation = self.operations.get(f"{method.upper()} {template_found.template}")
        if operation is None:
            return None, "method", params
        return operation, None, params

    def methods_of(self, path: str) -> list[str]:
        """The documented methods of the template `path` matches (for messages)."""
        clean = path.split("?", 1)[0] or "/"
        for candidate in self._candidates(clean):
            for template in self.templates:
                if template.match(candidate) is not None or template.template == candidate:
                    return [m.upper() for m in HTTP_METHODS if m in template.item]
        return []

    def closest(self, path: str) -> str | None:
        """The template most like `path` (for a message about an undocumented path)."""
        import difflib

        options = [t.template for t in self.templates]
        found = difflib.get_close_matches(path.split("?", 1)[0], options, n=1, cutoff=0.4)
        return found[0] if found else None

    def _candidates(self, path: str) -> Iterator[str]:
        for base in self.bases:
            if not base:
                yield path
            elif path == base or path.startswith(base + "/"):
                yield path[len(base) :] or "/"


def _base_paths(root: dict[str, Any]) -> list[str]:
    """The servers' base paths, longest first, and the empty one (a service reached at its root)."""
    bases = {""}
    for server in root.get("servers") or []:
        if not isinstance(server, dict) or not isinstance(server.get("url"), str):
            continue
        url = server["url"]
        for name, variable in (server.get("variables") or {}).items():
            if isinstance(variable, dict) and "default" in variable:
                url = url.replace("{" + name + "}", str(variable["default"]))
        path = urlparse(url).path if "://" in url else url
        bases.add(path.rstrip("/"))
    return sorted(bases, key=len, reverse=True)


def template_segments_match(route: str, template: str) -> bool:
    """Whether a mock route path (`/orders/:id`, `*` segments) can reach a path template."""
    route_parts = route.strip("/").split("/")
    template_parts = template.strip("/").split("/")
    if "*" in route_parts[-1:] and len(template_parts) >= len(route_parts) - 1:
        route_parts = route_parts[:-1]
        template_parts = template_parts[: len(route_parts)]
    if len(route_parts) != len(template_parts):
        return False
    for ours, theirs in zip(route_parts, template_parts, strict=True):
        wild = ours.startswith(":") or ours == "*"
        param = theirs.startswith("{") and theirs.endswith("}")
        if not (wild or param or ours == theirs):
            return False
    return True
