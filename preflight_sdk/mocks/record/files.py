"""Writing a mock's route file: whole or not at all, large bodies beside it.

The route file (`config/mocks/recorded.py` says where and how it is read) is YAML in e2e.yaml's route
grammar. A body over `INLINE_LIMIT` bytes, and any binary body, goes to a file of its own in
`<mock>/` beside the route file, named by its content (so recording the same answer again names
the same file), and the route says `bodyFile:`. A JSON or text body goes to a `.json` file (a text
body as a JSON string), so its templates still apply; a binary body to a `.bin` file, sent as it is.

Everything is written to temporary files first and moved into place with `os.replace`, the route
file last: a recording cut short leaves the previous file as it was. Body files no route names any
more are removed afterwards.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import yaml

from preflight_sdk.config.model import MockResponse, MockRoute, MockWhen, RecordedOrigin

__all__ = ["INLINE_LIMIT", "write_route_file"]

INLINE_LIMIT = 4096
"""The largest body (encoded, in bytes) written inline in the route file."""

_HEADER = """\
# Routes recorded by preflight for the mock `{mock}` (`preflight run --record {mock}`).
# Routes written in e2e.yaml win over these. Record again to update them; edit them as you like.
"""
_SLUG = re.compile(r"[^a-z0-9]+")


def write_route_file(path: Path, *, mock: str, upstream: str | None, routes: list[MockRoute]) -> None:
    """Write `routes` as mock `mock`'s route file at `path` (see the module docstring). Blocking."""
    folder = path.parent / mock
    wanted: dict[str, bytes] = {}
    document = {
        "mock": mock,
        **({"upstream": upstream} if upstream else {}),
        "routes": [_route(route, folder, wanted) for route in routes],
    }
    text = _HEADER.format(mock=mock) + yaml.safe_dump(
        document, sort_keys=False, allow_unicode=True, default_flow_style=False, width=110
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    if wanted:
        folder.mkdir(parents=True, exist_ok=True)
    for name, data in wanted.items():
        target = folder / name
        if not target.is_file() or target.read_bytes() != data:
            _replace(target, data)
    _replace(path, text.encode("utf-8"))
    if folder.is_dir():
        for stale in folder.iterdir():
            if stale.is_file() and stale.name not in wanted:
                stale.unlink(missing_ok=True)


def _replace(target: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _route(route: MockRoute, folder: Path, wanted: dict[str, bytes]) -> dict[str, Any]:
    out: dict[str, Any] = {"method": route.method, "path": route.path}
    if route.name:
        out["name"] = route.name
    when = _when(route.when)
    if when:
        out["when"] = when
    label = _SLUG.sub("-", f"{route.method} {route.path}".lower()).strip("-")[:60] or "route"
    if route.sequence:
        out["sequence"] = [_answer(a, label, folder, wanted) for a in route.sequence]
        if route.loop:
            out["loop"] = True
    elif route.response is not None:
        out["response"] = _answer(route.response, label, folder, wanted)
    if route.times is not None:
        out["times"] = route.times
    if route.recorded is not None:
        out["recorded"] = _origin(route.recorded)
    return out


def _when(when: MockWhen | None) -> dict[str, Any]:
    if when is None:
        return {}
    out: dict[str, Any] = {}
    if when.query:
        out["query"] = when.query
    if when.headers:
        out["headers"] = when.headers
    if when.body is not None:
        out["body"] = when.body
    return out


def _origin(origin: RecordedOrigin) -> dict[str, Any]:
    out: dict[str, Any] = {"at": origin.at}
    if origin.example is not None:
        out["example"] = origin.example
    if origin.example_body is not None:
        out["exampleBody"] = origin.example_body
    out["calls"] = origin.calls
    return out


def _answer(answer: MockResponse, label: str, folder: Path, wanted: dict[str, bytes]) -> dict[str, Any]:
    out: dict[str, Any] = {"status": answer.status}
    if answer.headers:
        out["headers"] = dict(answer.headers)
    if answer.body_file is not None:
        data = Path(answer.body_file).read_bytes()  # an earlier recording's file, kept as it is
        name = Path(answer.body_file).name
        wanted[name] = data
        out["bodyFile"] = f"{folder.name}/{name}"
    elif isinstance(answer.body, bytes):
        name = f"{label}-{hashlib.sha256(answer.body).hexdigest()[:12]}.bin"
        wanted[name] = answer.body
        out["bodyFile"] = f"{folder.name}/{name}"
    elif answer.body is not None:
        encoded = msgspec.json.encode(answer.body)
        if len(encoded) > INLINE_LIMIT:
            data = msgspec.json.format(encoded, indent=2) + b"\n"
            name = f"{label}-{hashlib.sha256(data).hexdigest()[:12]}.json"
            wanted[name] = data
            out["bodyFile"] = f"{folder.name}/{name}"
        else:
            out["body"] = answer.body
    for key in ("delay", "fault", "proxy"):
        value = getattr(answer, key)
        if value is not None:
            out[key] = value
    return out
