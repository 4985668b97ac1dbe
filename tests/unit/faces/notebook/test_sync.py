"""`project.sync`: every operation as a blocking call, on one background event loop."""

from __future__ import annotations

import _thread
import inspect
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import ConfigError, ProgressEvent, Project
from preflight_sdk.faces.reflection.registry import public_coroutines
from preflight_sdk.sync import SyncProject

CONFIG = """
project: {name: shop}
services:
  api:
    build: {image: "shop/api:test", dockerfile: Dockerfile}
    container: {ports: ["0:8080"], healthcheck: {path: /health}}
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Callable[[], tuple[Project, FakeEngine]]]:
    """A project on the fake engine; the engine lives on the project's background loop."""
    made: list[tuple[Project, Any, Any]] = []

    def make() -> tuple[Project, FakeEngine]:
        root = tmp_path / f"p{len(made)}"
        root.mkdir()
        (root / "e2e.yaml").write_text(textwrap.dedent(CONFIG))
        (root / "Dockerfile").write_text("FROM scratch\n")
        engine = FakeEngine()
        p = Project.open(root, engine=engine)
        # The fake's task group must live in one task of the project's loop for its whole life.
        portal = p.sync.portal
        entered = portal.wrap_async_context_manager(engine)
        entered.__enter__()
        made.append((p, portal, entered))
        return p, engine

    yield make
    for p, portal, entered in made:
        if not p.sync.closed and p.sync.portal is portal:
            entered.__exit__(None, None, None)
        p.sync.close()


def test_every_public_coroutine_of_project_has_a_blocking_twin_with_the_same_signature_and_doc() -> None:
    operations = dict(public_coroutines(Project))
    assert {"build", "setup", "run", "clean", "status", "logs", "mock_requests", "verify"} <= set(operations)
    for name, method in operations.items():
        twin = getattr(SyncProject, name)
        assert inspect.signature(twin) == inspect.signature(method), name
        assert twin.__doc__ == method.__doc__ and twin.__doc__, name
        assert twin.__name__ == name and not inspect.iscoroutinefunction(twin), name
    # Async generators become blocking iterators.
    assert inspect.signature(SyncProject.follow_logs) == inspect.signature(Project.follow_logs)
    own = {"call", "iterate", "close", "closed", "portal", "project"}
    assert not own & set(operations), "an operation would hide a SyncProject method"


def test_operations_block_until_done_and_progress_sinks_still_work(
    project: Callable[[], tuple[Project, FakeEngine]],
) -> None:
    p, engine = project()
    engine.behave("api", Behaviour(logs=["api listening"]))
    events: list[tuple[ProgressEvent, int]] = []

    def sink(event: ProgressEvent) -> None:
        events.append((event, threading.get_ident()))

    with p.sync as s:
        assert s.init().state == "initialized"
        built = s.build(progress=sink)
        assert [b.status for b in built.services] == ["success"]
        assert events[-1][0].kind == "done" and events[-1][0].status == "ok"
        assert any(e.kind == "log" for e, _ in events)
        assert {thread for _, thread in events} != {threading.get_ident()}  # reported from the loop's thread
        setup = s.setup("60s", progress=sink)  # positional arguments work too
        assert setup.services[0].status == "healthy"
        assert s.status().state == "running"
        lines = s.follow_logs("api")  # an async generator becomes a blocking iterator
        assert next(lines).text == "api listening"
        lines.close()
    # Leaving the block cleaned what this object started, then closed the loop.
    assert p.sync.closed
    assert p.sync.status().state != "running"


def test_one_loop_serves_every_call_until_close(project: Callable[[], tuple[Project, FakeEngine]]) -> None:
    p, _ = project()

    async def loop_thread() -> threading.Thread:
        return threading.current_thread()

    first = p.sync.call(loop_thread)
    p.sync.init()
    assert p.sync.call(loop_thread) is first and first is not threading.current_thread()
    p.sync.close()
    assert p.sync.closed and not first.is_alive()
    assert p.sync.call(loop_thread) is not first  # a later call starts a new loop


def test_errors_propagate_with_their_code(tmp_path: Path) -> None:
    sync = Project.open(tmp_path).sync
    try:
        with pytest.raises(ConfigError) as caught:
            sync.init()
        assert caught.value.code == "CONFIG_NOT_FOUND"
    finally:
        sync.close()


@pytest.mark.anyio
async def test_it_works_while_an_event_loop_runs_in_the_calling_thread_and_from_worker_threads(
    project: Callable[[], tuple[Project, FakeEngine]],
) -> None:
    p, _ = project()
    # Like a notebook cell: a loop is running in this thread, and no asyncio.run is attempted.
    assert p.sync.init().project_name == "shop"
    built = await anyio.to_thread.run_sync(lambda: p.sync.build(progress=False))
    assert built.services[0].status == "success"
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.001)

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        setup = await anyio.to_thread.run_sync(lambda: p.sync.setup(progress=False))
        tg.cancel_scope.cancel()
    assert setup.services[0].status == "healthy" and ticks > 0  # this loop kept running meanwhile
    assert (await anyio.to_thread.run_sync(p.sync.clean)).containers


def test_the_default_progress_view_is_made_on_the_calling_thread(
    project: Callable[[], tuple[Project, FakeEngine]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import preflight_sdk.sync as sync_module

    made: list[tuple[str, int]] = []
    seen: list[ProgressEvent] = []

    def resolve(progress: Any, operation: str) -> Callable[[ProgressEvent], None]:
        made.append((operation, threading.get_ident()))
        return seen.append

    monkeypatch.setattr(sync_module, "resolve_sink", resolve)
    p, _ = project()
    p.sync.build()
    assert made == [("build", threading.get_ident())]
    assert seen[-1].kind == "done"
    p.sync.build(progress=False)  # an explicit choice is left alone
    assert len(made) == 1


def test_an_interrupt_cancels_the_running_operation(
    project: Callable[[], tuple[Project, FakeEngine]],
) -> None:
    p, _ = project()
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise

    def interrupt() -> None:
        if started.wait(10):
            _thread.interrupt_main()

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        p.sync.call(forever)
    assert cancelled.is_set()  # the operation was cancelled before the interrupt propagated


def test_a_script_that_never_closes_it_still_exits(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import threading
        from preflight_sdk import Project
        p = Project.open({str(tmp_path)!r})
        try:
            p.sync.init()
        except Exception as exc:
            print(type(exc).__name__)
        print(any(t.name == "preflight-sync" for t in threading.enumerate()))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ConfigError", "True"]
    assert done.stderr == ""
