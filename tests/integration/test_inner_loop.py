"""The inner loop on a real Docker daemon: reuse, each kind of change acted on, dependants, mocks reload."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

from preflight_sdk import PreflightError, Project
from preflight_sdk.core.results.lifecycle import SetupResult
from preflight_sdk.core.results.run import RunResult

pytestmark = pytest.mark.anyio

CONFIG = """
project: {{name: loop}}
services:
  db:
    build: {{image: "{image}", dockerfile: db/Dockerfile, context: db, args: {{FLAVOR: plain}}}}
    container:
      ports: ["0:8000"]
      healthcheck: {{path: /health}}
  seed:
    kind: job
    dependsOn: [db]
    build: {{image: preflight-base/busybox}}
    container:
      command: ["sh", "-c", "wget -q -O- http://db:8000/health"]
  api:
    dependsOn: [seed]
    build: {{image: preflight-base/busybox}}
    container:
      ports: ["0:8080"]
      environment: {{GREETING: hello}}
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/health && httpd -f -p 8080 -h /www"]
      healthcheck: {{path: /health}}
mocks:
  pay:
    port: 0
    routes:
      - {{method: GET, path: /ping, response: {{status: 200, body: {{v: 1}}}}}}
tests:
  suites:
    - {{id: up, name: Up, runner: shell, file: up.sh, expect: {{exitCode: 0}}}}
"""

DOCKERFILE = """\
ARG BASE=preflight-base/python
FROM ${BASE}
ARG FLAVOR=plain
COPY . /www
RUN echo "$FLAVOR" > /www/flavor
CMD ["python3", "-m", "http.server", "8000", "-d", "/www"]
"""


@pytest.fixture
def loop_project(tmp_path: Path) -> Iterator[Path]:
    """The test project: a built `db`, a seeding job and an `api` depending on it, a mock."""
    image = f"preflight-test/loop-db:{uuid.uuid4().hex[:10]}"
    root = _write(tmp_path / "a", image)
    yield root
    force_clean(root)
    subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


def _write(root: Path, image: str) -> Path:
    (root / "db").mkdir(parents=True)
    (root / "e2e.yaml").write_text(textwrap.dedent(CONFIG.format(image=image)))
    (root / "up.sh").write_text('wget -q -O- "$PREFLIGHT_API_URL/health"\n')
    (root / "db" / "Dockerfile").write_text(DOCKERFILE)
    (root / "db" / "health").write_text("ok\n")
    (root / "db" / "app.py").write_text("VERSION = 1\n")
    (root / "db" / "notes.txt").write_text("not part of the image\n")
    (root / "db" / ".dockerignore").write_text("notes.txt\n")
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1))


def _actions(result: SetupResult) -> dict[str, tuple[str | None, str | None]]:
    return {s.name: (s.action, s.reason) for s in result.services}


def _ids(result: SetupResult) -> dict[str, str]:
    return {s.name: s.container_id for s in result.services}


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return str(reply.read().decode())


async def test_two_runs_in_a_row_the_second_reuses_everything_and_keep_false_cleans(
    loop_project: Path,
) -> None:
    project = Project.open(loop_project)
    try:
        first = await project.run()
        assert first.status == "passed", first.summary
        up = await project.setup()
        assert {s.action for s in up.services} == {"reused"}
        again = await project.run(keep=False)
        assert again.status == "passed", again.summary
        assert labelled(loop_project) == ([], []), "keep=False removes the environment"
    finally:
        await project.clean()


async def test_each_kind_of_change_is_acted_on_and_nothing_else(loop_project: Path) -> None:
    root = loop_project
    project = Project.open(root)
    config = root / "e2e.yaml"
    try:
        await project.build()
        started = await project.setup()
        assert {s.action for s in started.services} == {"started"}
        ids = _ids(started)

        async def step(expected: dict[str, tuple[str, str]]) -> SetupResult:
            nonlocal ids
            result = await project.setup()
            acted = {name: acted for name, acted in _actions(result).items() if acted[0] != "reused"}
            assert acted == expected
            now = _ids(result)
            for name in now:
                assert (now[name] == ids[name]) == (name not in expected), f"{name} container"
            ids = now
            return result

        # Nothing changed, and a file .dockerignore excludes changed: nothing restarts.
        await step({})
        (root / "db" / "notes.txt").write_text("edited, still ignored\n")
        await step({})

        # A build context file: rebuilt, then its dependants in order (the job runs again).
        (root / "db" / "app.py").write_text("VERSION = 2\n")
        result = await step(
            {
                "db": ("rebuilt", "app.py changed"),
                "seed": ("recreated", "depends on db, which was recreated"),
                "api": ("recreated", "depends on seed, which re-ran"),
            }
        )
        db = next(s for s in result.services if s.name == "db")
        assert _get(f"{db.url}/app.py") == "VERSION = 2\n", "the new code runs"

        _edit(root / "db" / "Dockerfile", "RUN echo", "RUN echo built: && echo")
        await step(
            {
                "db": ("rebuilt", "Dockerfile changed"),
                "seed": ("recreated", "depends on db, which was recreated"),
                "api": ("recreated", "depends on seed, which re-ran"),
            }
        )
        _edit(config, "FLAVOR: plain", "FLAVOR: spicy")
        result = await step(
            {
                "db": ("rebuilt", "build args changed"),
                "seed": ("recreated", "depends on db, which was recreated"),
                "api": ("recreated", "depends on seed, which re-ran"),
            }
        )
        db = next(s for s in result.services if s.name == "db")
        assert _get(f"{db.url}/flavor") == "spicy\n"

        # The container spec of the last service: only it is recreated.
        _edit(config, "GREETING: hello", "GREETING: bonjour")
        await step({"api": ("recreated", "environment changed")})
        _edit(config, "echo ok > /www/health", "echo fine > /www/health")
        await step({"api": ("recreated", "command changed")})
        _edit(config, '["0:8080"]', '["0:8080", "0:8081"]')
        await step({"api": ("recreated", "ports changed")})
        _edit(config, "      environment:", "      volumes: ['./db:/data:ro']\n      environment:")
        await step({"api": ("recreated", "volumes changed")})

        # A job's own command: it runs again, and what depends on it is recreated.
        _edit(config, "wget -q -O- http://db:8000/health", "wget -q -O- http://db:8000/flavor")
        await step(
            {"seed": ("recreated", "command changed"), "api": ("recreated", "depends on seed, which re-ran")}
        )

        # A mock's routes: reloaded in place (same port, journal kept), no container touched.
        port = next(m.port for m in (await project.setup()).mocks)
        assert json.loads(_get(f"http://127.0.0.1:{port}/ping")) == {"v": 1}
        _edit(config, "body: {v: 1}", "body: {v: 2}")
        result = await step({})
        assert [(m.name, m.action, m.port) for m in result.mocks] == [("pay", "reloaded", port)]
        assert json.loads(_get(f"http://127.0.0.1:{port}/ping")) == {"v": 2}
        journal = await project.mock_requests("pay")
        assert journal.mocks[0].total_requests == 2, "the journal kept the request made before the reload"

        # A container that died is started again; the rest stays.
        subprocess.run(["docker", "rm", "-f", ids["api"]], capture_output=True, check=True)
        await step({"api": ("started", "no container yet")})
        assert (await project.run()).status == "passed"
    finally:
        await project.clean()


async def test_two_checkouts_of_one_project_stay_separate(loop_project: Path, tmp_path: Path) -> None:
    other = tmp_path / "b"
    shutil.copytree(loop_project, other, ignore=shutil.ignore_patterns(".preflight"))
    first, second = Project.open(loop_project), Project.open(other)
    try:
        await first.build()
        a = await first.setup()
        b = await second.setup()
        assert set(_ids(a).values()).isdisjoint(_ids(b).values())
        _edit(other / "e2e.yaml", "GREETING: hello", "GREETING: hi")
        b2 = await second.setup()
        assert _actions(b2)["api"] == ("recreated", "environment changed")
        a2 = await first.setup()
        assert {s.action for s in a2.services} == {"reused"}
        assert _ids(a2) == _ids(a)
    finally:
        await first.clean()
        await second.clean()
        force_clean(other)


async def test_watch_reruns_on_each_change_only_the_affected_suite_and_cleans_when_stopped(
    loop_project: Path,
) -> None:
    project = Project.open(loop_project)
    (loop_project / "other.sh").write_text("exit 0\n")
    _edit(
        loop_project / "e2e.yaml",
        "    - {id: up,",
        "    - {id: other, name: Other, runner: shell, file: other.sh, expect: {exitCode: 0}}\n    - {id: up,",
    )
    outcomes = []
    try:
        async with aclosing(project.watch()) as runs:
            async for outcome in runs:
                outcomes.append(outcome)
                if len(outcomes) == 1:
                    before = {s.name: s.container_id for s in (await project.status()).services}
                    (loop_project / "db" / "app.py").write_text("VERSION = 3\n")
                elif len(outcomes) == 2:
                    after = {s.name: s.container_id for s in (await project.status()).services}
                    (loop_project / "up.sh").write_text("exit 3\n")
                elif len(outcomes) == 3:
                    (loop_project / "db" / "Dockerfile").write_text(
                        "FROM preflight-base/python\nRUN exit 7\n"
                    )
                else:
                    break
    finally:
        await project.clean()
    first, second, third, fourth = outcomes
    assert isinstance(first, RunResult) and first.status == "passed"
    assert isinstance(second, RunResult) and second.status == "passed"
    assert [s.id for s in second.suites] == ["other", "up"], "a service change re-runs every suite"
    assert after["db"] != before["db"], "the changed service was rebuilt"
    assert isinstance(third, RunResult) and third.status == "failed"
    assert [s.id for s in third.suites] == ["up"], "a suite file change re-runs that suite alone"
    assert isinstance(fourth, PreflightError) and fourth.code == "BUILD_FAILED", (
        "an error is yielded, not raised"
    )
    assert labelled(loop_project) == ([], []), "stopping the iteration removes the environment"


def _events(since: float, until: float) -> list[tuple[int, str, str]]:
    """(time in ns, action, container id) of each container create and destroy in the window."""
    done = subprocess.run(
        [
            "docker", "events", "--since", f"{since:.3f}", "--until", f"{until:.3f}",
            "--filter", "type=container", "--filter", "event=create", "--filter", "event=destroy",
            "--format", "{{json .}}",
        ],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    found = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [(int(e["timeNano"]), str(e["Action"]), str(e["Actor"]["ID"])) for e in found]


async def test_a_recreated_container_goes_while_its_successor_starts_unless_it_holds_a_fixed_port(
    loop_project: Path,
) -> None:
    import socket
    import time

    config = loop_project / "e2e.yaml"
    project = Project.open(loop_project)
    try:
        await project.build()
        ids = _ids(await project.setup())

        begun = time.time()
        _edit(config, "GREETING: hello", "GREETING: bonjour")
        result = await project.setup()
        now = _ids(result)
        events = _events(begun, time.time() + 0.5)
        created = next(t for t, action, ref in events if action == "create" and ref == now["api"])
        destroyed = next(t for t, action, ref in events if action == "destroy" and ref == ids["api"])
        assert created < destroyed, "the successor was created while the old container was being removed"
        names = subprocess.run(
            ["docker", "ps", "-a", "--filter", f"id={ids['api']}", "-q"], capture_output=True, text=True
        )
        assert names.stdout.strip() == "", "the old container is gone when setup returns"

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        _edit(config, '["0:8080"]', f'["{port}:8080"]')
        await project.setup()
        ids = _ids(await project.setup())
        begun = time.time()
        _edit(config, "GREETING: bonjour", "GREETING: hallo")
        result = await project.setup()
        assert _actions(result)["api"] == ("recreated", "environment changed")
        events = _events(begun, time.time() + 0.5)
        created = next(t for t, action, ref in events if action == "create" and ref == _ids(result)["api"])
        destroyed = next(t for t, action, ref in events if action == "destroy" and ref == ids["api"])
        assert destroyed < created, "a fixed host port is free before the successor takes it"
        assert _get(f"http://127.0.0.1:{port}/health") == "ok\n"
    finally:
        await project.clean()
