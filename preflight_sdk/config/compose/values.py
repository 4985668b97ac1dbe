"""Typed reads of compose values after interpolation: numbers, sizes, booleans, lists and maps.

The schema lets most numbers and booleans be strings (so `${VAR}` can fill them); once the
variables are substituted, what they became must still be a number or a boolean, as `docker
compose config` checks. A value that is not is reported at its path and read as None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import InputError

__all__ = ["Reader"]

Path_ = tuple[str | int, ...]
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.I)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})


class Reader:
    """Reads values of one document, reporting the ones of the wrong kind to `report(path, message)`."""

    def __init__(self, report: Callable[..., None]) -> None:
        self.report = report

    def integer(self, value: Any, path: Path_) -> int | None:
        if isinstance(value, bool):
            self.report(path, f"`{value}` is not a whole number")
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            return int(value)
        self.report(path, f"`{value}` is not a whole number")
        return None

    def number(self, value: Any, path: Path_) -> float | None:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        try:
            return float(str(value))
        except ValueError:
            self.report(path, f"`{value}` is not a number")
            return None

    def boolean(self, value: Any, path: Path_) -> bool | None:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        self.report(path, f"`{value}` is not true or false")
        return None

    def size(self, value: Any, path: Path_) -> int | None:
        """Bytes from `1024`, `64m`, `1gb`, `512k` (compose units are powers of 1024)."""
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        match = _SIZE.match(str(value))
        if match is None:
            self.report(path, f"`{value}` is not a size (e.g. `64m`, `1g`, or bytes)")
            return None
        return int(float(match.group(1)) * _UNITS[match.group(2).lower()])

    def duration(self, value: Any, path: Path_) -> str | None:
        """The duration as written (`1m30s`), once it is known to be one."""
        try:
            parse_duration(str(value))
        except InputError:
            self.report(path, f"`{value}` is not a duration (e.g. `5s`, `1m30s`)")
            return None
        return str(value)

    @staticmethod
    def strings(value: Any) -> list[str]:
        """A string or a list of them, as a list."""
        if value is None:
            return []
        if isinstance(value, list):
            return [str(item) for item in value]
        return [str(value)]

    @staticmethod
    def mapping(value: Any, environ: Mapping[str, str] | None = None, separator: str = "=") -> dict[str, str]:
        """`{K: V}` or `["K=V", "K"]`; a key without a value takes `environ`'s, or is left out."""
        pairs: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            pairs = list(value.items())
        elif isinstance(value, list):
            for item in value:
                key, sep, text = str(item).partition(separator)
                pairs.append((key, text if sep else None))
        result: dict[str, str] = {}
        for key, item in pairs:
            if item is None:
                if environ is not None and key in environ:
                    result[key] = environ[key]
            else:
                result[key] = _text(item)
        return result


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
