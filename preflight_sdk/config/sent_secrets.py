"""The secret values YAML suites send: what their requests give secret names, masked by value everywhere.

A suite that sends `Authorization: Bearer sk_…` or `{card: {token: tok_…}}` hands a service a
credential, which the service may pass on under another name (`source: tok_…`) to a mock, into a
log line, or to a recording. Masking those values by value, wherever they appear, keeps them out
of every output (a recorded route file included), not only where their name gives them away.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .testfile import TestFile, TestStep

__all__ = ["sent_variables"]


def sent_variables(test_files: Iterable[TestFile]) -> list[Mapping[str, Any]]:
    """Name/value pairs the suites set or send (variables, request headers, query, form and JSON
    leaves at any depth), for `secret_values` to keep those with secret names. Templates are left
    out: they are filled in from elsewhere."""
    found: list[Mapping[str, Any]] = []
    for test in test_files:
        found.append(_plain(test.variables))
        for step in (*test.setup, *test.cases, *test.teardown):
            found += _step(step)
    return found


def _step(step: TestStep) -> list[Mapping[str, Any]]:
    request = step.request
    if request is None:
        return []
    leaves: list[Mapping[str, Any]] = []
    _leaves(request.json, leaves, 0)
    return [_plain(request.headers), _plain(request.query), _plain(request.form or {}), *leaves]


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if isinstance(v, str | int) and "{{" not in str(v)}


def _leaves(value: Any, out: list[Mapping[str, Any]], depth: int) -> None:
    if depth > 32:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | int) and not isinstance(item, bool) and "{{" not in str(item):
                out.append({str(key): item})
            else:
                _leaves(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out, depth + 1)
