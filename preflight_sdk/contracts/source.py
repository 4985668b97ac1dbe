"""Read an OpenAPI document and every file its `$ref`s reach, remembering where each value is.

The files are parsed with positions (`core/yaml_source`: JSON is read as the YAML it also is),
so anything found later, a schema rule an answer broke or a route a document forbids, can be named
by file and line. Every mapping and list of every file is indexed by identity: a JSON Schema
validator hands back the very schema object that failed, and `Sources.place` says where it is.

`$ref`s are followed eagerly: a file that is missing, unreadable or not YAML/JSON, a pointer that
leads nowhere, or a reference to the network is a problem at the line of the `$ref` itself, found
when the document loads rather than when a case first needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import msgspec

from preflight_sdk.core.errors import ConfigProblem
from preflight_sdk.core.yaml_source import ParsedYaml, PathKey, parse_yaml

__all__ = ["MAX_DOCUMENT_BYTES", "Place", "SourceFile", "Sources", "pointer_of", "read_sources"]

MAX_DOCUMENT_BYTES = 20_000_000
MAX_FILES = 200
_MAX_NODES = 2_000_000


class Place(msgspec.Struct, frozen=True, kw_only=True):
    """Where a value is: its file (absolute), line (1-based) and JSON pointer in that file."""

    file: str
    line: int | None
    pointer: str


class SourceFile(msgspec.Struct, frozen=True, kw_only=True):
    """One file of a document: its URI, path, data and positions."""

    uri: str
    path: str
    data: Any
    parsed: ParsedYaml


def pointer_of(path: PathKey) -> str:
    """Return `path` as a JSON pointer fragment: `#/paths/~1orders/get`."""
    parts = (str(p).replace("~", "~0").replace("/", "~1") for p in path)
    return "#/" + "/".join(parts) if path else "#"


class Sources:
    """The files of one document, by URI, with an identity index of their containers."""

    def __init__(self, root: SourceFile, files: dict[str, SourceFile]) -> None:
        self.root = root
        self.files = files
        self._ids: dict[int, tuple[str, PathKey]] = {}
        for file in files.values():
            self._index(file.uri, file.data, ())

    def _index(self, uri: str, value: Any, path: PathKey) -> None:
        stack = [(value, path)]
        while stack:
            item, where = stack.pop()
            if isinstance(item, dict):
                self._ids.setdefault(id(item), (uri, where))
                stack.extend((child, (*where, key)) for key, child in item.items())
            elif isinstance(item, list):
                self._ids.setdefault(id(item), (uri, where))
                stack.extend((child, (*where, index)) for index, child in enumerate(item))

    def where(self, value: Any) -> tuple[str, PathKey] | None:
        """The URI and path of a mapping or list of these files (None for anything else)."""
        return self._ids.get(id(value))

    def place(self, value: Any, keyword: str | None = None) -> Place | None:
        """Where `value` (a mapping or list of these files) is; with `keyword`, where that key of it is."""
        found = self.where(value)
        if found is None:
            return None
        uri, path = found
        return self.place_at(uri, (*path, keyword) if keyword is not None else path, key=keyword is not None)

    def place_at(self, uri: str, path: PathKey, *, key: bool = False) -> Place:
        """Where `path` of file `uri` is (its key's line with `key`, else its value's)."""
        file = self.files[uri]
        location = file.parsed.locate(path, key=key)
        return Place(file=file.path, line=location.line if location else None, pointer=pointer_of(path))

    def follow(self, uri: str, value: Any) -> tuple[str, Any]:
        """`value` (written in file `uri`) with its `$ref`s followed: the file and value it stands for.

        A reference that leads nowhere, or a chain longer than 32, gives None as the value.
        """
        for _ in range(32):
            if not (isinstance(value, dict) and isinstance(value.get("$ref"), str)):
                return uri, value
            target = self.resolve(uri, value["$ref"])
            if target is None:
                return uri, None
            uri, value = target
        return uri, None

    def resolve(self, uri: str, ref: str) -> tuple[str, Any] | None:
        """Follow `ref`, written in file `uri`: the target's file URI and value (None when it leads nowhere)."""
        target, fragment = urldefrag(urljoin(uri, ref))
        file = self.files.get(target)
        if file is None:
            return None
        value = _follow(file.data, fragment)
        return None if value is _NOWHERE else (target, value)


def read_sources(
    path: Path | None, *, text: str | None = None, origin: str | None = None
) -> tuple[Sources | None, list[ConfigProblem]]:
    """Read the document at `path` and every file its `$ref`s reach (or `text`, served at `origin`).

    Returns the sources (None when the root file cannot be read at all) and every problem found,
    each with its file and line. A served document may refer only to itself.
    """
    problems: list[ConfigProblem] = []
    if path is not None:
        root_uri = path.resolve().as_uri()
        root = _read_file(root_uri, problems, referrer=None)
    else:
        root_uri = origin or "served:"
        root = _parse_text(text or "", root_uri, root_uri, problems, referrer=None)
    if root is None:
        return None, problems
    files = {root_uri: root}
    queue = [root]
    while queue:
        current = queue.pop()
        for ref, ref_path in _refs(current.data):
            target, _ = urldefrag(urljoin(current.uri, ref))
            if target in files:
                continue
            at = current.parsed.problem((*ref_path, "$ref"), "", file=current.path)
            if urlparse(target).scheme != "file":
                problems.append(
                    _at(
                        at,
                        f"`$ref: {ref}` points to the network; copy that document into the project and refer to the file",
                    )
                )
                continue
            if len(files) >= MAX_FILES:
                problems.append(_at(at, f"the document refers to more than {MAX_FILES} files"))
                return Sources(root, files), problems
            loaded = _read_file(target, problems, referrer=at)
            if loaded is not None:
                files[target] = loaded
                queue.append(loaded)
    sources = Sources(root, files)
    for file in files.values():
        for ref, ref_path in _refs(file.data):
            target, fragment = urldefrag(urljoin(file.uri, ref))
            if target in files and _follow(files[target].data, fragment) is _NOWHERE:
                at = file.parsed.problem((*ref_path, "$ref"), "", file=file.path)
                problems.append(
                    _at(at, f"`$ref: {ref}` leads nowhere: no `{fragment or '#'}` in {_name(target)}")
                )
    return sources, problems


def _read_file(
    uri: str, problems: list[ConfigProblem], *, referrer: ConfigProblem | None
) -> SourceFile | None:
    path = Path(unquote(urlparse(uri).path))
    name = str(path)

    def fail(message: str) -> None:
        if referrer is not None:
            problems.append(_at(referrer, f"the file it refers to, {name}, {message}"))
        else:
            problems.append(ConfigProblem(path="$", message=message, file=name))

    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            fail(f"is {size} bytes; a contract may be at most {MAX_DOCUMENT_BYTES}")
            return None
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        fail("does not exist")
        return None
    except IsADirectoryError:
        fail("is a directory")
        return None
    except OSError as exc:
        fail(f"cannot be read: {exc.strerror or exc}")
        return None
    except UnicodeDecodeError as exc:
        fail(f"is not UTF-8 text ({exc.reason})")
        return None
    return _parse_text(text, uri, name, problems, referrer=referrer)


def _parse_text(
    text: str, uri: str, name: str, problems: list[ConfigProblem], *, referrer: ConfigProblem | None
) -> SourceFile | None:
    if len(text) > MAX_DOCUMENT_BYTES:
        problems.append(
            ConfigProblem(
                path="$", message=f"the document is larger than {MAX_DOCUMENT_BYTES} bytes", file=name
            )
        )
        return None
    parsed = parse_yaml(text, file=name, max_nodes=_MAX_NODES)
    problems.extend(parsed.problems)
    if parsed.data is None and not parsed.problems:
        message = "is empty"
        problems.append(
            _at(referrer, f"the file it refers to, {name}, {message}")
            if referrer
            else ConfigProblem(path="$", message=f"the document {message}", file=name)
        )
    if parsed.data is None:
        return None
    return SourceFile(uri=uri, path=name, data=parsed.data, parsed=parsed)


def _refs(data: Any) -> list[tuple[str, PathKey]]:
    """Every `$ref` string in `data`, with the path of the mapping that holds it."""
    found: list[tuple[str, PathKey]] = []
    stack: list[tuple[Any, PathKey]] = [(data, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.append((ref, path))
            stack.extend((child, (*path, key)) for key, child in item.items() if key != "$ref")
        elif isinstance(item, list):
            stack.extend((child, (*path, index)) for index, child in enumerate(item))
    return found


_NOWHERE: Any = object()


def _follow(data: Any, fragment: str) -> Any:
    """The value at JSON pointer `fragment` (`/a/b~1c`) of `data`, or `_NOWHERE`."""
    if not fragment:
        return data
    if not fragment.startswith("/"):
        return _NOWHERE  # anchors ($anchor, $id) are not followed across files
    value = data
    for raw in fragment[1:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _NOWHERE
    return value


def _at(where: ConfigProblem, message: str) -> ConfigProblem:
    return msgspec.structs.replace(where, message=message)


def _name(uri: str) -> str:
    return Path(unquote(urlparse(uri).path)).name
