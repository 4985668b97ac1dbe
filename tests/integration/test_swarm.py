"""`engine: {swarm: true}` on a single-node swarm: the second test daemon, a local registry.

The swarm is initialised on the second dockerd (never on the main one) and left at the end; the
registry is Debian's `docker-registry`, run by pid with a temporary config and storage on a free
127.0.0.1 port. With `--require-docker` (CI) a swarm or registry that cannot start fails these
tests instead of skipping them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from support.engines import SecondEngine

from preflight_sdk import PreflightError, Project

pytestmark = pytest.mark.anyio

IMAGE = "preflight-test/swarm-web:latest"
PROJECT = """
project: {{name: swarm}}
engine: {{swarm: true, host: "{host}"}}
{registry}
services:
  seed:
    kind: job
    build: {{image: preflight-base/busybox}}
    container: {{command: ["sh", "-c", "echo seeded"]}}
  web:
    build: {{image: "{image}", dockerfile: Dockerfile, context: .}}
    dependsOn: [seed]
    container:
      ports: ["0:8000"]
      environment: {{PAYMENTS_URL: "{{{{mocks.payments.url}}}}"}}
      healthcheck: {{path: /health}}
mocks:
  payments:
    port: 0
    routes:
      - {{method: POST, path: /charges, response: {{status: 201, body: {{id: "ch_{{{{counter}}}}"}}}}}}
tests:
  suites:
    - {{id: pay, name: Pay, file: pay.yaml}}
"""
DOCKERFILE = """
FROM preflight-base/python
COPY serve.py /app/serve.py
CMD ["python3", "-u", "/app/serve.py"]
"""
# Answers /health; on POST /pay charges the payments mock (reached by its name) and relays its answer.
SERVE = """
import http.server, os, urllib.request

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")

    def do_POST(self):
        request = urllib.request.Request(os.environ["PAYMENTS_URL"] + "/charges", method="POST",
                                         data=b'{"amount": 7}', headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            status, body = reply.status, reply.read()
        print("mock answered", status, body.decode(), flush=True)
        self.send_response(status); self.send_header("Content-Type", "application/json")
        self.end_headers(); self.wfile.write(body)

print("web listening on 8000", flush=True)
http.server.HTTPServer(("", 8000), Handler).serve_forever()
"""
SUITE = """
name: Pay
cases:
  - name: the service is healthy
    request: {method: GET, path: /health, service: web}
    expect: {status: 200}
  - name: a payment is charged by the provider
    request: {method: POST, path: /pay, service: web}
    expect:
      status: 201
      body: {id: ch_1}
      mock: {name: payments, method: POST, path: /charges, count: 1}
"""
LOCK = Path(tempfile.gettempdir()) / "preflight-swarm-tests.lock"
TURN_WAIT = 300.0  # seconds: another session's swarm tests take about a minute
LABELS = (
    "preflight.managed",
    "preflight.project",
    "preflight.session",
    "preflight.root",
    "preflight.service",
)


def _missing(config: pytest.Config, message: str) -> None:
    if config.getoption("--require-docker"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def swarm(request: pytest.FixtureRequest, second_engine: SecondEngine) -> Iterator[SecondEngine]:
    """The second daemon as a single-node swarm manager; it leaves the swarm afterwards.

    A swarm holds ports of the whole machine (gossip on 7946, VXLAN on 4789) and Docker names
    its gateway bridge `docker_gwbridge`: test sessions on one machine take turns (a file lock),
    and the bridge is made first with an interface name of this session's.
    """
    with LOCK.open("w") as lock, _taking_turns(request.config, lock):
        second_engine.docker(
            "network", "create", "--driver", "bridge",
            "--opt", f"com.docker.network.bridge.name=pfgw{os.getpid() % 100000}",
            "--opt", "com.docker.network.bridge.enable_icc=false",
            "--opt", "com.docker.network.bridge.enable_ip_masquerade=true",
            "docker_gwbridge", check=False,
        )  # fmt: skip
        port = _free_port()
        init = second_engine.docker(
            "swarm",
            "init",
            "--listen-addr",
            f"127.0.0.1:{port}",
            "--advertise-addr",
            f"127.0.0.1:{port}",
            check=False,
        )
        try:
            if init.returncode != 0 and "already part of a swarm" not in init.stderr:
                _missing(
                    request.config, f"docker swarm init failed on the second daemon: {init.stderr.strip()}"
                )
            yield second_engine
        finally:
            second_engine.docker("swarm", "leave", "--force", check=False)
            # Made for the swarm's tasks: not the daemon's once it left.
            second_engine.docker("network", "rm", "docker_gwbridge", check=False)


@contextlib.contextmanager
def _taking_turns(config: pytest.Config, lock: IO[str]) -> Iterator[None]:
    deadline = time.monotonic() + TURN_WAIT
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                _missing(config, f"another test session held {LOCK} for {TURN_WAIT:.0f}s")
            time.sleep(0.5)
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def registry(request: pytest.FixtureRequest) -> Iterator[str]:
    """Debian's docker-registry on a free 127.0.0.1 port, temp config and storage; stopped by pid."""
    binary = shutil.which("docker-registry")
    if binary is None:
        _missing(request.config, "docker-registry is not installed; run scripts/ensure-registry")
    root = Path(tempfile.mkdtemp(prefix="pf-registry-"))
    port = _free_port()
    (root / "config.yml").write_text(
        "version: 0.1\nlog: {level: warn}\n"
        f"storage: {{filesystem: {{rootdirectory: {root / 'data'}}}, delete: {{enabled: true}}}}\n"
        f"http: {{addr: '127.0.0.1:{port}'}}\n"
    )
    log = (root / "registry.log").open("wb")
    process = subprocess.Popen([str(binary), "serve", str(root / "config.yml")], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = (root / "registry.log").read_text(errors="replace")[-1000:]
                    _missing(request.config, f"docker-registry did not start: {tail}")
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def _on(engine: SecondEngine, *args: str) -> list[str]:
    return engine.docker(*args).stdout.split()


def _inspect(engine: SecondEngine, kind: str, refs: list[str]) -> list[dict[str, Any]]:
    return list(json.loads(engine.docker(kind, "inspect", *refs).stdout)) if refs else []


@pytest.fixture
def checkout(tmp_path: Path, swarm: SecondEngine) -> Iterator[Callable[..., Path]]:
    roots: list[Path] = []

    def make(registry: str | None, host: str = swarm.unix_host) -> Path:
        root = tmp_path / f"p{len(roots)}"
        root.mkdir()
        text = PROJECT.format(host=host, image=IMAGE, registry=f"registry: {registry}" if registry else "")
        for name, content in {
            "e2e.yaml": text,
            "Dockerfile": DOCKERFILE,
            "serve.py": SERVE,
            "pay.yaml": SUITE,
        }.items():
            (root / name).write_text(content)
        roots.append(root)
        return root

    yield make
    for root in roots:  # whatever a failed test left
        label = f"label=preflight.root={root.resolve()}"
        for kind in ("service", "network"):
            found = _on(swarm, kind, "ls", "-q", "--filter", label)
            if found:
                swarm.docker(kind, "rm", *found, check=False)


@pytest.mark.parametrize("socket_kind", ["unix", "tcp"])
async def test_an_environment_runs_as_swarm_services_and_cleans_up(
    swarm: SecondEngine, registry: str, checkout: Callable[..., Path], socket_kind: str
) -> None:
    # Through the manager's local socket, and through its TCP address as a manager elsewhere is
    # reached: ports at that address, the mocks reached back at this machine's address.
    root = checkout(registry, swarm.unix_host if socket_kind == "unix" else swarm.tcp_host)
    address = "127.0.0.1" if socket_kind == "unix" else swarm.address
    label = f"label=preflight.root={root.resolve()}"
    async with Project.open(root) as project:
        built = await project.build()
        assert [s.status for s in built.services] == ["success", "success"]
        setup = await project.setup(timeout="90s")
        seed, web = setup.services
        assert (seed.name, seed.status, web.name, web.status) == ("seed", "completed", "web", "healthy")
        assert web.url is not None and web.url.startswith(f"http://{address}:")

        # A service each, with our labels on it and on its task's container, images from the registry.
        listed = _on(swarm, "service", "ls", "-q", "--filter", label)
        services = {s["Spec"]["Labels"]["preflight.service"]: s for s in _inspect(swarm, "service", listed)}
        assert sorted(services) == ["seed", "web"] and services["web"]["ID"] == web.container_id
        assert all(key in s["Spec"]["Labels"] for s in services.values() for key in LABELS)
        images = {name: s["Spec"]["TaskTemplate"]["ContainerSpec"]["Image"] for name, s in services.items()}
        assert images["web"].startswith(f"{registry}/{IMAGE}@sha256:"), images
        assert images["seed"].startswith(f"{registry}/preflight-base/busybox:latest@sha256:"), images
        with urllib.request.urlopen(f"http://{registry}/v2/_catalog", timeout=5) as reply:
            repositories = json.loads(reply.read())["repositories"]
        assert {IMAGE.split(":")[0], "preflight-base/busybox"} <= set(repositories)
        assert len(_on(swarm, "ps", "-q", "--filter", label)) == 1  # web runs; the job's task completed
        [network] = _inspect(swarm, "network", _on(swarm, "network", "ls", "-q", "--filter", label))
        assert (network["Driver"], network["Attachable"], network["Scope"]) == ("overlay", True, "swarm")

        # The published port on the manager answers; the suite's call reaches the mock from the task.
        with urllib.request.urlopen(f"{web.url}/health", timeout=5) as reply:
            assert reply.read() == b"ok"
        result = await project.run()
        assert [(c.id, c.failure.summary if c.failure else "") for c in result.failures()] == []
        assert result.ok and result.totals.passed == result.totals.total == 2

        status = await project.status()
        assert status.state == "running"
        assert [(s.name, s.status, s.health, s.exit_code) for s in status.services] == [
            ("seed", "exited", "none", 0),
            ("web", "running", "healthy", None),
        ]
        assert status.network is not None and status.network.exists
        assert all(p.accessible for s in status.services for p in s.ports)
        logs = [line.text for line in (await project.logs("web")).lines]
        assert "web listening on 8000" in logs and 'mock answered 201 {"id":"ch_1"}' in logs

        cleaned = await project.clean(images=True)
        actions = dict(sorted((c.name.rsplit("-", 1)[1], c.action) for c in cleaned.containers))
        # Clean lists the services while it removes the ones it knows: a listing that comes after
        # web's task was killed sees it stopped ("removed"), as a slow `docker ps` would.
        assert actions["seed"] == "removed" and actions["web"] in ("force_removed", "removed")
        assert sorted(actions) == ["seed", "web"]
        assert cleaned.network is not None and cleaned.network.action == "removed"
        # The built image goes with the name it was pushed under (the registry keeps its copy):
        # the legacy builder's image has no label, so clean names it by the tag this checkout built.
        assert {i.action for i in cleaned.images} == {"removed"}, cleaned.images
        assert IMAGE in [i.name for i in cleaned.images]
    assert _on(swarm, "service", "ls", "-q", "--filter", label) == []
    assert _on(swarm, "ps", "-aq", "--filter", label) == []
    assert _on(swarm, "network", "ls", "-q", "--filter", label) == []
    assert _on(swarm, "image", "ls", "-q", IMAGE.split(":")[0]) == []
    assert _on(swarm, "image", "ls", "-q", f"{registry}/{IMAGE.split(':')[0]}") == []


async def test_a_service_that_exits_at_start_fails_at_once_with_its_log(
    swarm: SecondEngine, registry: str, tmp_path: Path
) -> None:
    (tmp_path / "e2e.yaml").write_text(
        f"project: {{name: swarm-exit}}\nengine: {{swarm: true, host: '{swarm.unix_host}'}}\nregistry: {registry}\n"
        "services:\n  api:\n    build: {image: preflight-base/busybox}\n    container:\n"
        "      ports: ['0:8080']\n      healthcheck: {path: /health}\n"
        "      command: ['sh', '-c', \"echo 'fatal: DATABASE_URL is not set' >&2; exit 3\"]\n"
    )
    began = time.monotonic()
    with pytest.raises(PreflightError) as caught:
        await Project.open(tmp_path).setup(timeout="60s")
    assert time.monotonic() - began < 15, "an exit must not wait for the 60 s deadline"
    assert caught.value.code == "CONTAINER_EXITED"
    assert caught.value.details is not None and caught.value.details["exitCode"] == 3
    assert "stderr: fatal: DATABASE_URL is not set" in caught.value.details["logTail"]
    label = f"label=preflight.root={tmp_path.resolve()}"
    assert _on(swarm, "service", "ls", "-q", "--filter", label) == []
    assert _on(swarm, "network", "ls", "-q", "--filter", label) == []


async def test_a_swarm_without_a_registry_is_a_config_error(checkout: Callable[..., Path]) -> None:
    root = checkout(None)
    with pytest.raises(PreflightError) as caught:
        await Project.open(root).build()
    assert caught.value.code == "CONFIG_INVALID"
    assert caught.value.hint is not None and "registry:" in caught.value.hint


async def test_an_engine_outside_a_swarm_is_refused_with_how_to_start_one(
    tmp_path: Path, registry: str
) -> None:
    # The main daemon, which is in no swarm (and is never made part of one by the tests).
    (tmp_path / "e2e.yaml").write_text(
        f"project: {{name: no-swarm}}\nengine: {{swarm: true}}\nregistry: {registry}\n"
        "services:\n  box:\n    build: {image: preflight-base/busybox}\n    container: {command: [sleep, '30']}\n"
    )
    with pytest.raises(PreflightError) as caught:
        await Project.open(tmp_path).setup(timeout="30s")
    assert caught.value.code == "SWARM_NOT_ACTIVE"
    assert caught.value.hint is not None and "docker swarm init" in caught.value.hint
    assert (
        subprocess.run(
            ["docker", "ps", "-aq", "--filter", f"label=preflight.root={tmp_path.resolve()}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        == []
    )


async def test_a_host_port_already_taken_is_a_port_conflict(
    swarm: SecondEngine, registry: str, tmp_path: Path
) -> None:
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        port = holder.getsockname()[1]
        (tmp_path / "e2e.yaml").write_text(
            f"project: {{name: swarm-port}}\nengine: {{swarm: true, host: '{swarm.unix_host}'}}\n"
            f"registry: {registry}\nservices:\n  web:\n    build: {{image: preflight-base/busybox}}\n"
            f"    container: {{ports: ['{port}:8080'], command: [sleep, '60']}}\n"
        )
        with pytest.raises(PreflightError) as caught:
            await Project.open(tmp_path).setup(timeout="30s")
    assert caught.value.code == "PORT_CONFLICT"
    assert str(port) in caught.value.message
    label = f"label=preflight.root={tmp_path.resolve()}"
    assert _on(swarm, "service", "ls", "-q", "--filter", label) == []


async def test_a_task_the_node_rejects_fails_at_once_with_the_swarm_s_reason(
    swarm: SecondEngine, registry: str, tmp_path: Path
) -> None:
    # A bind mount whose source does not exist: `docker run -v` would create it, a swarm rejects the task.
    (tmp_path / "e2e.yaml").write_text(
        f"project: {{name: swarm-rejected}}\nengine: {{swarm: true, host: '{swarm.unix_host}'}}\n"
        f"registry: {registry}\nservices:\n  web:\n    build: {{image: preflight-base/busybox}}\n"
        f"    container: {{volumes: ['{tmp_path}/absent:/data'], command: [sleep, '60']}}\n"
    )
    began = time.monotonic()
    with pytest.raises(PreflightError) as caught:
        await Project.open(tmp_path).setup(timeout="60s")
    assert time.monotonic() - began < 15
    assert caught.value.code == "DOCKER_ERROR"
    assert "cannot start service" in caught.value.message
    assert "bind source path does not exist" in caught.value.message
    label = f"label=preflight.root={tmp_path.resolve()}"
    assert _on(swarm, "service", "ls", "-q", "--filter", label) == []


async def test_a_clean_without_force_stops_each_task_then_removes_it(
    swarm: SecondEngine, registry: str, tmp_path: Path
) -> None:
    (tmp_path / "e2e.yaml").write_text(
        f"project: {{name: swarm-stop}}\nengine: {{swarm: true, host: '{swarm.unix_host}'}}\n"
        f"registry: {registry}\nservices:\n  box:\n    build: {{image: preflight-base/busybox}}\n"
        "    container: {init: true, command: [sleep, '60']}\n"
    )
    project = Project.open(tmp_path)
    [box] = (await project.setup(timeout="60s")).services
    assert box.status == "running"
    label = f"label=preflight.root={tmp_path.resolve()}"
    assert len(_on(swarm, "ps", "-q", "--filter", label)) == 1
    cleaned = await project.clean(force=False)
    assert [c.action for c in cleaned.containers] == ["removed"]
    for kind in (("service", "ls", "-q"), ("ps", "-aq"), ("network", "ls", "-q")):
        assert _on(swarm, *kind, "--filter", label) == [], kind
