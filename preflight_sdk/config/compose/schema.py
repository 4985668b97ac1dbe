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

from ..validate import did_you_mean

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


def schema_problems(data: Any) -> Iterator[tuple[tuple[str | int, ...], str, bool, str | None]]:
    """Yield (JSON path, message, names a key, the key it most likely means) for each way `data`
    breaks the schema: one for each unknown key, at its own line, with a did-you-mean as e2e.yaml's."""
    from jsonschema.exceptions import best_match

    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    for count, error in enumerate(errors):
        if count >= _MAX_PROBLEMS:
            return
        if error.context:
            error = best_match(error.context)
        path = tuple(error.absolute_path)
        extra, allowed = _unknown_keys(error)
        if extra:
            for key in extra:
                yield (*path, key), f"compose schema: unknown key `{key}`", True, did_you_mean(key, allowed)
        else:
            message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
            yield path, f"compose schema: {message}", False, None


def _unknown_keys(error: Any) -> tuple[list[str], list[str]]:
    """(the keys `error` finds unknown, the keys allowed there)."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return [], []
    allowed = sorted(error.schema.get("properties", {}))
    patterns = list(error.schema.get("patternProperties", {}))
    unknown = sorted(
        str(k) for k in error.instance if k not in allowed and not any(re.search(p, str(k)) for p in patterns)
    )
    return unknown, allowed
