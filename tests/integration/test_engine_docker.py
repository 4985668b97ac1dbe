"""`DockerEngine` on a real daemon: python-on-whales' children, logs as lines, builds and images."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import aclosing
from pathlib import Path

import anyio
import pytest

from preflight_sdk import Project
from preflight_sdk.engine.base import BuildSpec, ContainerSpec
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.faces.mcp.bounds import bound_reply

pytestmark = pytest.mark.anyio

OWNER = {"preflight.test": "engine-docker"}


def _descendants(pid: int) -> dict[int, str]:
    """Every live process below `pid`, with its command line."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                continue
            for kid in map(int, kids):
                try:
                    line = Path(f"/proc/{kid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                    state = Path(f"/proc/{kid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                except OSError:
                    continue
                if state != "Z":
                    found[kid] = line
                    todo.append(kid)
    return found


def _docker_children() -> list[str]:
    """The docker client processes below this one (not a daemon a fixture started, nor its proxies)."""
    return [
        line
        for line in _descendants(os.getpid()).values()
        if "docker" in line.split(" ")[0] and Path(line.split(" ")[0]).name not in ("dockerd", "docker-proxy")
    ]


async def _until_no_docker_children(what: str) -> None:
    with anyio.move_on_after(5):
        while _docker_children():
            await anyio.sleep(0.05)
    assert _docker_children() == [], what


@pytest.fixture
async def engine() -> DockerEngine:
    return DockerEngine()


@pytest.fixture
async def sleeper(engine: DockerEngine) -> AsyncIterator[str]:
    cid = await engine.run(
        ContainerSpec(
            name=f"pf-engine-test-{secrets.token_hex(3)}",
            image="preflight-base/busybox",
            network="bridge",
            labels=OWNER,
            command=["sh", "-c", "echo started; sleep 300"],
        )
    )
    yield cid
    await engine.remove_containers([cid], force=True)


async def test_cancelled_calls_and_closed_streams_leave_no_docker_process(
    engine: DockerEngine, sleeper: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "PREFLIGHT_DOCKER_API", "0"
    )  # a wait and an exec through the CLI, as on a remote engine
    on_cli = DockerEngine()
    with anyio.move_on_after(0.5) as waited:
        await on_cli.wait_exit(sleeper)  # the container sleeps for 300 s
    assert waited.cancelled_caught
    await _until_no_docker_children("a cancelled `docker container wait` is killed")

    async with aclosing(engine.follow_logs(sleeper)) as lines:
        async for line in lines:
            assert line.text == "started"
            break
    await _until_no_docker_children("a closed `docker logs --follow` is killed")

    timed_out = await on_cli.exec(sleeper, ["sleep", "30"], timeout=0.5)
    assert timed_out.timed_out and timed_out.exit_code == -1
    await _until_no_docker_children("a timed-out `docker exec` is killed")

    done = await on_cli.exec(sleeper, ["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (done.exit_code, done.stdout, done.stderr) == (3, "out\n", "err\n")


_WATCHER = textwrap.dedent(
    """
    import os, sys, anyio
    sys.path.insert(0, {tests!r})
    from test_engine_docker import _docker_children
    from preflight_sdk.engine.docker import DockerEngine

    async def main():
        engine = DockerEngine()

        async def watch():
            async for _ in engine.watch_exits({{"preflight.test": "orphan-{tag}"}}):
                pass

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            while not _docker_children():
                await anyio.sleep(0.05)
            print(sorted(pid for pid, line in __import__("test_engine_docker")._descendants(os.getpid()).items()
                         if " events " in line)[0], flush=True)
            await anyio.sleep(600)

    anyio.run(main)
    """
)


def test_the_events_watcher_dies_with_a_sigkilled_owner(tmp_path: Path) -> None:
    script = tmp_path / "watcher.py"
    script.write_text(_WATCHER.format(tests=str(Path(__file__).parent), tag=secrets.token_hex(3)))
    # The CLI lane, as on a remote engine (on the local socket the events come over the Engine
    # API, with no process to outlive anyone: tests/integration/test_engine_api.py).
    cli = {**os.environ, "PREFLIGHT_DOCKER_API": "0"}
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=cli)
    try:
        assert owner.stdout is not None
        watcher = int(owner.stdout.readline())
        assert "events" in Path(f"/proc/{watcher}/cmdline").read_text()
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _alive(watcher) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(watcher), "`docker events` outlived the process that started it"
    finally:
        owner.kill()
        owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


CHATTY = """
project: {name: chatty}
services:
  talker:
    build: {image: preflight-base/python}
    container:
      command:
        - python3
        - -c
        - |
          import sys, time
          print("A" * 40000, flush=True)
          for i in range(5):
              print(f"out {i}", flush=True)
              time.sleep(0.1)  # the daemon stamps each pipe as it reads it: apart, they are ordered
              sys.stderr.write(f"err {i}\\n"); sys.stderr.flush()
              time.sleep(0.1)
          print("B" * 1000000, flush=True)
          print("last", flush=True)
          time.sleep(300)
"""


async def test_logs_are_whole_lines_in_the_daemon_s_order_and_the_reply_is_bounded(
    project_dir: Callable[..., Path], engine: DockerEngine
) -> None:
    root = project_dir(config=CHATTY)
    async with Project.open(root) as project:
        await project.setup()
        container = (await project.status()).services[0].container_id
        assert container is not None
        with anyio.fail_after(20):
            while not [x for x in await engine.logs(container, tail=1) if x.text == "last"]:
                await anyio.sleep(0.1)

        # The engine joins Docker's 16 KB fragments: `tail` counts lines, not fragments.
        last_two = await engine.logs(container, tail=2)
        assert [(len(x.text), x.text[:1]) for x in last_two] == [(1_000_000, "B"), (4, "l")]
        every = await engine.logs(container)
        assert [x.text for x in every[1:11]] == [f"{s} {i}" for i in range(5) for s in ("out", "err")]
        assert [x.stream for x in every[1:3]] == ["stdout", "stderr"]
        assert len(every[0].text) == 40_000 and set(every[0].text) == {"A"}

        # The SDK gives the lines whole; the MCP face's reply holds every line once, at most 16 KB
        # a line, marked truncated.
        whole = await project.logs("talker", lines=2)
        assert whole.line_count == 2 and not whole.truncated and len(whole.lines[0].text) == 1_000_000
        reply = bound_reply(whole)
        assert reply.line_count == 2 and reply.truncated
        assert reply.lines[0].text.startswith("B" * 16_384) and reply.lines[0].text.endswith("more bytes)")
        assert reply.lines[1].text == "last"
        wire = json.dumps(reply.to_dict())
        assert len(wire) < 40_000
        everything = await project.logs("talker")
        assert everything.line_count == 13 and not everything.truncated
        assert bound_reply(everything).truncated


@pytest.fixture
def tag() -> Iterator[str]:
    name = f"pf-engine-test-{secrets.token_hex(3)}:e2e"
    yield name
    subprocess.run(["docker", "image", "rm", "-f", name], capture_output=True)


async def test_a_legacy_build_streams_its_lines_without_the_deprecation_notice(
    engine: DockerEngine, tmp_path: Path, tag: str
) -> None:
    (tmp_path / "Dockerfile").write_text("FROM preflight-base/busybox\nRUN echo built-here\n")
    lines: list[str] = []
    spec = BuildSpec(image=tag, context=str(tmp_path), dockerfile=str(tmp_path / "Dockerfile"), labels=OWNER)
    built = await engine.build(spec, lines.append)
    assert lines and not any("DEPRECATED" in x or "legacy builder" in x for x in lines)
    assert any("built-here" in x for x in lines)
    assert built == _image_id(tag)
    # Each label would be a build step committing a container of its own (about 70 ms apiece).
    assert not any(" : LABEL " in x for x in lines), lines


IMAGE_PROJECT = """
project: {{name: {name}}}
services:
  api:
    build: {{image: {tag}, dockerfile: Dockerfile}}
"""


def _image_id(ref: str) -> str | None:
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", ref], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


async def test_clean_images_removes_this_checkout_s_tag_of_an_image_another_shares(
    project_dir: Callable[..., Path], tag: str
) -> None:
    # Built from the same files, two checkouts' images are one image (the legacy builder puts
    # no label on it) under two tags: each clean removes its own tag, the last one the image.
    files = {"Dockerfile": 'FROM preflight-base/busybox\nCMD ["sleep", "303"]\n'}
    other = tag.replace(":e2e", "-other:e2e")
    first = project_dir(config=IMAGE_PROJECT.format(name="one", tag=tag), files=files, name="one")
    second = project_dir(config=IMAGE_PROJECT.format(name="two", tag=other), files=files, name="two")
    try:
        async with Project.open(first) as one, Project.open(second) as two:
            await one.build()
            await two.build()
            assert _image_id(tag) is not None and _image_id(other) is not None
            cleaned = await one.clean(images=True)
            assert [(i.name, i.action) for i in cleaned.images] == [(tag, "removed")]
            assert _image_id(tag) is None and _image_id(other) is not None
            cleaned = await two.clean(images=True)
            assert [(i.name, i.action) for i in cleaned.images] == [(other, "removed")]
            assert _image_id(other) is None
    finally:
        subprocess.run(["docker", "image", "rm", "-f", other], capture_output=True)


@pytest.mark.parametrize("lane", ["api", "cli"])
async def test_a_rebuild_leaves_no_dangling_image_and_clean_images_removes_what_this_checkout_built(
    project_dir: Callable[..., Path], tag: str, lane: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_DOCKER_API", "1" if lane == "api" else "0")
    dockerfile = 'FROM preflight-base/busybox\nCMD ["sleep", "{}"]\n'
    first = project_dir(
        config=IMAGE_PROJECT.format(name="one", tag=tag),
        files={"Dockerfile": dockerfile.format(300)},
        name="one",
    )
    second = project_dir(
        config=IMAGE_PROJECT.format(name="two", tag=tag),
        files={"Dockerfile": dockerfile.format(301)},
        name="two",
    )
    left: list[str] = []
    try:
        async with Project.open(first) as one:
            await one.build()
            old = _image_id(tag)
            assert old is not None
            (first / "Dockerfile").write_text(dockerfile.format(302))
            await one.build()
            rebuilt = _image_id(tag)
            assert rebuilt is not None and rebuilt != old
            assert _image_id(old) is None, "the image this checkout built before was removed, not left <none>"
        left.append(rebuilt)
        async with Project.open(second) as two:
            await two.build()
        new = _image_id(tag)
        assert new is not None and new != rebuilt

        # Through the CLI, as a user types it: the second checkout removes the image it built.
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / "preflight"),
                "--json",
                "-C",
                str(second),
                "clean",
                "--images",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        envelope = json.loads(done.stdout)
        assert envelope["success"], done.stderr
        assert [(i["name"], i["action"]) for i in envelope["data"]["images"]] == [(tag, "removed")]
        assert _image_id(tag) is None
    finally:
        # With Docker's legacy builder the image another checkout built carries no label, so the
        # second build leaves it untagged (as `docker build` does); BuildKit's is labelled and tidied.
        subprocess.run(["docker", "image", "rm", *left], capture_output=True)
