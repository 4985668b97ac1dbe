"""Check a reply's `data` against its whole type in docs/schema/results.schema.json.

A tool's outputSchema is only an outline (top-level fields); the type its `description` names in
the results schema describes every level, and real replies must match it too.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "schema" / "results.schema.json"


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    defs = json.loads(RESULTS.read_text(encoding="utf-8"))["$defs"]
    assert name in defs, f"{name} is not in {RESULTS.name}"
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs})


def check_whole_data(envelope: dict[str, Any], output_schema: dict[str, Any] | None) -> None:
    """Validate `envelope["data"]` (when there is one) against the type the output schema names."""
    data = envelope.get("data")
    if data is None:
        return
    named = re.fullmatch(
        r"data: (\w+)(?: \| null)? in results\.schema\.json", (output_schema or {})["description"]
    )
    assert named, (output_schema or {}).get("description")
    _validator(named.group(1)).validate(data)
