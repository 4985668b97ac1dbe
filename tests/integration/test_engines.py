"""The same lifecycle on every engine: Docker, Docker through its CLI alone, and Podman.

`docker-cli` is Docker with `PREFLIGHT_DOCKER_API=0`: the calls that otherwise go to the Engine
API on the local socket (engine/api.py) go through python-on-whales, as on a remote engine.

Build from a Dockerfile, set up with a host-side health check, a container that calls a mock by
name, logs, status, clean; and the shop example end to end on Podman. Podman cannot pull here:
the base images come from the local Docker (`scripts/ensure-podman` loads them; so does the
fixture). With `--require-docker` (CI) a missing Podman fails these tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import aclosing
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest
from support.docker import force_clean, labelled

from preflight_sdk import PreflightError, Project
from preflight_sdk.engine.base import ContainerSpec
from preflight_sdk.engine.docker import DockerEngine
from preflight_sdk.engine.podman import podman_engine

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
BASE_IMAGES = ("preflight-base/busybox", "preflight-base/python")

CALLER = """
project: {name: engines}
services:
  web:
    build: {image: "preflight-test/engines-web:latest", dockerfile: Dockerfile, context: .}
    container:
      ports: ["0:8000"]
      environment: {PAYMENTS_URL: "{{mocks.payments.url}}"}
      healthcheck: {path: /health}
mocks:
  payments:
    port: 0
    routes:
      - {method: POST, path: /charges, response: {status: 201, body: {id: "ch_{{counter}}"}}}
"""
DOCKERFILE = """
FROM preflight-base/python
COPY serve.py /app/serve.py
CMD ["python3", "-u", "/app/serve.py"]
"""
# Calls the mock once at start (by its name, as every service does), logs the answer, then serves.
SERVE = """
import http.server, json, os, urllib.request
request = urllib.request.Request(os.environ["PAYMENTS_URL"] + "/charges", method="POST",
                                 data=b'{"amount": 7}', headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as reply:
    print("mock answered", reply.status, json.loads(reply.read())["id"], flush=True)
# Podman's name for the host (in /etc/hosts; Docker has none by default): the mocks listen there too.
if "host.containers.internal" in open("/etc/hosts").read():
    port = os.environ["PAYMENTS_URL"].rsplit(":", 1)[1]
    request.full_url = f"http://host.containers.internal:{port}/charges"
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            print("host.containers.internal answered", reply.status, flush=True)
    except OSError as exc:
        print("host.containers.internal failed", type(exc).__name__, flush=True)

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")

http.server.HTTPServer(("", 8000), Health).serve_forever()
"""
HEALTH = """
project: {{name: engines-{name}}}
services:
  box:
    build: {{image: preflight-base/busybox}}
    container:
      command: ["sh", "-c", "{command}"]
      dockerHealthcheck: {{test: ["CMD-SHELL", "test -f /tmp/ready"], interval: 300ms, retries: 12}}
"""


def _podman_problem() -> str | None:
    if shutil.which("podman") is None:
        return "podman is not installed"
    done = subprocess.run(["podman", "info"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "podman info failed"
    for image in BASE_IMAGES:
        # Podman cannot pull here: copy the base image from the local Docker when it lacks it.
        if subprocess.run(["podman", "image", "exists", image]).returncode != 0:
            save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
            subprocess.run(["podman", "load", "-q"], stdin=save.stdout, capture_output=True, check=False)
            save.wait()
            if subprocess.run(["podman", "image", "exists", image]).returncode != 0:
                return f"{image} is not in Podman and could not be loaded from Docker"
    return None


def _require_podman(config: pytest.Config) -> None:
    problem = _podman_problem()
    if problem is not None:
        message = f"{problem}; run scripts/ensure-podman"
        if config.getoption("--require-docker"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.fixture(params=["docker", "docker-cli", "podman"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The engine's command (`docker` or `podman`), chosen for the test through `PREFLIGHT_ENGINE`."""
    name = str(request.param)
    if name == "podman":
        _require_podman(request.config)
    if name == "docker-cli":
        monkeypatch.setenv("PREFLIGHT_DOCKER_API", "0")
        name = "docker"
    monkeypatch.setenv("PREFLIGHT_ENGINE", name)
    return name


@pytest.fixture
def checkout(tmp_path: Path, engine: str) -> Iterator[Callable[..., Path]]:
    made: list[Path] = []

    def make(files: dict[str, str], name: str = "p") -> Path:
        root = tmp_path / name
        root.mkdir()
        for name, text in files.items():
            (root / name).write_text(text)
        made.append(root)
        return root

    yield make
    for root in made:
        force_clean(root, engine)


async def test_build_setup_health_mock_logs_status_and_clean(
    engine: str, checkout: Callable[..., Path]
) -> None:
    root = checkout({"e2e.yaml": CALLER, "Dockerfile": DOCKERFILE, "serve.py": SERVE})
    async with Project.open(root) as project:
        built = await project.build()
        assert [s.status for s in built.services] == ["success"]
        setup = await project.setup()
        [web] = setup.services
        assert web.status == "healthy" and web.readiness.probe == "http"
        with urllib.request.urlopen(f"{web.url}/health", timeout=5) as reply:
            assert reply.read() == b"ok"
        # The container reached the host's mock by its name.
        logs = [line.text for line in (await project.logs("web")).lines]
        assert "mock answered 201 ch_1" in logs
        journal = await project.mock_requests("payments")
        calls = 2 if engine == "podman" else 1
        assert [(r.method, r.path, r.status, r.body) for r in journal.mocks[0].requests] == [
            ("POST", "/charges", 201, {"amount": 7})
        ] * calls
        if engine == "podman":
            assert "host.containers.internal answered 201" in logs
        status = await project.status()
        assert status.state == "running" and [s.health for s in status.services] == ["healthy"]
        assert all(p.accessible for s in status.services for p in s.ports)
        assert [len(found) for found in labelled(root, engine)] == [1, 1]
        cleaned = await project.clean()
        assert cleaned is not None
        assert labelled(root, engine) == ([], [])


async def test_an_edited_file_rebuilds_and_replaces_only_its_container(
    engine: str, checkout: Callable[..., Path]
) -> None:
    root = checkout({"e2e.yaml": CALLER, "Dockerfile": DOCKERFILE, "serve.py": SERVE})
    async with Project.open(root) as project:
        await project.build()
        [before] = (await project.setup()).services
        again = await project.setup()
        assert [(s.action, s.reason) for s in again.services] == [("reused", "unchanged")]
        (root / "serve.py").write_text(SERVE.replace(b'b"ok"'.decode(), 'b"ok, edited"'))
        edited = await project.setup()
        assert [(s.action, s.reason) for s in edited.services] == [("rebuilt", "serve.py changed")]
        with urllib.request.urlopen(f"{edited.services[0].url}/health", timeout=5) as reply:
            assert reply.read() == b"ok, edited"
        # The old container went (renamed out of the way, removed while its successor started).
        containers, _ = labelled(root, engine)
        assert len(containers) == 1, containers
        assert edited.services[0].container_id.startswith(containers[0])
        assert not before.container_id.startswith(containers[0])
        assert [(s.action, s.reason) for s in (await project.setup()).services] == [("reused", "unchanged")]


async def test_a_health_check_inside_the_container_decides_readiness(
    engine: str, checkout: Callable[..., Path]
) -> None:
    # Healthy only once /tmp/ready exists (after 2 s; `run` may return a second into that on a busy
    # machine): on Podman without systemd, preflight runs the check itself; a check that never
    # passes ends as unhealthy, not as a hang.
    ready = checkout({"e2e.yaml": HEALTH.format(name="ready", command="sleep 2; touch /tmp/ready; sleep 60")})
    never = checkout({"e2e.yaml": HEALTH.format(name="never", command="sleep 60")}, name="never")
    async with Project.open(ready) as project:
        result = await project.setup(timeout="30s")
        [box] = result.services
        assert box.status == "healthy" and box.readiness.probe == "docker"
        assert box.readiness.time_to_ready is not None and box.readiness.time_to_ready >= 800
    with pytest.raises(PreflightError) as caught:
        await Project.open(never).setup(timeout="30s")
    assert caught.value.code == "HEALTH_CHECK_TIMEOUT"
    assert labelled(ready, engine) == labelled(never, engine) == ([], [])


async def test_a_service_that_exits_at_start_fails_at_once_with_its_log(
    engine: str, checkout: Callable[..., Path]
) -> None:
    root = checkout(
        {
            "e2e.yaml": """
project: {name: engines-exit}
services:
  api:
    build: {image: preflight-base/busybox}
    container:
      ports: ["0:8080"]
      command: ["sh", "-c", "echo 'fatal: DATABASE_URL is not set' >&2; exit 3"]
      healthcheck: {path: /health}
"""
        }
    )
    began = time.monotonic()
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).setup(timeout="60s")
    assert time.monotonic() - began < 10, "an exit must not wait for the 60 s deadline"
    assert caught.value.code == "CONTAINER_EXITED"
    assert caught.value.details is not None and caught.value.details["exitCode"] == 3
    assert "stderr: fatal: DATABASE_URL is not set" in caught.value.details["logTail"]
    assert labelled(root, engine) == ([], [])


async def test_a_host_port_already_taken_is_a_port_conflict(
    engine: str, checkout: Callable[..., Path]
) -> None:
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        port = holder.getsockname()[1]
        root = checkout(
            {
                "e2e.yaml": f"""
project: {{name: engines-port}}
services:
  web:
    build: {{image: preflight-base/busybox}}
    container:
      ports: ["{port}:8080"]
      command: ["sleep", "60"]
"""
            }
        )
        with pytest.raises(PreflightError) as caught:
            await Project.open(root).setup(timeout="30s")
    assert caught.value.code == "PORT_CONFLICT"
    assert str(port) in caught.value.message
    assert labelled(root, engine) == ([], [])


async def test_the_shop_example_passes_on_podman(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _require_podman(request.config)
    monkeypatch.setenv("PREFLIGHT_ENGINE", "podman")
    shop = tmp_path / "shop"
    shutil.copytree(EXAMPLES / "shop", shop)
    try:
        async with Project.open(shop) as project:
            await project.build()
            await project.setup()
            result = await project.run()
            await project.clean()
    finally:
        force_clean(shop, "podman")
    assert [(c.id, c.failure.summary if c.failure else "") for c in result.failures()] == []
    assert result.ok and result.totals.passed == result.totals.total == 11
    assert labelled(shop, "podman") == ([], [])


async def test_mocks_without_a_host_address_are_unsupported_on_podman_and_leave_nothing(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from preflight_sdk.engine import docker, podman

    _require_podman(request.config)
    monkeypatch.setenv("PREFLIGHT_ENGINE", "podman")
    # A host with loopback only: containers would have no address to reach the mocks at.
    monkeypatch.setattr(podman, "host_address", lambda: None)
    monkeypatch.setattr(docker, "_INFO_CACHE", {})  # the engine's facts, asked once per process
    root = tmp_path / "p"
    root.mkdir()
    (root / "e2e.yaml").write_text(CALLER)
    (root / "Dockerfile").write_text(DOCKERFILE)
    (root / "serve.py").write_text(SERVE)
    try:
        async with Project.open(root) as project:
            await project.build()
            with pytest.raises(PreflightError) as caught:
                await project.setup()
            left = labelled(root, "podman")
    finally:
        force_clean(root, "podman")
    assert caught.value.code == "UNSUPPORTED_ON_ENGINE"
    assert caught.value.details == {"engine": "podman", "feature": "mocks reached from containers"}
    assert caught.value.hint
    assert left == ([], [])


async def test_exit_watching_sees_the_labelled_container_that_dies_and_no_other(engine: str) -> None:
    docker = podman_engine() if engine == "podman" else DockerEngine()
    name = f"pf-exits-{os.getpid()}-{time.monotonic_ns() % 100_000}"
    labels = {"preflight.test": name}
    began = datetime.now(UTC)
    await docker.create_network(name, labels)
    started: list[str] = []

    def box(suffix: str, marks: dict[str, str], script: str) -> ContainerSpec:
        command = ["sh", "-c", script]
        return ContainerSpec(
            name=f"{name}-{suffix}", image=BASE_IMAGES[0], network=name, labels=marks, command=command
        )

    try:
        with anyio.fail_after(60):
            # Another container dies first: a watcher that ignored the labels would name it.
            started.append(await docker.run(box("other", {"preflight.test": "other"}, "exit 4")))
            started.append(await docker.run(box("mine", labels, "sleep 1; exit 3")))
            async with aclosing(docker.watch_exits(labels, since=began)) as deaths:
                assert await deaths.__anext__() == started[1]
            assert await docker.wait_exit(started[1]) == 3
    finally:
        await docker.remove_containers(started, force=True)
        await docker.remove_networks([name])
