"""A project on another Docker engine: the second daemon, reached at tcp://<this machine>:<port>
(and at ssh://root@<this machine>:<port> through an OpenSSH server whose sessions talk to it).

Its containers sit on a bridge of its own and reach this machine at its eth0 address, so the
mocks (served in this process) must listen there; its published ports are reached at that
address too, never at 127.0.0.1. The image is built on that engine, never on the main one.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.engines import SecondEngine
from support.sshd import SshServer, keygen, ssh_client_bin

from preflight_sdk import PreflightError, Project

# Minutes of environments set up and cleaned, case by case: these run with the slow cases, two
# files at a time (each case owns its project, so they share nothing).
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DOCKERFILE = """\
FROM preflight-base/busybox
COPY www /www
RUN chmod 755 /www/cgi-bin/charge
CMD ["sh", "-c", "echo \\"api up, payments at $PAY_URL\\"; echo \\"$PAY_URL\\" > /tmp/pay; exec httpd -f -p 8080 -h /www"]
"""
# A CGI script of busybox httpd: the service calls the mock and answers with what it said.
CHARGE = """\
#!/bin/sh
printf 'Content-Type: application/json\r\n\r\n'
wget -q -O - "$(cat /tmp/pay)/v1/charges?order=o-7"
"""
CONFIG = """\
project: {{name: remote}}
services:
  api:
    build: {{image: "{image}", dockerfile: api/Dockerfile, context: api}}
    container:
      ports: ["0:8080"]
      environment: {{PAY_URL: "{{{{mocks.pay.url}}}}"}}
      healthcheck: {{path: /health}}
mocks:
  pay:
    port: 0
    routes:
      - method: GET
        path: /v1/charges
        response: {{status: 200, body: {{id: ch_1, status: captured}}}}
tests:
  suites:
    - {{id: charge, name: Charge through the mock, file: tests/charge.yaml}}
"""
SUITE = """\
name: Charge through the mock
cases:
  - name: the api reaches the mock from the remote engine
    request: {method: GET, path: /cgi-bin/charge, service: api}
    expect:
      status: 200
      body: {id: ch_1, status: captured}
      mock: {name: pay, method: GET, path: /v1/charges, count: 1}
"""
PLAIN = """\
project: {name: plain}
services:
  web:
    build: {image: preflight-base/busybox}
    container:
      command: [sh, -c, "mkdir -p /w && echo ok > /w/health && exec httpd -f -p 80 -h /w"]
      ports: ["0:80"]
      healthcheck: {path: /health}
"""


def _write_project(root: Path, image: str) -> Path:
    files = {
        "e2e.yaml": CONFIG.format(image=image),
        "api/Dockerfile": DOCKERFILE,
        "api/www/health": "ok\n",
        "api/www/cgi-bin/charge": CHARGE,
        "tests/charge.yaml": SUITE,
    }
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def _docker(env: dict[str, str] | None, *args: str) -> subprocess.CompletedProcess[str]:
    """`docker ARGS` on the daemon of `env` (None: the main daemon, whatever the test set)."""
    if env is None:
        env = {
            k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG")
        }
    return subprocess.run(["docker", *args], env=env, capture_output=True, text=True, timeout=60)


def _has_image(env: dict[str, str] | None, image: str) -> bool:
    return _docker(env, "image", "inspect", image).returncode == 0


def _labelled(env: dict[str, str] | None, root: Path, *, images: bool = True) -> list[str]:
    """Every container, network (and image) carrying the checkout's root label on one daemon."""
    label = f"label=preflight.root={root.resolve()}"
    found: list[str] = []
    kinds = [["ps", "-aq"], ["network", "ls", "-q"], *([["image", "ls", "-q"]] if images else [])]
    for kind in kinds:
        found += _docker(env, *kind, "--filter", label).stdout.split()
    return found


@pytest.fixture
def remote_root(tmp_path: Path, second_engine: SecondEngine) -> Iterator[Callable[[str], Path]]:
    """A fresh project directory; whatever it left on either daemon is removed after the test."""
    made: list[Path] = []

    def make(name: str) -> Path:
        root = tmp_path / name
        root.mkdir()
        made.append(root)
        return root

    yield make
    for root in made:
        for env in (None, second_engine.docker_env()):
            label = f"label=preflight.root={root.resolve()}"
            ids = _docker(env, "ps", "-aq", "--filter", label).stdout.split()
            if ids:
                _docker(env, "rm", "-f", *ids)
            nets = _docker(env, "network", "ls", "-q", "--filter", label).stdout.split()
            if nets:
                _docker(env, "network", "rm", *nets)


@pytest.mark.parametrize("reached_over", ["tcp", "ssh"])
async def test_a_project_runs_on_a_remote_engine_with_mocks_reached_back_from_its_containers(
    reached_over: str,
    second_engine: SecondEngine,
    remote_root: Callable[[str], Path],
    request: pytest.FixtureRequest,
) -> None:
    image = f"pf-test/remote-api:{secrets.token_hex(4)}"
    root = _write_project(remote_root("remote"), image)
    second = second_engine.docker_env()
    address = second_engine.address
    if reached_over == "tcp":
        project = Project.open(root, engine_host=second_engine.tcp_host)
    else:
        # Named in e2e.yaml; the docker CLI's `ssh` (first in PATH) reaches sshd, whose sessions
        # talk to the second daemon.
        ssh: SshServer = request.getfixturevalue("ssh_client")
        with (root / "e2e.yaml").open("a") as config:
            config.write(f'engine: {{host: "{ssh.host()}"}}\n')
        project = Project.open(root)
    try:
        with anyio.fail_after(240):
            await project.build()
            # Built on the remote engine (the build context was sent to it), not on this machine's.
            assert _has_image(second, image)
            assert not _has_image(None, image)

            setup = await project.setup()
            [api] = setup.services
            assert api.status == "healthy"
            assert api.url == f"http://{address}:{api.ports[0].host}"
            assert api.readiness.target.startswith(f"http://{address}:")

            run = await project.run(keep=True)
            assert run.status == "passed", run.summary
            assert run.totals.passed == 1

            status = await project.status()
            [web] = status.services
            assert web.url == f"http://{address}:{api.ports[0].host}"
            assert web.health == "healthy" and all(p.accessible for p in web.ports)

            logs = await project.logs("api")
            assert any("api up, payments at http://pay:" in line.text for line in logs.lines)

            # A later process without --engine-host finds the environment where it runs.
            later = await anyio.to_thread.run_sync(lambda: _cli("--json", "status", "-C", str(root)))
            shown = json.loads(later.stdout)["data"]["services"][0]
            assert (shown["status"], shown["url"]) == ("running", web.url), later.stdout[-2000:]
            assert _labelled(second, root), "the project's resources are on the remote daemon"
            assert _labelled(None, root) == [], "and nothing of it on the main one"

            await project.clean(images=True)
        assert _labelled(second, root) == []
        assert _labelled(None, root) == []
        assert not _has_image(second, image)
    finally:
        await project.clean(images=True)


def _cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "preflight_sdk", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or dict(os.environ),
    )


async def test_the_cli_runs_on_the_engine_named_by_engine_host(
    second_engine: SecondEngine, remote_root: Callable[[str], Path]
) -> None:
    image = f"pf-test/remote-cli:{secrets.token_hex(4)}"
    root = _write_project(remote_root("cli"), image)
    done = await anyio.to_thread.run_sync(
        lambda: _cli("--engine-host", second_engine.tcp_host, "--json", "run", "-C", str(root))
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    data = report.get("data", report)
    assert data["status"] == "passed"
    assert _has_image(second_engine.docker_env(), image)
    assert not _has_image(None, image)
    # `run` cleans what it set up: no container or network on either daemon.
    assert _labelled(second_engine.docker_env(), root, images=False) == []
    assert _labelled(None, root) == []
    _docker(second_engine.docker_env(), "rmi", image)


async def _plain_up(
    project: Project, second_engine: SecondEngine, *, forget: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set up PLAIN: on the second daemon, its URL at that daemon's address, healthy; then, with the
    variable `forget` unset, a new Project (another process, say) sees it there and cleans it."""
    root = Path(project.path)
    with anyio.fail_after(120):
        setup = await project.setup()
        [web] = setup.services
        assert web.url == f"http://{second_engine.address}:{web.ports[0].host}"
        assert _labelled(second_engine.docker_env(), root, images=False)
        assert _labelled(None, root) == []
        status = await project.status()
        assert status.services[0].health == "healthy"
        if forget:
            monkeypatch.delenv(forget)
        later = Project.open(root)
        assert (await later.status()).services[0].url == web.url
        await later.clean()
    assert _labelled(second_engine.docker_env(), root) == []


async def test_docker_host_from_the_environment_is_honoured(
    second_engine: SecondEngine, remote_root: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = remote_root("env")
    (root / "e2e.yaml").write_text(PLAIN)
    monkeypatch.setenv("DOCKER_HOST", second_engine.tcp_host)
    project = Project.open(root)
    try:
        await _plain_up(project, second_engine, forget="DOCKER_HOST", monkeypatch=monkeypatch)
    finally:
        await project.clean()


@pytest.mark.parametrize("named_in", ["e2e.yaml", "DOCKER_CONTEXT"])
async def test_a_docker_context_names_the_remote_engine(
    named_in: str,
    second_engine: SecondEngine,
    remote_root: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config_dir = tmp_path / "docker-config"
    config_dir.mkdir()
    env = {**os.environ, "DOCKER_CONFIG": str(config_dir)}
    env.pop("DOCKER_HOST", None)
    made = _docker(env, "context", "create", "pf-second", "--docker", f"host={second_engine.tcp_host}")
    assert made.returncode == 0, made.stderr
    monkeypatch.setenv("DOCKER_CONFIG", str(config_dir))
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    root = remote_root("ctx")
    if named_in == "e2e.yaml":
        (root / "e2e.yaml").write_text(PLAIN + "engine: {context: pf-second}\n")
    else:
        (root / "e2e.yaml").write_text(PLAIN)
        monkeypatch.setenv("DOCKER_CONTEXT", "pf-second")
    project = Project.open(root)
    try:
        forget = "DOCKER_CONTEXT" if named_in == "DOCKER_CONTEXT" else None
        await _plain_up(project, second_engine, forget=forget, monkeypatch=monkeypatch)
    finally:
        await project.clean()
        _docker(env, "context", "rm", "-f", "pf-second")


@pytest.mark.parametrize("launcher", ["preflight-mcp", "preflight mcp"])
async def test_the_mcp_launcher_serves_the_engine_named_by_engine_host(
    launcher: str, second_engine: SecondEngine, remote_root: Callable[[str], Path], tmp_path: Path
) -> None:
    root = remote_root("mcp")
    (root / "e2e.yaml").write_text(PLAIN)
    bin_dir = Path(sys.executable).parent
    engine = ["--engine-host", second_engine.tcp_host]
    argv = (
        [str(bin_dir / "preflight-mcp"), *engine, "--project", str(root)]
        if launcher == "preflight-mcp"
        else [str(bin_dir / "preflight"), *engine, "mcp", "--project", str(root)]
    )
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ), cwd=tmp_path)
    with anyio.fail_after(120), (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:  # type: ignore[arg-type]
            reply = await client.call_tool("preflight_setup", {"timeout": "60s"})
            envelope = reply.structured_content or {}
            assert envelope.get("success"), envelope
            [web] = envelope["data"]["services"]
            assert web["url"].startswith(f"http://{second_engine.address}:")
            assert _labelled(second_engine.docker_env(), root, images=False)
            cleaned = await client.call_tool("preflight_clean", {})
            assert (cleaned.structured_content or {}).get("success"), cleaned.structured_content
    assert _labelled(second_engine.docker_env(), root) == []
    assert _labelled(None, root) == []


async def _setup_fails_fast(root: Path, host: str) -> PreflightError:
    """The error of PLAIN's setup on `host`, which must come within 15 s."""
    (root / "e2e.yaml").write_text(PLAIN)
    project = Project.open(root, engine_host=host)
    started = time.monotonic()
    with anyio.fail_after(30), pytest.raises(PreflightError) as caught:
        await project.setup()
    assert time.monotonic() - started < 15
    return caught.value


@pytest.mark.parametrize("host", ["tcp://127.0.0.1:1", "ssh://nobody@127.0.0.1:1"])
async def test_an_unreachable_engine_fails_fast_with_a_hint_naming_it(
    host: str, remote_root: Callable[[str], Path]
) -> None:
    error = await _setup_fails_fast(remote_root("down"), host)
    assert error.code == "DOCKER_ERROR" and error.retryable
    assert host in error.message and f"docker --host {host} info" in (error.hint or "")
    assert (error.details or {}).get("engine") == host


@pytest.fixture
def ssh_client(ssh_engine: SshServer, monkeypatch: pytest.MonkeyPatch) -> SshServer:
    """`ssh` on PATH (for the docker CLI this process and its children run) reaches `ssh_engine`."""
    monkeypatch.setenv("PATH", f"{ssh_engine.client_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    return ssh_engine


async def test_an_ssh_engine_that_refuses_the_key_fails_fast_with_a_hint(
    ssh_engine: SshServer, remote_root: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client whose only key the server does not know.
    bin_dir = ssh_client_bin(tmp_path, keygen(tmp_path / "stranger"), multiplex=False)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    host = ssh_engine.host()
    error = await _setup_fails_fast(remote_root("refused"), host)
    assert error.code == "DOCKER_ERROR" and not error.retryable
    assert host in error.message and "Permission denied (publickey)" in error.message
    assert f"ssh -p {ssh_engine.port} root@{ssh_engine.address} docker version" in (error.hint or "")
