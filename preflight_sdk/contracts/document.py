"""Load an OpenAPI 3.0 or 3.1 document (JSON or YAML, `$ref`s across files) into a `Contract`.

A document is accepted only when it loads whole: readable files, YAML or JSON, `$ref`s that lead
somewhere, an `openapi` of 3.0.x or 3.1.x, the structure the specification requires (checked by
openapi-spec-validator, the reference validator of OpenAPI documents), and schemas valid in their
dialect. Every problem comes back with its file and line, for the configuration to report as
`CONFIG_INVALID`. A loaded contract is kept per file while no file of it changes.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Literal

from preflight_sdk.core.errors import ConfigProblem
from preflight_sdk.core.yaml_source import PathKey

from .operations import (
    HTTP_METHODS,
    Body,
    Header,
    Index,
    MediaType,
    Operation,
    Parameter,
    Response,
    media_key,
)
from .schemas import Schemas
from .source import Sources, read_sources

__all__ = ["Contract", "load_contract", "load_contract_text"]


class Contract:
    """One loaded document: its operations, how to find them, and how to validate against them."""

    def __init__(
        self, sources: Sources, version: Literal["3.0", "3.1"], operations: dict[str, Operation]
    ) -> None:
        self.sources = sources
        self.version = version
        self.path = sources.root.path
        self.operations = operations
        self.index = Index(sources, operations)
        self.schemas = Schemas(sources, version)
        info = sources.root.data.get("info") if isinstance(sources.root.data, dict) else None
        self.title = (
            str(info.get("title")) if isinstance(info, dict) and info.get("title") else Path(self.path).name
        )

    @property
    def files(self) -> list[str]:
        """Every file the document was read from, the root first."""
        return [file.path for file in self.sources.files.values()]


def load_contract(path: Path) -> tuple[Contract | None, list[ConfigProblem]]:
    """Load the document at `path`; the contract, or None and every problem (with file and line)."""
    key = str(path.resolve())
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and cached[0] == _stamp(cached[1].files):
        return cached[1], []
    contract, problems = _load(path)
    if contract is not None and not problems:
        with _LOCK:
            if len(_CACHE) >= 64:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = (_stamp(contract.files), contract)
    return (None if problems else contract), problems


def load_contract_text(text: str, origin: str) -> tuple[Contract | None, list[ConfigProblem]]:
    """Load a document a service serves (`origin` is its URL); it may refer only to itself."""
    sources, problems = read_sources(None, text=text, origin=origin)
    return _built(sources, problems)


_CACHE: dict[str, tuple[tuple[tuple[str, int, int], ...], Contract]] = {}
_LOCK = threading.Lock()  # suites of a parallel run may load contracts from worker threads


def _stamp(files: list[str]) -> tuple[tuple[str, int, int], ...]:
    stamps = []
    for file in files:
        try:
            stat = Path(file).stat()
        except OSError:
            return ()
        stamps.append((file, stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def _load(path: Path) -> tuple[Contract | None, list[ConfigProblem]]:
    sources, problems = read_sources(path)
    return _built(sources, problems)


def _built(
    sources: Sources | None, problems: list[ConfigProblem]
) -> tuple[Contract | None, list[ConfigProblem]]:
    if sources is None or problems:
        return None, problems
    root = sources.root
    data = root.data
    if not isinstance(data, dict):
        return None, [
            ConfigProblem(
                path="$", message="an OpenAPI document is a mapping with `openapi:`", file=root.path, line=1
            )
        ]
    version = _version(data, sources, problems)
    if version is None:
        return None, problems
    operations = _Builder(sources, problems).operations()
    contract = Contract(sources, version, operations)
    # The schemas first: their problems are located exactly, in whichever file they are.
    seen: set[int] = set()
    for operation in operations.values():
        for schema, uri in _schemas_of(operation):
            problems.extend(contract.schemas.check(schema, uri, seen))
    if not problems:
        problems.extend(_structure(data, version, root.uri, sources))
    return (None if problems else contract), problems


def _version(
    data: dict[str, Any], sources: Sources, problems: list[ConfigProblem]
) -> Literal["3.0", "3.1"] | None:
    root = sources.root
    written = data.get("openapi")
    if written is None:
        if "swagger" in data:
            message = (
                f"this is a Swagger {data['swagger']} document; contracts are OpenAPI 3.0 or 3.1 "
                "(convert it first, e.g. with swagger2openapi)"
            )
        else:
            message = "no `openapi:` version: an OpenAPI document starts with `openapi: 3.1.0` (or 3.0.x)"
        problems.append(
            root.parsed.problem(("swagger",) if "swagger" in data else (), message, file=root.path)
        )
        return None
    text = str(written)
    if text.startswith("3.0"):
        return "3.0"
    if text.startswith("3.1"):
        return "3.1"
    problems.append(
        root.parsed.problem(
            ("openapi",), f"`openapi: {text}` is not supported: use 3.0.x or 3.1.x", file=root.path
        )
    )
    return None


def _structure(data: dict[str, Any], version: str, base_uri: str, sources: Sources) -> list[ConfigProblem]:
    """What openapi-spec-validator finds wrong with the document's structure, located in the root file."""
    import jsonschema
    from openapi_spec_validator import OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

    cls = OpenAPIV30SpecValidator if version == "3.0" else OpenAPIV31SpecValidator
    root = sources.root
    problems: list[ConfigProblem] = []
    try:
        for error in cls(data, base_uri=base_uri).iter_errors():
            best = error
            if isinstance(error, jsonschema.ValidationError) and error.context:
                best = jsonschema.exceptions.best_match(error.context) or error
            path = _in_data(data, tuple(getattr(best, "absolute_path", ()) or ()))
            message = str(getattr(best, "message", best)).split("\n", 1)[0]
            if path is not None:
                problems.append(root.parsed.problem(path, message, file=root.path))
            else:
                problems.append(
                    ConfigProblem(
                        path="$", message=f"in a file the document refers to: {message}", file=root.path
                    )
                )
            if len(problems) >= 20:
                break
    except Exception as exc:  # the validator's own failures (a loop of references…) are a problem too
        problems.append(
            ConfigProblem(path="$", message=f"the document cannot be checked: {exc}", file=root.path)
        )
    return problems


def _in_data(data: Any, path: PathKey) -> PathKey | None:
    """`path` as the keys of `data` spell it (a status written `"200"` may come back as 200), or None."""
    value = data
    found: list[str | int] = []
    for part in path:
        if isinstance(value, dict) and (part in value or str(part) in value):
            key = part if part in value else str(part)
            found.append(key)
            value = value[key]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            found.append(part)
            value = value[part]
        else:
            return None
    return tuple(found)


def _schemas_of(operation: Operation) -> list[tuple[Any, str]]:
    found: list[tuple[Any, str]] = [(p.schema, p.uri) for p in operation.parameters if p.schema is not None]
    if operation.body is not None:
        found += [(m.schema, m.uri) for m in operation.body.content.values() if m.schema is not None]
    for response in operation.responses.values():
        found += [(m.schema, m.uri) for m in response.content.values() if m.schema is not None]
        found += [(h.schema, h.uri) for h in response.headers if h.schema is not None]
    return found


class _Builder:
    """Walks `paths` (following `$ref`s of path items, parameters, bodies, responses, headers)."""

    def __init__(self, sources: Sources, problems: list[ConfigProblem]) -> None:
        self.sources = sources
        self.problems = problems

    def operations(self) -> dict[str, Operation]:
        root = self.sources.root
        found: dict[str, Operation] = {}
        for template, raw_item in (root.data.get("paths") or {}).items():
            item_uri, item = self.deref(root.uri, raw_item)
            if not isinstance(item, dict):
                continue
            shared = self.parameters(item_uri, item.get("parameters"))
            for method in HTTP_METHODS:
                raw = item.get(method)
                if not isinstance(raw, dict):
                    continue
                own = self.parameters(item_uri, raw.get("parameters"))
                names = {(p.name, p.location) for p in own}
                parameters = own + [p for p in shared if (p.name, p.location) not in names]
                operation = Operation(
                    method=method,
                    template=template,
                    operation_id=raw.get("operationId") if isinstance(raw.get("operationId"), str) else None,
                    parameters=parameters,
                    body=self.body(item_uri, raw.get("requestBody")),
                    responses=self.responses(item_uri, raw.get("responses")),
                    place=self.place(item, method),
                    responses_place=self.place(raw, "responses"),
                )
                found[operation.key] = operation
        return found

    def deref(self, uri: str, value: Any) -> tuple[str, Any]:
        return self.sources.follow(uri, value)

    def place(self, container: Any, key: str | None = None) -> Any:
        place = self.sources.place(container, key)
        assert place is not None  # every container of the sources is indexed
        return place

    def parameters(self, uri: str, raw: Any) -> list[Parameter]:
        found: list[Parameter] = []
        for entry in raw if isinstance(raw, list) else []:
            where, value = self.deref(uri, entry)
            if not isinstance(value, dict) or not isinstance(value.get("name"), str):
                continue
            schema = value.get("schema")
            if schema is None and isinstance(value.get("content"), dict):
                media = next(iter(value["content"].values()), None)
                schema = media.get("schema") if isinstance(media, dict) else None
            location = str(value.get("in", "query"))
            found.append(
                Parameter(
                    name=value["name"],
                    location=location,
                    required=bool(value.get("required")) or location == "path",
                    schema=schema,
                    uri=where,
                    place=self.place(value),
                    example=_example_of(value, schema),
                )
            )
        return found

    def body(self, uri: str, raw: Any) -> Body | None:
        where, value = self.deref(uri, raw)
        if not isinstance(value, dict):
            return None
        return Body(
            required=bool(value.get("required")),
            content=self.content(where, value.get("content")),
            place=self.place(value),
        )

    def responses(self, uri: str, raw: Any) -> dict[str, Response]:
        found: dict[str, Response] = {}
        for status, entry in (raw or {}).items() if isinstance(raw, dict) else ():
            where, value = self.deref(uri, entry)
            if not isinstance(value, dict):
                continue
            headers = []
            listed = value.get("headers") or {}
            for name, header in listed.items() if isinstance(listed, dict) else ():
                header_uri, spec = self.deref(where, header)
                if isinstance(spec, dict):
                    headers.append(
                        Header(
                            name=name,
                            required=bool(spec.get("required")),
                            schema=spec.get("schema"),
                            uri=header_uri,
                            # the header's own line (`X-Total-Count:`), or where a `$ref` leads
                            place=self.place(listed, name) if spec is header else self.place(spec),
                        )
                    )
            found[str(status)] = Response(
                status=str(status),
                content=self.content(where, value.get("content")),
                headers=headers,
                place=self.place(raw, str(status)) if isinstance(raw, dict) else self.place(value),
            )
        return found

    def content(self, uri: str, raw: Any) -> dict[str, MediaType]:
        found: dict[str, MediaType] = {}
        for name, media in (raw or {}).items() if isinstance(raw, dict) else ():
            if not isinstance(media, dict):
                continue
            schema = media.get("schema")
            example, has = _media_example(self, uri, media, schema)
            found[media_key(str(name))] = MediaType(
                name=str(name),
                schema=schema,
                uri=uri,
                place=self.place(raw, name),  # the media type's own line (`application/json:`)
                example=example,
                has_example=has,
            )
        return found


def _media_example(builder: _Builder, uri: str, media: dict[str, Any], schema: Any) -> tuple[Any, bool]:
    if "example" in media:
        return media["example"], True
    examples = media.get("examples")
    if isinstance(examples, dict):
        for entry in examples.values():
            _, value = builder.deref(uri, entry)
            if isinstance(value, dict) and "value" in value:
                return value["value"], True
    _, resolved = builder.deref(uri, schema)
    if isinstance(resolved, dict):
        if "example" in resolved:
            return resolved["example"], True
        if isinstance(resolved.get("examples"), list) and resolved["examples"]:
            return resolved["examples"][0], True
    return None, False


def _example_of(parameter: dict[str, Any], schema: Any) -> Any:
    if "example" in parameter:
        return parameter["example"]
    if isinstance(parameter.get("examples"), dict):
        for entry in parameter["examples"].values():
            if isinstance(entry, dict) and "value" in entry:
                return entry["value"]
    if isinstance(schema, dict) and "example" in schema:
        return schema["example"]
    return None
