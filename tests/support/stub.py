"""The runner tests' HTTP stub (a starlette app) and helpers to write and read test-only projects."""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from preflight_sdk import Project
from preflight_sdk.core.results.run import CaseResult, RunResult
from preflight_sdk.engine.base import Engine

DOC: dict[str, Any] = {
    "id": 42,
    "name": "Widget",
    "price": 9.5,
    "active": True,
    "note": None,
    "tags": ["red", "blue", "green"],
    "owner": {"id": 7, "name": "Ann", "email": "ann@example.com", "roles": ["admin", "dev"]},
    "items": [
        {"id": 1, "sku": "A-1", "qty": 2, "price": 3.0},
        {"id": 2, "sku": "B-2", "qty": 5, "price": 1.5},
    ],
    "meta": {"total": 2, "page": {"number": 1, "size": 20}},
}


class Stub:
    """The stub's state: call counters and call times per key (read directly by the tests)."""

    def __init__(self) -> None:
        self.url = ""
        self.calls: dict[str, list[float]] = defaultdict(list)
        self.items: dict[int, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.next_id = 100

    def key(self) -> str:
        """A fresh counter key (tests must not share counters)."""
        return uuid.uuid4().hex[:12]

    def record(self, key: str) -> int:
        with self.lock:
            self.calls[key].append(time.monotonic())
            return len(self.calls[key])

    def gaps(self, key: str) -> list[float]:
        """Seconds between consecutive calls of `key`."""
        times = self.calls[key]
        return [b - a for a, b in itertools.pairwise(times)]


async def _body(request: Request) -> Any:
    raw = await request.body()
    kind = request.headers.get("content-type", "")
    if not raw:
        return None
    if "json" in kind:
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode()
    if "x-www-form-urlencoded" in kind:
        form = await request.form()
        return {"form": {k: form.getlist(k) if len(form.getlist(k)) > 1 else v for k, v in form.items()}}
    return raw.decode()


def build_app(stub: Stub) -> Starlette:
    async def echo(request: Request) -> Response:
        query = {k: request.query_params.getlist(k) for k in request.query_params}
        return JSONResponse(
            {
                "method": request.method,
                "path": request.url.path,
                "query": {k: v[0] if len(v) == 1 else v for k, v in query.items()},
                "headers": {k.lower(): v for k, v in request.headers.items()},
                "contentType": request.headers.get("content-type"),
                "body": await _body(request),
            }
        )

    async def doc(request: Request) -> Response:
        return JSONResponse(DOC, headers={"X-Request-Id": "req-123", "X-Count": "5"})

    async def status(request: Request) -> Response:
        code = int(request.path_params["code"])
        if code in (204, 304):
            return Response(status_code=code)
        body = {"status": code, "error": "boom" if code >= 400 else None}
        return JSONResponse(body, status_code=code)

    async def flaky(request: Request) -> Response:
        key = request.path_params["key"]
        fail = int(request.query_params.get("fail", "2"))
        attempt = stub.record(key)
        if attempt <= fail:
            return JSONResponse({"attempt": attempt, "ok": False}, status_code=503)
        return JSONResponse({"attempt": attempt, "ok": True})

    async def poll(request: Request) -> Response:
        key = request.path_params["key"]
        ready = int(request.query_params.get("ready", "3"))
        fail_at = int(request.query_params.get("failAt", "0"))
        attempt = stub.record(key)
        state = "pending"
        if fail_at and attempt >= fail_at:
            state = "failed"
        elif attempt >= ready:
            state = "done"
        return JSONResponse({"state": state, "attempt": attempt})

    async def slow(request: Request) -> Response:
        ms = int(request.query_params.get("ms", "300"))
        await anyio.sleep(ms / 1000)
        return JSONResponse({"slept": ms})

    async def redirect(request: Request) -> Response:
        return RedirectResponse(request.query_params.get("to", "/echo/redirected"), status_code=302)

    async def text(request: Request) -> Response:
        return PlainTextResponse("hello plain text\nsecond line")

    async def json_as_text(request: Request) -> Response:
        return PlainTextResponse('{"sniffed": true, "n": 3}')

    async def form_response(request: Request) -> Response:
        return Response("a=1&b=two", media_type="application/x-www-form-urlencoded")

    async def big(request: Request) -> Response:
        size = int(request.query_params.get("n", "10000"))
        return JSONResponse({"blob": "x" * size, "n": size})

    async def secret(request: Request) -> Response:
        return JSONResponse({"ok": True}, headers={"Set-Cookie": "session=s3cr3t", "X-Plain": "visible"})

    async def create_item(request: Request) -> Response:
        body = await request.json()
        with stub.lock:
            stub.next_id += 1
            item = {"id": stub.next_id, **body}
            stub.items[stub.next_id] = item
        return JSONResponse(item, status_code=201, headers={"Location": f"/items/{item['id']}"})

    async def get_item(request: Request) -> Response:
        item = stub.items.get(int(request.path_params["id"]))
        if item is None:
            return JSONResponse({"error": "no such item"}, status_code=404)
        return JSONResponse(item)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(
        routes=[
            Route("/echo", echo, methods=methods),
            Route("/echo/{rest:path}", echo, methods=methods),
            Route("/doc", doc),
            Route("/status/{code:int}", status, methods=methods),
            Route("/flaky/{key}", flaky, methods=methods),
            Route("/poll/{key}", poll),
            Route("/slow", slow),
            Route("/redirect", redirect),
            Route("/text", text),
            Route("/json-as-text", json_as_text),
            Route("/form-response", form_response),
            Route("/big", big, methods=["GET", "POST"]),
            Route("/secret", secret),
            Route("/items", create_item, methods=["POST"]),
            Route("/items/{id:int}", get_item),
        ]
    )


class _ThreadServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # served from a thread
        pass


@contextmanager
def serve_in_thread(app: Starlette) -> Iterator[str]:
    """Serve `app` with uvicorn on a free loopback port in a thread; yield its base URL."""
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="error",
        access_log=False,
        lifespan="off",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    server = _ThreadServer(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the stub server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _ThreadServer(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # serving from a thread
        pass


def e2e_yaml(suites: list[dict[str, Any]], tests: dict[str, Any] | None = None, name: str = "runners") -> str:
    """Return a test-only e2e.yaml listing `suites` (plain dicts, camelCase keys)."""
    document = {"version": "1", "project": {"name": name}, "tests": {"suites": suites, **(tests or {})}}
    return json.dumps(document, indent=2)  # JSON is YAML


MakeProject = Callable[..., Path]


async def run(root: Path, **options: Any) -> RunResult:
    """Run the project at `root` (all suites, or `filter=`)."""
    return await Project.open(root).run(**options)


def one_suite(text: str) -> list[tuple[str, str]]:
    """A project of one suite `s` holding `text`."""
    return [("s", text)]


def case(result: RunResult, name: str) -> CaseResult:
    """Return the case called `name` (any suite)."""
    for suite in result.suites:
        for item in suite.cases:
            if item.name == name:
                return item
    raise KeyError(f"no case {name!r} in {[c.name for s in result.suites for c in s.cases]}")


def wire(value: Any) -> Any:
    """The JSON form (camelCase) of a result, as agents receive it."""
    return msgspec.json.decode(msgspec.json.encode(value))


def write_project(root: Path, document: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    """Write a whole e2e.yaml (`document`, camelCase keys) and `files` under `root`; return `root`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "e2e.yaml").write_text(json.dumps({"version": "1", **document}, indent=2))
    for relative, text in (files or {}).items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


@asynccontextmanager
async def environment(root: Path, engine: Engine | None = None) -> AsyncIterator[Project]:
    """Set up the project at `root` (mocks in this process, services on `engine`); clean after.

    A project of mocks and tests only needs no Docker; one with services needs a fake `engine`.
    """
    project = Project.open(root, engine=engine)
    await project.setup()
    try:
        yield project
    finally:
        await project.clean()
