"""Declared against served: found, missing and extra tools, and schema drift.

Schemas are compared by the sha256 of their canonical JSON (sorted keys, no whitespace), so key
order and formatting never count as a difference; when the hashes differ the result lists the
top-level properties added, removed and changed, the change in `required`, and any other
top-level keyword that differs.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from .checks import check_tool
from .result import Finding, SchemaDiff, ToolReport
from .spec import ExpectedTool

__all__ = ["canonical_hash", "compare_tools", "schema_diff"]


def canonical_hash(schema: Any) -> str:
    """Return the sha256 (hex) of `schema` as canonical JSON."""
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def schema_diff(declared: dict[str, Any], served: Any) -> SchemaDiff | None:
    """Return how `served` differs from `declared`, or None when they are the same schema."""
    declared_hash, served_hash = canonical_hash(declared), canonical_hash(served)
    if declared_hash == served_hash:
        return None
    served_map = served if isinstance(served, dict) else {}
    before = _mapping(declared.get("properties"))
    after = _mapping(served_map.get("properties"))
    required_before = set(_names(declared.get("required")))
    required_after = set(_names(served_map.get("required")))
    others = sorted(
        key
        for key in set(declared) | set(served_map)
        if key not in ("properties", "required")
        and canonical_hash(declared.get(key)) != canonical_hash(served_map.get(key))
    )
    return SchemaDiff(
        declared_hash=declared_hash,
        served_hash=served_hash,
        added=sorted(set(after) - set(before)),
        removed=sorted(set(before) - set(after)),
        changed=sorted(
            k for k in set(before) & set(after) if canonical_hash(before[k]) != canonical_hash(after[k])
        ),
        required_added=sorted(required_after - required_before),
        required_removed=sorted(required_before - required_after),
        other_keys=others if isinstance(served, dict) else ["(root is not an object)"],
    )


def describe_diff(diff: SchemaDiff) -> str:
    """Return a one-line account of `diff`."""
    parts = []
    for label, names in (
        ("added properties", diff.added),
        ("removed properties", diff.removed),
        ("changed properties", diff.changed),
        ("newly required", diff.required_added),
        ("no longer required", diff.required_removed),
        ("other keywords differ", diff.other_keys),
    ):
        if names:
            parts.append(f"{label} {names}")
    return "; ".join(parts) or "formatting-independent content differs"


def compare_tools(
    declared: list[ExpectedTool], served: list[dict[str, Any]], *, strict: bool
) -> list[ToolReport]:
    """Return one report per declared tool (in order), then one per undeclared served tool.

    With nothing declared, every served tool is reported as `extra` without a finding: there is
    nothing to compare against, only the tool definitions are checked.
    """
    by_name: dict[str, dict[str, Any]] = {}
    duplicates: set[str] = set()
    for tool in served:
        name = tool.get("name")
        key = name if isinstance(name, str) else repr(name)
        if key in by_name:
            duplicates.add(key)
        else:
            by_name[key] = tool
    reports: list[ToolReport] = []
    declared_names = {d.name for d in declared}
    for expected in declared:
        served_tool = by_name.get(expected.name)
        if served_tool is None:
            finding = Finding(
                severity="error",
                code="TOOL_MISSING",
                message="declared but not served by the server",
                tool=expected.name,
            )
            reports.append(
                ToolReport(
                    name=expected.name, status="missing", declared=True, in_server=False, findings=[finding]
                )
            )
            continue
        findings = check_tool(served_tool)
        diff = _compare_declaration(expected, served_tool, findings)
        reports.append(
            ToolReport(
                name=expected.name,
                status="found",
                declared=True,
                in_server=True,
                findings=findings,
                schema_diff=diff,
            )
        )
    for key, tool in by_name.items():
        if key in declared_names:
            continue
        findings = []
        if declared:
            findings.append(
                Finding(
                    severity="error" if strict else "warning",
                    code="TOOL_EXTRA",
                    message="served but not declared"
                    + (" (strict: only declared tools are allowed)" if strict else ""),
                    tool=key,
                )
            )
        findings.extend(check_tool(tool))
        reports.append(
            ToolReport(name=key, status="extra", declared=False, in_server=True, findings=findings)
        )
    for key in sorted(duplicates):
        index = next(i for i, r in enumerate(reports) if r.name == key)
        duplicate = Finding(
            severity="error", code="TOOL_NAME_DUPLICATE", message="served more than once", tool=key
        )
        reports[index] = msgspec.structs.replace(
            reports[index], findings=[duplicate, *reports[index].findings]
        )
    return reports


def _compare_declaration(
    expected: ExpectedTool, tool: dict[str, Any], findings: list[Finding]
) -> SchemaDiff | None:
    diff = None
    for field, declared, code in (
        ("inputSchema", expected.input_schema, "SCHEMA_MISMATCH"),
        ("outputSchema", expected.output_schema, "OUTPUT_SCHEMA_MISMATCH"),
    ):
        drift = schema_diff(declared, tool.get(field)) if declared is not None else None
        if drift is not None:
            message = f"served {field} differs from the declared one: {describe_diff(drift)}"
            findings.append(_mismatch(expected, field, code, message))
            if field == "inputSchema":
                diff = drift  # the report carries the input schema's diff
    if expected.annotations:
        served = _mapping(tool.get("annotations"))
        wrong = {k: (v, served.get(k)) for k, v in expected.annotations.items() if served.get(k) != v}
        if wrong:
            detail = ", ".join(f"{k}: declared {d!r}, served {s!r}" for k, (d, s) in sorted(wrong.items()))
            message = f"annotations differ from the declared ones ({detail})"
            findings.append(_mismatch(expected, "annotations", "ANNOTATIONS_MISMATCH", message))
    return diff


def _mismatch(expected: ExpectedTool, field: str, code: str, message: str) -> Finding:
    """An error finding: the served tool's `field` is not what `expected` declares."""
    return Finding(severity="error", code=code, message=message, tool=expected.name, path=field)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
