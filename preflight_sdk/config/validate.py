"""Check plain data against a msgspec type and report *every* problem, not just the first.

`msgspec.convert` stops at the first error and knows no line numbers. This walker follows the
type description of `msgspec.inspect`, collects one `ConfigProblem` per unknown key (with a
did-you-mean), missing field, wrong type, out-of-range number or bad duration, each located in the
YAML source; only when it finds nothing does the loader call `msgspec.convert`.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from types import UnionType
from typing import Any

import msgspec.inspect as mi

from preflight_sdk.core import decoding
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import ConfigProblem, InputError
from preflight_sdk.core.yaml_source import ParsedYaml, PathKey

__all__ = ["Validator", "describe_type", "did_you_mean"]


def did_you_mean(word: str, candidates: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """Return the candidate closest to `word` (case first, then spelling), or None."""
    options = list(candidates)
    for option in options:
        if option.lower() == word.lower():
            return option
    folded = {option.replace("_", "").replace("-", "").lower(): option for option in options}
    key = word.replace("_", "").replace("-", "").lower()
    if key in folded:
        return folded[key]
    close = difflib.get_close_matches(word, options, n=1, cutoff=cutoff)
    return close[0] if close else None


class Validator:
    """Walks data against a msgspec type; see the module docstring."""

    def __init__(
        self,
        source: ParsedYaml,
        *,
        file: str | None,
        templated: frozenset[PathKey] = frozenset(),
        extension_keys: bool = False,
    ) -> None:
        """Prepare a walk over the data of `source`.

        Args:
            source: the parsed file, for positions.
            file: its path, for the problems.
            templated: paths whose string came from a `{{…}}` template; there a number or a boolean
                may arrive as text (`port: "{{env.PORT}}"`) and is accepted when it parses.
            extension_keys: accept top-level `x-…` keys (a home for YAML anchors, as in compose files).
        """
        self.source = source
        self.file = file
        self.templated = templated
        self.extension_keys = extension_keys
        self.problems: list[ConfigProblem] = []

    def check(self, data: Any, typ: type) -> list[ConfigProblem]:
        """Return the problems of `data` as an instance of `typ` (also kept in `self.problems`)."""
        self._walk(data, describe_type(typ), ())
        return self.problems

    def add(self, path: PathKey, message: str, *, suggestion: str | None = None, key: bool = False) -> None:
        """Record a problem at `path`, located in the YAML source."""
        self.problems.append(
            self.source.problem(path, message, file=self.file, suggestion=suggestion, key=key)
        )

    # -- the walk ---------------------------------------------------------------------------

    def _walk(self, value: Any, info: mi.Type, path: PathKey) -> None:
        extra: dict[str, Any] = {}
        while isinstance(info, mi.Metadata):
            extra.update(info.extra or {})
            info = info.type
        if extra.get("duration") and isinstance(value, str | int) and not isinstance(value, bool):
            try:
                parse_duration(value)
            except InputError:
                self.add(path, f"`{value}` is not a duration (use '500ms', '5s', '2m', '1h' or milliseconds)")
                return
        if isinstance(info, mi.UnionType):
            self._union(value, info, path)
        elif isinstance(info, mi.StructType):
            self._struct(value, info, path)
        elif isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
            if not isinstance(value, list):
                self.add(path, f"expected a list, got {_kind(value)}")
                return
            for index, item in enumerate(value):
                self._walk(item, info.item_type, (*path, index))
            if info.min_length is not None and len(value) < info.min_length:
                self.add(path, f"needs at least {info.min_length} item(s)")
        elif isinstance(info, mi.TupleType):
            if not isinstance(value, list) or len(value) != len(info.item_types):
                got = f"{len(value)} items" if isinstance(value, list) else _kind(value)
                self.add(path, f"expected a list of {len(info.item_types)} items, got {got}")
                return
            for index, (item, item_type) in enumerate(zip(value, info.item_types, strict=True)):
                self._walk(item, item_type, (*path, index))
        elif isinstance(info, mi.DictType):
            if not isinstance(value, dict):
                self.add(path, f"expected a mapping, got {_kind(value)}")
                return
            for key, item in value.items():
                self._walk(item, info.value_type, (*path, key))
        else:
            self._scalar(value, info, path)

    def _struct(self, value: Any, info: mi.StructType, path: PathKey) -> None:
        if not isinstance(value, dict):
            self.add(path, f"expected a mapping, got {_kind(value)}")
            return
        fields = {f.encode_name: f for f in info.fields}
        for key, item in value.items():
            if not path and self.extension_keys and key.startswith("x-"):
                continue
            spec = fields.get(key)
            if spec is None:
                guess = did_you_mean(key, fields)
                self.add((*path, key), f"unknown key `{key}`", suggestion=guess, key=True)
                continue
            if item is None and spec.required:
                self.add((*path, key), f"`{key}` needs a value", key=True)
                continue
            self._walk(item, spec.type, (*path, key))
        for name, spec in fields.items():
            if spec.required and name not in value:
                # Placed on the parent's key (`project:`), where an editor would point.
                self.add(path, f"missing required key `{name}`", key=True)

    def _union(self, value: Any, info: mi.UnionType, path: PathKey) -> None:
        lenient = path in self.templated
        candidates = [t for t in info.types if _accepts_kind(t, value, lenient=lenient)]
        if not candidates:
            expected = " or ".join(dict.fromkeys(_describe(t) for t in info.types))
            self.add(path, f"expected {expected}, got {_kind(value)}")
            return
        first_problems: list[ConfigProblem] | None = None
        for candidate in candidates:
            trial = Validator(
                self.source, file=self.file, templated=self.templated, extension_keys=self.extension_keys
            )
            trial._walk(value, candidate, path)
            if not trial.problems:
                return
            if first_problems is None:
                first_problems = trial.problems
        self.problems.extend(first_problems or [])

    def _scalar(self, value: Any, info: mi.Type, path: PathKey) -> None:
        if isinstance(info, mi.AnyType):
            return
        if isinstance(info, mi.NoneType):
            if value is not None:
                self.add(path, f"expected nothing (null), got {_kind(value)}")
            return
        if isinstance(value, str) and path in self.templated and _lax_scalar(info, value) is not None:
            value = _lax_scalar(info, value)
        if isinstance(info, mi.BoolType):
            if not isinstance(value, bool):
                self.add(path, f"expected true or false, got {_kind(value)}")
            return
        if isinstance(info, mi.IntType):
            if not isinstance(value, int) or isinstance(value, bool):
                self.add(path, f"expected an integer, got {_kind(value)}")
                return
            self._bounds(value, info, path)
            return
        if isinstance(info, mi.FloatType):
            if not isinstance(value, int | float) or isinstance(value, bool):
                self.add(path, f"expected a number, got {_kind(value)}")
                return
            self._bounds(value, info, path)
            return
        if isinstance(info, mi.StrType):
            if not isinstance(value, str):
                self.add(path, f"expected a string, got {_kind(value)}")
                return
            if info.min_length is not None and len(value) < info.min_length:
                self.add(
                    path,
                    "must not be empty" if info.min_length == 1 else f"too short (min {info.min_length})",
                )
            if info.pattern is not None and not re.search(info.pattern, value):
                self.add(path, f"`{value}` has characters that are not allowed here (pattern {info.pattern})")
            return
        if isinstance(info, mi.LiteralType):
            if value not in info.values:
                allowed = ", ".join(f"`{v}`" for v in info.values)
                options = [str(v) for v in info.values]
                guess = did_you_mean(str(value), options, cutoff=0.75) if isinstance(value, str) else None
                note = _LITERAL_NOTES.get(str(value), "")
                self.add(path, f"`{value}` is not one of {allowed}{note}", suggestion=guess)
            return
        self.add(path, f"unsupported value {_kind(value)}")

    def _bounds(self, value: float, info: mi.IntType | mi.FloatType, path: PathKey) -> None:
        if info.ge is not None and value < info.ge:
            self.add(path, f"must be >= {info.ge}, got {value}")
        if info.gt is not None and value <= info.gt:
            self.add(path, f"must be > {info.gt}, got {value}")
        if info.le is not None and value > info.le:
            self.add(path, f"must be <= {info.le}, got {value}")
        if info.lt is not None and value >= info.lt:
            self.add(path, f"must be < {info.lt}, got {value}")


_LIST_TYPES = mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType | mi.TupleType
"""The types a YAML list is read as."""

_LITERAL_NOTES = {
    "vitest": "; run it as a shell suite that reads its JUnit report: `runner: shell`, "
    "`command: npx vitest run --reporter=junit --outputFile=vitest.xml`, `junit: vitest.xml`",
}


@functools.cache
def describe_type(typ: type) -> mi.Type:
    """msgspec's description of `typ`, built once: for a large Struct tree that costs milliseconds,
    and the types never change."""
    decoding.ready(typ)
    return mi.type_info(typ)


def _unwrap(info: mi.Type) -> mi.Type:
    while isinstance(info, mi.Metadata):
        info = info.type
    return info


def _lax_scalar(info: mi.Type, text: str) -> Any:
    """Return `text` read as the number or boolean `info` wants, or None (templated values only)."""
    stripped = text.strip()
    if isinstance(info, mi.BoolType) and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if isinstance(info, mi.IntType) and re.fullmatch(r"-?\d+", stripped):
        return int(stripped)
    if isinstance(info, mi.FloatType) and re.fullmatch(r"-?\d+(?:\.\d+)?", stripped):
        return float(stripped)
    return None


def _accepts_kind(info: mi.Type, value: Any, *, lenient: bool = False) -> bool:
    info = _unwrap(info)
    if isinstance(info, mi.UnionType):
        return any(_accepts_kind(t, value, lenient=lenient) for t in info.types)
    if isinstance(info, mi.AnyType):
        return True
    if lenient and isinstance(value, str) and _lax_scalar(info, value) is not None:
        return True
    if value is None:
        return isinstance(info, mi.NoneType)
    if isinstance(value, bool):
        return isinstance(info, mi.BoolType) or (isinstance(info, mi.LiteralType) and value in info.values)
    if isinstance(value, int):
        return isinstance(info, mi.IntType | mi.FloatType) or (
            isinstance(info, mi.LiteralType) and value in info.values
        )
    if isinstance(value, float):
        return isinstance(info, mi.FloatType)
    if isinstance(value, str):
        return isinstance(info, mi.StrType) or (
            isinstance(info, mi.LiteralType) and any(isinstance(v, str) for v in info.values)
        )
    if isinstance(value, list):
        return isinstance(info, _LIST_TYPES)
    if isinstance(value, dict):
        return isinstance(info, mi.StructType | mi.DictType)
    return False


# What a value of each kind of type is called in "expected …" messages.
_TYPE_NAMES: tuple[tuple[UnionType | type, str], ...] = (
    (mi.StructType | mi.DictType, "a mapping"),
    (_LIST_TYPES, "a list"),
    (mi.IntType, "an integer"),
    (mi.FloatType, "a number"),
    (mi.StrType, "a string"),
    (mi.BoolType, "true or false"),
    (mi.NoneType, "null"),
)


def _describe(info: mi.Type) -> str:
    info = _unwrap(info)
    if isinstance(info, mi.UnionType):
        return " or ".join(dict.fromkeys(_describe(t) for t in info.types))
    if isinstance(info, mi.LiteralType):
        return "one of " + ", ".join(f"`{v}`" for v in info.values)
    return next((name for kinds, name in _TYPE_NAMES if isinstance(info, kinds)), "a value")


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ('{shown}')"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
