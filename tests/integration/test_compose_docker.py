"""Compose files brought up on a real Docker daemon: other projects' test setups and a build of our own."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.docker import force_clean, labelled

from preflight_sdk import Project

pytestmark = pytest.mark.anyio

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
