"""HTTP mock services: declared in e2e.yaml, served in-process, journaled with their bodies.

`MockHost` runs a project's mocks in one background thread (uvicorn + httptools + uvloop), so they
keep answering while the caller's event loop is idle or busy. Routes match on method, path
(`:param`, `*`) and `when` conditions (query, headers, deep partial JSON body with assertion
operators), first match in file order. Answers may be templated per request, played as a
`sequence`, limited with `times`, delayed, turned into a fault (`reset`, `timeout`) or proxied.
Every request is journaled; `GET /_mock/requests` and `MockHost.requests` return it.

Importing this package starts nothing and imports neither uvicorn nor httpx.

Layer: an area. Owns the mock servers, matching, templating and the journal. May import config
and the core; never a face.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from preflight_sdk.core.results.mocks import (
    JournalEntry,
    MockRequestsMock,
    MockRequestsResult,
    RecordedRequest,
)

from .client import fetch_requests
from .host import MockHost
from .listeners import PortHolder, find_port_holder

if TYPE_CHECKING:
    from .expect import evaluate_mock_expect, select_requests

__all__ = [
    "JournalEntry",
    "MockHost",
    "MockRequestsMock",
    "MockRequestsResult",
    "PortHolder",
    "RecordedRequest",
    "evaluate_mock_expect",
    "fetch_requests",
    "find_port_holder",
    "select_requests",
]


def __getattr__(name: str) -> Any:
    # `expect` loads the test-file model (and through it the config loader): only the runner
    # needs it, so a detached mock host (`python -m preflight_sdk.mocks.serve`) starts without.
    if name in ("evaluate_mock_expect", "select_requests"):
        return getattr(import_module(".expect", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
