"""Package names that load on first use: a package's module `__getattr__` (PEP 562)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """Return a `__getattr__` for `package` that imports each name of `homes` from its own module.

    `homes` maps a name to the module defining it, relative to `package` ("core.errors"). The value
    found is kept in the package, so the next lookup of the name does not come back here. Usage,
    in the package's `__init__.py`: `__getattr__ = lazy_attributes(__name__, {"Project": "project"})`.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
