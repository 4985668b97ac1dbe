"""The compose specification's JSON Schema (vendored: `compose-spec.json`, Apache-2.0, see `LICENSE`).

Source: https://github.com/compose-spec/compose-spec/blob/main/schema/compose-spec.json at commit
00655e2222608fa6eaecdf12ac5195889ca2244a, unchanged (74,133 characters).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

__all__ = ["compose_schema", "schema_problems"]

_MAX_PROBLEMS = 50


@functools.cache
def compose_schema() -> dict[str, Any]:
    """Return the vendored compose specification schema."""
    text = resources.files(__package__).joinpath("compose-spec.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> Any:
    import jsonschema  # imported on first use: only projects with `compose:` pay for it

    return jsonschema.Draft7Validator(compose_schema())


def schema_problems(data: Any) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
    """Yield (JSON path, message, names a key) for each way `data` breaks the schema."""
    from jsonschema.exceptions import best_match

    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    for count, error in enumerate(errors):
        if count >= _MAX_PROBLEMS:
            return
        if error.context:
            error = best_match(error.context)
        path = tuple(error.absolute_path)
        extra = _unknown_keys(error)
        if extra:
            plural = "s" if len(extra) > 1 else ""
            yield (
                (*path, extra[0]),
                f"compose schema: unknown key{plural} {', '.join(f'`{k}`' for k in extra)}",
                True,
            )
        else:
            message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
            yield path, f"compose schema: {message}", False


def _unknown_keys(error: Any) -> list[str]:
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    allowed = set(error.schema.get("properties", {}))
    patterns = list(error.schema.get("patternProperties", {}))
    return sorted(
        str(k) for k in error.instance if k not in allowed and not any(re.search(p, str(k)) for p in patterns)
    )
