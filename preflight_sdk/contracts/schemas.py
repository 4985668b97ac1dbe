"""Validate values against the schemas of a document, in the document's own dialect.

The dialects are openapi-schema-validator's: OpenAPI 3.0's schema object (JSON Schema draft 4
with `nullable`, `readOnly` and `writeOnly`, OpenAPI's formats), and OpenAPI 3.1's (JSON Schema
2020-12). An answer is checked with the reading validator (a `writeOnly` property may not be in
it), a request with the writing one (a `readOnly` property may not). `$ref`s resolve through a
`referencing` registry holding every file of the document, so a schema in `schemas/order.yaml`
refers to its neighbours as it would anywhere else.

Each validator is built once per schema and kind. A value is first asked `is_valid` (the path
every passing check takes); only a value that fails is walked for its errors, each of which holds
the very schema object that failed, so its file and line are known (`Sources.place`).

The first question goes to jsonschema-rs (a compiled JSON Schema validator, from the authors of
Schemathesis), a hundred times faster than the pure-Python walk, for each schema whose answer it
gives exactly as the dialect does: one without `format`, `readOnly` and `writeOnly` anywhere in
it or what it refers to (OpenAPI's formats and those two keywords are the dialect's own). Where
it refuses a value (OpenAPI 3.0's `nullable` is unknown to it, so it refuses `null` there), the
dialect's validator decides: a violation is only ever what openapi-schema-validator finds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from preflight_sdk.core.errors import ConfigProblem

from .source import Sources, pointer_of

if TYPE_CHECKING:
    import jsonschema

__all__ = ["Direction", "SchemaErrors", "Schemas"]

Direction = Literal["read", "write"]
SchemaErrors = list["jsonschema.ValidationError"]


class Schemas:
    """The validators of one document (see the module docstring)."""

    def __init__(self, sources: Sources, version: Literal["3.0", "3.1"]) -> None:
        # Imported here: only a project with a contract pays for them (`import preflight_sdk` does not).
        import openapi_schema_validator as oas
        import referencing
        import referencing.jsonschema

        self.sources = sources
        self.version = version
        spec = referencing.jsonschema.DRAFT4 if version == "3.0" else referencing.jsonschema.DRAFT202012
        resources = [(uri, spec.create_resource(file.data)) for uri, file in sources.files.items()]
        self.registry: Any = referencing.Registry().with_resources(resources)
        if version == "3.0":
            self._classes: dict[Direction, Any] = {
                "read": oas.OAS30ReadValidator,
                "write": oas.OAS30WriteValidator,
            }
            self._formats = oas.oas30_format_checker
        else:
            self._classes = {"read": oas.OAS31Validator, "write": oas.OAS31Validator}
            self._formats = oas.oas31_format_checker
        self._validators: dict[tuple[int, Direction], Any] = {}
        self._has_ref: dict[int, bool] = {}
        self._fast: dict[int, Any] = {}
        self._fast_registry: Any = None

    def is_valid(self, schema: Any, uri: str, value: Any, direction: Direction) -> bool:
        """Whether `value` satisfies `schema` (written in file `uri`)."""
        fast = self._fast_validator(schema, uri)
        if fast is not None and fast.is_valid(value):
            return True
        return bool(self._validator(schema, uri, direction).is_valid(value))

    def errors(
        self, schema: Any, uri: str, value: Any, direction: Direction, *, limit: int = 10
    ) -> SchemaErrors:
        """The ways `value` breaks `schema`, in the order of their paths, at most `limit`."""
        found: SchemaErrors = []
        for error in self._validator(schema, uri, direction).iter_errors(value):
            found.append(error)
            if len(found) >= limit:
                break
        found.sort(key=lambda e: [str(p) for p in e.absolute_path])
        return found[:limit]

    def check(self, schema: Any, uri: str, seen: set[int]) -> list[ConfigProblem]:
        """Problems of `schema` itself (against its dialect's meta-schema), and of what it refers to."""
        problems: list[ConfigProblem] = []
        stack: list[tuple[str, Any]] = [(uri, schema)]
        import jsonschema

        # 3.1's dialect is JSON Schema 2020-12 with annotations of OpenAPI's own (discriminator,
        # xml, example), which 2020-12 allows: its meta-schema is checked where jsonschema has it.
        meta_class = self._classes["read"] if self.version == "3.0" else jsonschema.Draft202012Validator
        meta = meta_class(meta_class.META_SCHEMA)
        while stack:
            where, current = stack.pop()
            if not isinstance(current, dict) or id(current) in seen:
                continue
            seen.add(id(current))
            for error in meta.iter_errors(current):
                located = self.sources.where(current)
                path = (*located[1], *error.absolute_path) if located else ()
                place = self.sources.place_at(located[0] if located else where, path)
                problems.append(
                    ConfigProblem(
                        path=place.pointer,
                        message=f"invalid schema: {error.message}",
                        file=place.file,
                        line=place.line,
                    )
                )
            for ref in _refs_in(current):
                target = self.sources.resolve(where, ref)
                if target is not None:
                    stack.append(target)
        return problems

    def _validator(self, schema: Any, uri: str, direction: Direction) -> Any:
        key = (id(schema), direction)
        validator = self._validators.get(key)
        if validator is None:
            subject = schema
            if isinstance(schema, dict) and self._refers(schema):
                # Resolve its `$ref`s against its own file: through a reference to where it is.
                located = self.sources.where(schema)
                if located is not None:
                    subject = {"$ref": located[0] + pointer_of(located[1])}
            cls = self._classes[direction]
            validator = cls(subject, registry=self.registry, format_checker=self._formats)
            self._validators[key] = validator
        return validator

    def _fast_validator(self, schema: Any, uri: str) -> Any:
        """jsonschema-rs's validator of `schema` where it answers as the dialect does, else None."""
        key = id(schema)
        if key not in self._fast:
            self._fast[key] = self._compile_fast(schema, uri)
        return self._fast[key]

    def _compile_fast(self, schema: Any, uri: str) -> Any:
        if not isinstance(schema, dict) or self._dialect_only(schema, uri):
            return None
        try:
            import jsonschema_rs
        except ImportError:  # a platform without its wheels: the dialect's validator alone
            return None
        if self._fast_registry is None:
            files = [(file_uri, file.data) for file_uri, file in self.sources.files.items()]
            self._fast_registry = jsonschema_rs.Registry(files)
        cls = jsonschema_rs.Draft4Validator if self.version == "3.0" else jsonschema_rs.Draft202012Validator
        located = self.sources.where(schema)
        # A reference to where it is, so its own `$ref`s resolve against its file (a URI: quoted).
        subject = {"$ref": located[0] + quote(pointer_of(located[1]), safe="#/~")} if located else schema
        try:
            return cls(subject, registry=self._fast_registry)
        except (ValueError, jsonschema_rs.ValidationError):
            return None  # a schema it cannot compile: the dialect's validator alone

    def _dialect_only(self, schema: Any, uri: str) -> bool:
        """Whether `schema` (or what it refers to) uses what only the OpenAPI dialect knows."""
        stack: list[tuple[str, Any]] = [(uri, schema)]
        seen: set[int] = set()
        while stack:
            where, item = stack.pop()
            if isinstance(item, list):
                stack.extend((where, child) for child in item)
                continue
            if not isinstance(item, dict) or id(item) in seen:
                continue
            seen.add(id(item))
            if _DIALECT_KEYWORDS.intersection(item):
                return True
            ref = item.get("$ref")
            if isinstance(ref, str):
                target = self.sources.resolve(where, ref)
                if target is None:
                    return True
                stack.append(target)
            stack.extend((where, child) for key, child in item.items() if key != "$ref")
        return False

    def _refers(self, schema: Any) -> bool:
        known = self._has_ref.get(id(schema))
        if known is None:
            known = self._has_ref[id(schema)] = bool(_refs_in(schema))
        return known


_DIALECT_KEYWORDS = frozenset({"format", "readOnly", "writeOnly"})


def _refs_in(schema: Any) -> list[str]:
    found: list[str] = []
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.append(ref)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
