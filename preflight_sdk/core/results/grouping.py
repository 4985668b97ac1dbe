"""Identical failures told once: failed cases with the same cause shown as one failure and a count.

Sixty cases failing because one handler crashes are one problem, not sixty. `group_failures`
keeps the first case of each cause whole, adds `sameCause {count, cases, names, cause}` to its
failure (the other cases' ids and names, in run order) and leaves the others out of their suite's `cases` (and
their records out of the listed `artifacts`: each is still `cases/<caseId>.json`); totals,
suite counts and the run's artifacts (report.json, junit.xml: one entry per case, each case's
record) are untouched. The faces apply it when they show a run (CLI text and JSON, MCP replies,
notebook views); what the SDK returns and the store keeps is the whole result.

Two failures have the same cause when their *cause key*s are equal. The key is built from:

- the error line, normalised (see `normalise`);
- each failed assertion: its path and operator, and the *shape* of the expected and actual
  values: small numbers (a status code), booleans, null and short strings without digits (an
  enum such as `declined`) as they are; other strings and numbers as a placeholder; objects by
  their keys, lists by their items' shapes;
- the response status;
- the *log signature*: per container, the last log line of the case's moment that reads as an
  error (error, exception, traceback, fatal, panic), normalised.

Normalising replaces what differs between cases hitting one defect (times, UUIDs, long numbers,
ids mixing letters and digits, hex digests) with placeholders and keeps the rest, so a different
status, assertion, error class or log line always makes a different cause.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .run import CaseResult, Failure, RunResult, SameCause

__all__ = ["cause_key", "group_failures", "normalise"]

_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEX = re.compile(r"\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b")
_MIXED = re.compile(r"\b(?=[\w-]*[A-Za-z_])(?=[\w-]*\d)[\w-]+\b")
_LONG_NUMBER = re.compile(r"\b\d{4,}(?:\.\d+)?\b")
_ERROR_LINE = re.compile(r"error|exception|traceback|fatal|panic", re.IGNORECASE)
_MAX_KEY = 2_000
_SHORT = 40
_DEPTH = 3


def normalise(text: str) -> str:
    """`text` with what varies between cases of one defect replaced by placeholders."""
    text = _TIME.sub("<time>", text)
    text = _UUID.sub("<uuid>", text)
    text = _HEX.sub("<hex>", text)
    text = _MIXED.sub("<id>", text)
    text = _LONG_NUMBER.sub("<n>", text)
    return " ".join(text.split())


def _shape(value: Any, depth: int = 0) -> str:
    if value is None or isinstance(value, bool):
        return msgspec.json.encode(value).decode()
    if isinstance(value, int | float):
        return str(value) if isinstance(value, int) and abs(value) < 1000 else "<number>"
    if isinstance(value, str):
        plain = len(value) <= _SHORT and not any(ch.isdigit() for ch in value)
        return msgspec.json.encode(value).decode() if plain else "<text>"
    if depth >= _DEPTH:
        return "<object>" if isinstance(value, dict) else "<value>"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_shape(v, depth + 1)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(sorted({_shape(v, depth + 1) for v in value})) + "]"
    return type(value).__name__


def _log_signature(failure: Failure) -> list[str]:
    if failure.diagnostics is None:
        return []
    lines = []
    for log in sorted(failure.diagnostics.container_logs, key=lambda c: c.container_name):
        errors = [line for line in log.lines if _ERROR_LINE.search(line)]
        if errors:
            lines.append(f"{log.container_name}: {normalise(errors[-1])}")
    return lines


def cause_key(case: CaseResult) -> str:
    """The text two failures share exactly when they have the same cause (see the module doc)."""
    failure = case.failure
    if failure is None:
        return f"no failure record: {case.suite}/{case.id}"  # nothing to compare: never merged
    parts = [f"error: {normalise(failure.error)}"]
    for check in failure.assertions:
        if not check.passed:
            parts.append(
                f"{check.path} {check.operator} {_shape(check.expected)}, got {_shape(check.actual)}"
            )
    if failure.response is not None:
        parts.append(f"status {failure.response.status}")
    parts.extend(f"log {line}" for line in _log_signature(failure))
    return " | ".join(parts)[:_MAX_KEY]


def group_failures(result: RunResult) -> RunResult:
    """`result` with each group of same-cause failures told once (unchanged when no two match)."""
    groups: dict[str, list[CaseResult]] = {}
    for case in result.failures():
        groups.setdefault(cause_key(case), []).append(case)
    if all(len(members) == 1 for members in groups.values()):
        return result
    heads: dict[int, SameCause] = {}
    folded: set[int] = set()
    for key, members in groups.items():
        if len(members) > 1:
            first, *rest = members
            heads[id(first)] = SameCause(
                count=len(members), cases=[c.id for c in rest], cause=key[:300], names=[c.name for c in rest]
            )
            folded.update(id(c) for c in rest)
    suites = []
    for suite in result.suites:
        cases = []
        for case in suite.cases:
            if id(case) in folded:
                continue
            same = heads.get(id(case))
            if same is not None and case.failure is not None:
                case = msgspec.structs.replace(
                    case, failure=msgspec.structs.replace(case.failure, same_cause=same)
                )
            cases.append(case)
        suites.append(msgspec.structs.replace(suite, cases=cases))
    # A folded case's record stays in the run's folder (`cases/<caseId>.json`, for get_artifact);
    # the list of files names the ones of the failures told.
    hidden = {
        c.failure.artifact for c in result.failures() if id(c) in folded and c.failure and c.failure.artifact
    }
    artifacts = [a for a in result.artifacts if a.name not in hidden]
    return msgspec.structs.replace(result, suites=suites, artifacts=artifacts)
