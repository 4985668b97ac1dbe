"""Compose files brought up on a real Docker daemon: other projects' test setups and a build of our own."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

from preflight_sdk import Project
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.progress import ProgressEvent

# Minutes of environments set up and cleaned, case by case: these run with the slow cases, two
# files at a time (each case owns its project, so they share nothing).
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "compose"


@pytest.fixture
def copy_fixture(tmp_path: Path) -> Iterator[object]:
    made: list[Path] = []

    def copy(name: str) -> Path:
        root = tmp_path / name
        shutil.copytree(REAL / name, root)
        made.append(root)
        return root

    yield copy
    for root in made:
        force_clean(root)


def _inspect(name: str) -> dict[str, object]:
    done = subprocess.run(["docker", "inspect", name], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)[0]  # type: ignore[no-any-return]


async def test_service_completed_successfully_runs_the_job_first(copy_fixture) -> None:  # type: ignore[no-untyped-def]
    root = copy_fixture("dc-deps-completed")
    async with Project.open(root) as project:
        result = await project.setup()
        by = {s.name: s for s in result.services}
        assert (by["oneshot"].status, by["longrunning"].status) == ("completed", "running")
        assert _inspect(by["oneshot"].container_name)["State"]["ExitCode"] == 0  # type: ignore[index]
    assert labelled(root) == ([], [])


async def test_dockers_own_health_check_gates_the_dependent(copy_fixture) -> None:  # type: ignore[no-untyped-def]
    root = copy_fixture("dc-healthy")
    async with Project.open(root) as project:
        result = await project.setup()
        by = {s.name: s for s in result.services}
        assert by["nginx"].status == "healthy"
        assert by["nginx"].readiness is not None and by["nginx"].readiness.probe == "docker"
        state = _inspect(by["nginx"].container_name)["State"]
        assert state["Health"]["Status"] == "healthy"  # type: ignore[index]
        assert by["my-service"].status == "running"


async def test_env_files_reach_the_container(copy_fixture) -> None:  # type: ignore[no-untyped-def]
    root = copy_fixture("dc-env-file")
    async with Project.open(root) as project:
        result = await project.setup()
        by = {s.name: s for s in result.services}
        env = _inspect(by["with-env-file"].container_name)["Config"]["Env"]  # type: ignore[index]
        assert "EXAMPLE=value" in env
        assert not any(
            e.startswith("EXAMPLE=") for e in _inspect(by["plain"].container_name)["Config"]["Env"]
        )  # type: ignore[index]


async def test_named_volume_init_and_read_only_root(copy_fixture) -> None:  # type: ignore[no-untyped-def]
    root = copy_fixture("tc-volume")
    try:
        async with Project.open(root) as project:
            result = await project.setup()
            (service,) = result.services
            info = _inspect(service.container_name)
            host = info["HostConfig"]
            assert (host["Init"], host["ReadonlyRootfs"]) == (True, True)  # type: ignore[index]
            mounts = [(m["Type"], m.get("Name"), m["Destination"]) for m in info["Mounts"]]  # type: ignore[union-attr]
            assert ("volume", "cf-volume_my-data", "/var/lib/example/data") in mounts
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", "cf-volume_my-data"], capture_output=True)


async def test_compose_build_with_args_target_and_a_wget_health_check(tmp_path: Path) -> None:
    root = tmp_path / "built"
    files = {
        "e2e.yaml": "project: {name: cf-build}\ncompose: compose.yaml\n",
        ".env": "GREETING=hello-from-dotenv\n",
        "compose.yaml": """
            services:
              web:
                build:
                  context: ./web
                  dockerfile: build/Dockerfile
                  target: serve
                  args: {BODY: "${GREETING}"}
                ports: ["8080"]
                healthcheck:
                  test: ["CMD", "wget", "-q", "-O", "-", "http://localhost:8080/health"]
                  interval: 1s
        """,
        "web/build/Dockerfile": """
            FROM preflight-base/busybox AS base
            ARG BODY=unset
            RUN mkdir -p /www && echo "$BODY" > /www/health
            FROM base AS serve
            CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
            FROM base AS other
            CMD ["false"]
        """,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    try:
        async with Project.open(root) as project:
            built = await project.build()
            assert [s.status for s in built.services] == ["success"]
            result = await project.setup()
            (web,) = result.services
            assert web.readiness is not None and web.readiness.probe == "http"
            assert web.url is not None
            import urllib.request

            with urllib.request.urlopen(f"{web.url}/health", timeout=5) as reply:
                assert reply.read().decode().strip() == "hello-from-dotenv"
    finally:
        force_clean(root)
        subprocess.run(["docker", "image", "rm", "-f", "cf-build-web"], capture_output=True)


# -- a compose file alone, with most honoured keys: checked on the running containers -------------


def _exec(name: str, *argv: str) -> str:
    done = subprocess.run(["docker", "exec", name, *argv], capture_output=True, text=True, check=True)
    return done.stdout


async def test_a_compose_only_project_honours_its_keys_on_the_running_containers(  # type: ignore[no-untyped-def]
    copy_fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_fixture("keys")
    monkeypatch.setenv("CF_KEYS_API_KEY", "k-123")
    assert not (root / "e2e.yaml").exists()
    try:
        async with Project.open(root) as project:
            result = await project.setup()
            by = {s.name: s for s in result.services}
            assert (by["app"].status, by["sidecar"].status) == ("healthy", "running")
            # Keys set aside are said once per key and file, on the result of every setup.
            assert sorted(w.split(": `")[1].split("`")[0] for w in result.warnings) == [
                "logging",
                "restart",
                "volumes.*.labels",
            ]
            app = _inspect(by["app"].container_name)
            host, config = app["HostConfig"], app["Config"]
            assert host["CapAdd"] == ["NET_ADMIN"] and host["CapDrop"] == ["MKNOD"]  # type: ignore[index]
            assert host["Sysctls"] == {"net.core.somaxconn": "1024"}  # type: ignore[index]
            assert host["Tmpfs"] == {"/scratch": "", "/cache": "size=1048576"}  # type: ignore[index]
            assert "printer.local:10.0.0.9" in host["ExtraHosts"]  # type: ignore[index]
            assert (host["Dns"], host["DnsSearch"], host["DnsOptions"]) == (  # type: ignore[index]
                ["9.9.9.9"],
                ["example.test"],
                ["ndots:2"],
            )
            assert host["ShmSize"] == 64 * 1024 * 1024  # type: ignore[index]
            assert sorted((u["Name"], u["Soft"], u["Hard"]) for u in host["Ulimits"]) == [  # type: ignore[index]
                ("nofile", 1024, 2048),
                ("nproc", 512, 512),
            ]
            assert host["SecurityOpt"] == ["no-new-privileges:true"]  # type: ignore[index]
            assert host["GroupAdd"] == ["2000"]  # type: ignore[index]
            assert (host["Memory"], host["MemoryReservation"]) == (128 * 1024**2, 64 * 1024**2)  # type: ignore[index]
            assert (host["NanoCpus"], host["CpuShares"], host["PidsLimit"]) == (500_000_000, 512, 100)  # type: ignore[index]
            assert (host["OomScoreAdj"], host["Init"]) == (100, True)  # type: ignore[index]
            assert host["RestartPolicy"]["Name"] == "no"  # type: ignore[index]
            assert host["LogConfig"]["Type"] != "none"  # type: ignore[index]
            assert (config["StopSignal"], config["StopTimeout"]) == ("SIGUSR1", 7)  # type: ignore[index]
            assert (config["Hostname"], config["Domainname"]) == ("apphost", "example.test")  # type: ignore[index]
            assert (config["User"], config["WorkingDir"]) == ("1000:1000", "/tmp")  # type: ignore[index]
            assert (config["Tty"], config["OpenStdin"]) == (True, True)  # type: ignore[index]
            assert config["Labels"]["com.example.team"] == "qa"  # type: ignore[index]
            assert config["Labels"]["com.example.from-file"] == "yes"  # type: ignore[index]
            assert config["Healthcheck"]["Interval"] == 1_000_000_000  # type: ignore[index]
            env = config["Env"]  # type: ignore[index]
            assert {"FROM_ENV_FILE=plain", "QUOTED=a b", 'RAW="kept quotes"', "FROM_LIST=1"} <= set(env)  # type: ignore[arg-type]
            ports = {p.container: p.host for p in by["app"].ports}
            assert set(ports) == {8081, 8082} and ports[8082] != 18082  # free host ports by default
            network = next(iter(app["NetworkSettings"]["Networks"].values()))  # type: ignore[index]
            assert {"app", "apphost", "app-alias", "legacy-app"} <= set(network["Aliases"])
            mounts = {m["Destination"]: m for m in app["Mounts"]}  # type: ignore[union-attr]
            assert mounts["/data"]["RW"] is False
            assert mounts["/store"]["Name"] == "cf-keys_store"
            name = by["app"].container_name
            assert _exec(name, "cat", "/run/secrets/token") == "s3cret-token\n"
            assert _exec(name, "cat", "/run/secrets/api.key") == "k-123"
            assert _exec(name, "cat", "/etc/app/settings.conf") == "mode=test\n"
            assert _exec(name, "cat", "/motd") == "welcome to the test"
            assert _exec(name, "cat", "/data/hello.txt") == "hello\n"
            sidecar = _inspect(by["sidecar"].container_name)
            assert sidecar["HostConfig"]["NetworkMode"] in (f"container:{app['Id']}", f"container:{name}")  # type: ignore[index]
            assert sidecar["HostConfig"]["VolumesFrom"] == [f"{name}:ro"]  # type: ignore[index]
            assert _exec(by["sidecar"].container_name, "cat", "/data/hello.txt") == "hello\n"

            status = await project.status()
            assert status.warnings == result.warnings
            run = await project.run()
            assert [(s.id, s.passed) for s in run.suites] == [("e2e", 1)]
            cleaned = await project.clean()
            assert {c.name for c in cleaned.containers} >= {
                by["app"].container_name,
                by["sidecar"].container_name,
            }
            after = await project.status()
            assert {s.status for s in after.services} == {"missing"}, after
        assert labelled(root) == ([], [])
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", "cf-keys_store"], capture_output=True)


# -- images that must be pulled: a local registry, and one that cannot be reached ------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def registry(request: pytest.FixtureRequest) -> Iterator[str]:
    """Debian's docker-registry (scripts/ensure-registry) on a free port, temp storage; stopped by pid."""
    binary = shutil.which("docker-registry")
    if binary is None:
        message = "docker-registry is not installed; run scripts/ensure-registry"
        if request.config.getoption("--require-docker"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    root = Path(tempfile.mkdtemp(prefix="pf-compose-registry-"))
    port = _free_port()
    (root / "config.yml").write_text(
        "version: 0.1\nlog: {level: warn}\n"
        f"storage: {{filesystem: {{rootdirectory: {root / 'data'}}}}}\n"
        f"http: {{addr: '127.0.0.1:{port}'}}\n"
    )
    log = (root / "registry.log").open("wb")
    process = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1):
                    break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (
                    root / "registry.log"
                ).read_text()
                time.sleep(0.1)
        yield f"localhost:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
        shutil.rmtree(root, ignore_errors=True)


async def test_an_image_to_pull_comes_from_the_registry_with_progress(registry: str, tmp_path: Path) -> None:
    image = f"{registry}/cf-pull/busybox:1"
    subprocess.run(["docker", "tag", "preflight-base/busybox", image], check=True)
    subprocess.run(["docker", "push", image], check=True, capture_output=True)
    subprocess.run(["docker", "image", "rm", image], check=True, capture_output=True)  # the tag only
    root = tmp_path / "pulled"
    root.mkdir()
    (root / "compose.yaml").write_text(f"services:\n  box:\n    image: {image}\n    command: sleep 3600\n")
    events: list[ProgressEvent] = []
    try:
        async with Project.open(root) as project:
            result = await project.setup(progress=events.append)
            (box,) = result.services
            assert box.status == "running"
            assert _inspect(box.container_name)["Config"]["Image"] == image  # type: ignore[index]
        # The pull's own lines are the progress of the service, as a build's are.
        pulled = [e.message for e in events if e.kind == "log" and e.scope == "box"]
        assert any("Pulling from cf-pull/busybox" in line for line in pulled), events
    finally:
        force_clean(root)
        subprocess.run(["docker", "image", "rm", image], capture_output=True)


async def test_an_unreachable_registry_names_the_image_and_how_to_provide_it(tmp_path: Path) -> None:
    image = f"localhost:{_free_port()}/cf-pull/nothing:1"  # nothing listens there
    root = tmp_path / "unreachable"
    root.mkdir()
    (root / "compose.yaml").write_text(f"services:\n  box:\n    image: {image}\n")
    try:
        async with Project.open(root) as project:
            with pytest.raises(PreflightError) as caught:
                await project.setup()
        error = caught.value
        assert error.code == "NOT_BUILT"
        assert image in error.message and "could not be pulled" in error.message
        assert "docker load" in (error.hint or "") and "registry" in (error.hint or "")
        assert labelled(root) == ([], [])
    finally:
        force_clean(root)


# -- warnings on every face ------------------------------------------------------------------------


async def test_keys_set_aside_are_said_once_per_key_and_file_on_every_face(tmp_path: Path) -> None:
    import os

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from support.cli import BIN, preflight_json

    root = tmp_path / "faces"
    root.mkdir()
    (root / "compose.yaml").write_text(
        "services:\n"
        "  a: {image: preflight-base/busybox, restart: always, logging: {driver: none}}\n"
        "  b: {image: preflight-base/busybox, restart: unless-stopped}\n"
    )
    expected = [
        f"{root / 'compose.yaml'}:2: `restart` set aside: preflight owns each container's lifetime and "
        "reports a crash instead of restarting (and 1 more place in this file)",
        f"{root / 'compose.yaml'}:2: `logging` set aside: preflight reads every service's logs through the engine",
    ]
    # CLI, --json and text; `init` loads the compose project and writes no e2e.yaml beside it.
    init = preflight_json(root, "init")
    assert (init["data"]["projectName"], init["data"]["warnings"]) == ("faces", expected)
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == ["compose.yaml"]
    status = preflight_json(root, "status")
    assert status["success"] is True and status["data"]["warnings"] == expected
    text = subprocess.run(
        [str(BIN / "preflight"), "status", "-C", str(root)], capture_output=True, text=True, timeout=60
    ).stdout
    assert [line for line in text.splitlines() if line.startswith("warning: ")] == [
        f"warning: {w}" for w in expected
    ]
    # MCP.
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=[], env=dict(os.environ), cwd=tmp_path
    )
    with (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            reply = await client.call_tool("preflight_init", {"projectPath": str(root)})
    assert reply.structured_content is not None
    assert reply.structured_content["data"]["warnings"] == expected
    # The notebook's rendering (text and HTML).
    async with Project.open(root) as project:
        bundle = (await project.init())._repr_mimebundle_()
    assert all(bundle["text/plain"].count(w) == 1 for w in expected), bundle["text/plain"]
    assert bundle["text/html"].count("set aside") == len(expected)


# -- a real sample application, its registry images swapped by an override -------------------------


async def test_a_sample_application_comes_up_with_its_images_overridden(tmp_path: Path) -> None:
    root = tmp_path / "nginx-golang-postgres"
    shutil.copytree(REAL / "awesome" / "nginx-golang-postgres", root)
    # The file stays as it is; e2e.yaml swaps what cannot be pulled or built here for busybox.
    (root / "e2e.yaml").write_text(
        textwrap.dedent("""
            project: {name: cf-ngp}
            compose:
              files: [compose.yaml]
              override:
                services:
                  db:
                    image: preflight-base/busybox
                    user: null
                    command: [sh, -c, "test -s /run/secrets/db-password && touch /tmp/ready; exec sleep 3600"]
                    healthcheck: {test: [CMD, test, -f, /tmp/ready], interval: 1s}
                  backend: {build: null, image: preflight-base/busybox, command: sleep 3600}
                  proxy: null
        """)
    )
    try:
        async with Project.open(root) as project:
            result = await project.setup()
            by = {s.name: s for s in result.services}
            assert set(by) == {"db", "backend"}
            assert by["db"].status == "healthy"  # `backend` waited on `condition: service_healthy`
            assert by["db"].readiness is not None and by["db"].readiness.probe == "docker"
            secret = "/run/secrets/db-password"
            assert _exec(by["backend"].container_name, "cat", secret) == "preflight-test-password\n"
            mounts = {m["Destination"]: m for m in _inspect(by["db"].container_name)["Mounts"]}  # type: ignore[union-attr]
            assert mounts["/var/lib/postgresql/data"]["Name"] == "cf-ngp_db-data"
            assert [w.split("`")[1] for w in result.warnings] == ["restart"]
    finally:
        force_clean(root)
        subprocess.run(["docker", "volume", "rm", "-f", "cf-ngp_db-data"], capture_output=True)
