"""Contracts: the OpenAPI documents of a project's services and mocks, and what they allow.

A service or mock in e2e.yaml takes `contract:`, an OpenAPI 3.0 or 3.1 document (JSON or YAML,
`$ref`s across files). Here a document is loaded with every value's file and line
(`document`, `source`), an exchange is matched to its operation (`operations`), an answer or a
request is checked against it (`check`), what a run exercised is counted (`coverage`), and
starter cases are written from it (`generate`).

Layer: just above the core, below the configuration, which loads each contract when e2e.yaml
loads (a document that does not load, or a mock route its contract forbids, is `CONFIG_INVALID`
with its line). The suites check every answer through it; the faces check a response a caller
holds through `Project.check_response`.
"""

from __future__ import annotations

from .check import Checked, check_request, check_response, check_route
from .document import Contract, load_contract, load_contract_text

__all__ = [
    "Checked",
    "Contract",
    "check_request",
    "check_response",
    "check_route",
    "load_contract",
    "load_contract_text",
]
