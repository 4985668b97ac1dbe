"""Project.logs on the fake engine: `since` as a duration or an ISO time, with `lines`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest
from support.fake_engine import Behaviour, FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.results.lifecycle import LogsResult
from preflight_sdk.faces.mcp.bounds import MAX_LINE_BYTES, MAX_REPLY_BYTES, bound_reply

pytestmark = pytest.mark.anyio


def _texts(result: LogsResult) -> list[str]:
    return [line.text for line in result.lines]


CONFIG = "project: {name: x}\nservices:\n  api:\n    build: {image: 'busybox:test'}\n"


@pytest.fixture
async def project(make_project: Callable[..., Path], engine: FakeEngine) -> AsyncIterator[Project]:
    """A running `api` whose output spans the last three hours."""
    engine.behave("api", Behaviour(logs=["ready"]))
    project = Project.open(make_project(CONFIG), engine=engine)
    await project.setup()
    [cid] = list(engine.containers)
    now = datetime.now(UTC)
    engine.write_log(cid, "booted", at=now - timedelta(minutes=170))
    engine.write_log(cid, "GET /orders 200", at=now - timedelta(minutes=10))
    engine.write_log(cid, "WARN slow query", stream="stderr", at=now - timedelta(minutes=3))
    engine.write_log(cid, "GET /health 200", at=now - timedelta(minutes=1))
    yield project


async def test_logs_without_since_return_every_line_in_time_order(project: Project) -> None:
    result = await project.logs("api")
    assert _texts(result) == ["booted", "GET /orders 200", "WARN slow query", "GET /health 200", "ready"]
    assert [e.stream for e in result.lines] == ["stdout", "stdout", "stderr", "stdout", "stdout"]
    assert result.lines == sorted(result.lines, key=lambda e: e.timestamp)


async def test_since_as_a_duration_keeps_only_recent_lines(project: Project) -> None:
    assert _texts(await project.logs("api", since="5m")) == ["WARN slow query", "GET /health 200", "ready"]
    assert _texts(await project.logs("api", since="2m")) == ["GET /health 200", "ready"]
    assert (await project.logs("api", since="30m")).line_count == 4
    assert (await project.logs("api", since="3h")).line_count == 5


async def test_since_as_an_iso_time_in_any_zone(project: Project) -> None:
    moment = datetime.now(UTC) - timedelta(minutes=5)
    as_z = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    as_offset = moment.astimezone(timezone(timedelta(hours=-7))).isoformat()
    as_naive = moment.replace(tzinfo=None).isoformat()  # taken as UTC
    expected = ["WARN slow query", "GET /health 200", "ready"]
    for since in (as_z, as_offset, as_naive):
        assert _texts(await project.logs("api", since=since)) == expected, since


async def test_since_and_lines_together_give_the_last_lines_of_the_window(project: Project) -> None:
    result = await project.logs("api", lines=2, since="30m")
    assert _texts(result) == ["GET /health 200", "ready"]
    assert _texts(await project.logs("api", lines=0, since="30m")) == []


async def test_a_since_in_the_future_gives_no_lines(project: Project) -> None:
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    result = await project.logs("api", since=later)
    assert result.lines == [] and result.line_count == 0


async def test_a_since_that_is_neither_duration_nor_time_is_invalid_input(project: Project) -> None:
    with pytest.raises(PreflightError) as caught:
        await project.logs("api", since="last tuesday")
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details is not None and caught.value.details["field"] == "since"


async def test_since_also_applies_to_a_stopped_container(project: Project, engine: FakeEngine) -> None:
    await engine.stop_containers(list(engine.containers))
    with pytest.raises(PreflightError) as caught:
        await project.logs("api", since="2m")
    assert caught.value.code == "CONTAINER_NOT_RUNNING"
    assert caught.value.details is not None and caught.value.details["lines"] == ["GET /health 200", "ready"]


async def test_the_fake_filters_until_as_docker_does(project: Project, engine: FakeEngine) -> None:
    [cid] = list(engine.containers)
    now = datetime.now(UTC)
    window = await engine.logs(cid, since=now - timedelta(minutes=20), until=now - timedelta(minutes=2))
    assert [line.text for line in window] == ["GET /orders 200", "WARN slow query"]


async def test_the_sdk_returns_every_line_whole_and_a_tool_reply_is_bounded(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.behave("api", Behaviour(logs=["ready"]))
    project = Project.open(make_project(CONFIG), engine=engine)
    await project.setup()
    [cid] = list(engine.containers)
    engine.write_log(cid, "é" * 500_000)  # 1 MB of UTF-8 in one line
    for i in range(40):
        engine.write_log(cid, f"{i:02d} " + "x" * 10_000)
    small = await project.logs("api", lines=5)
    assert small.line_count == 5 and not small.truncated
    assert [line.text[:2] for line in small.lines] == ["35", "36", "37", "38", "39"]
    assert bound_reply(small) is small  # within the budget: the reply is the result

    whole = await project.logs("api", lines=100)
    assert not whole.truncated and whole.line_count == 42  # the SDK returns the whole result
    assert any(line.text == "é" * 500_000 for line in whole.lines)

    reply = bound_reply(whole)  # what one MCP tool reply carries
    size = sum(len(line.text.encode()) for line in reply.lines)
    assert size <= MAX_REPLY_BYTES and reply.truncated
    assert reply.line_count == len(reply.lines) < 42, "the oldest lines were left out, newest kept"
    assert reply.lines[-1].text.startswith("39 ")


async def test_a_cut_line_keeps_its_first_16_kb_and_says_how_much_is_missing(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.behave("api", Behaviour(logs=["ready"]))
    project = Project.open(make_project(CONFIG), engine=engine)
    await project.setup()
    [cid] = list(engine.containers)
    engine.write_log(cid, "é" * 500_000)
    reply = bound_reply(await project.logs("api", lines=1))
    [line] = reply.lines
    assert reply.truncated and reply.line_count == 1
    assert line.text.startswith("é" * 8192)
    assert line.text.endswith(f"… ({1_000_000 - MAX_LINE_BYTES} more bytes)")
    assert len(line.text.encode()) < MAX_LINE_BYTES + 100


async def test_an_argument_of_a_megabyte_is_not_echoed_whole_in_the_error(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    project = Project.open(make_project(CONFIG), engine=engine)
    await project.setup()
    with pytest.raises(PreflightError) as caught:
        await project.logs("x" * 1_000_000)
    assert caught.value.code == "CONTAINER_NOT_FOUND"
    assert len(msgspec.json.encode(caught.value.to_info())) < 10_000
    assert caught.value.details is not None
    assert caught.value.details["container"].endswith("(998000 more characters)")
