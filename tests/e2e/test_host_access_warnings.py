"""Compose settings that hand a container the host run as written, and every face says so, once each.

A compose service that mounts the Docker socket, shares the host's pid namespace, adds SYS_ADMIN
with seccomp unconfined and maps a host device, and one built from a context outside the project,
on the real Docker daemon: an agent over MCP (`preflight_setup`), the CLI (`preflight run`, text)
and the SDK (`Project.setup`) each get one warning per setting in the setup result. A privileged
container cannot start on the daemon these tests run on (runc: "unable to apply caps"), so
`privileged: true` is read over MCP from a project that is not set up (`preflight_status`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from support.cli import BIN
from support.docker import force_clean

from preflight_sdk import Project

pytestmark = [pytest.mark.e2e, pytest.mark.docker, pytest.mark.anyio]

COMPOSE = """\
services:
  agent:
    image: preflight-base/busybox
    command: ["sleep", "3600"]
    pid: host
    volumes: ["/var/run/docker.sock:/var/run/docker.sock"]
    cap_add: [SYS_ADMIN]
    security_opt: ["seccomp:unconfined"]
    devices: ["/dev/null:/dev/host-null"]
  helper:
    build: {context: ../outside}
    command: ["sleep", "3600"]
"""
E2E = """\
project: {name: host-access}
compose: compose.yaml
tests:
  suites:
    - {id: smoke, runner: shell, command: [sh, -c, "exit 0"]}
"""
SETTINGS = [
    "`pid: host`",
    "`cap_add: SYS_ADMIN`",
    "`security_opt: seccomp:unconfined`",
    "`devices: /dev/null:/dev/host-null`",
    "`volumes: /var/run/docker.sock:/var/run/docker.sock`",
    "`build.context: ",
]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "compose.yaml").write_text(COMPOSE)
    (root / "e2e.yaml").write_text(E2E)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "Dockerfile").write_text("FROM preflight-base/busybox\n")
    yield root
    force_clean(root)
    subprocess.run(["docker", "image", "rm", "-f", "host-access-helper"], capture_output=True)


def _told(warnings: list[str]) -> list[str]:
    """For each expected setting, the one warning that names it (the test fails on none or two)."""
    found = []
    for setting in SETTINGS:
        matching = [w for w in warnings if setting in w]
        assert len(matching) == 1, (setting, warnings)
        found.append(matching[0])
    return found


async def test_every_face_tells_each_setting_that_hands_over_the_host_once(
    project: Path, tmp_path: Path
) -> None:
    # An agent over MCP: the setup result it reads.
    params = StdioServerParameters(
        command=str(BIN / "preflight-mcp"), args=[], env=dict(os.environ), cwd=tmp_path
    )
    with (tmp_path / "server.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.call_tool("preflight_build", {"projectPath": str(project)})
            reply = await client.call_tool("preflight_setup", {"projectPath": str(project)})
            await client.call_tool("preflight_clean", {"projectPath": str(project)})
            privileged = tmp_path / "privileged"
            privileged.mkdir()
            (privileged / "compose.yaml").write_text(
                "services:\n  ci: {image: preflight-base/busybox, privileged: true}\n"
            )
            status = await client.call_tool("preflight_status", {"projectPath": str(privileged)})
    assert status.structured_content is not None
    assert [w for w in status.structured_content["data"]["warnings"] if "privileged" in w] == [
        "service `ci`: `privileged: true`: every capability and every host device, no seccomp or AppArmor "
        "profile; what runs in it can take over the engine's host (it runs as written, as compose does)"
    ]
    assert reply.structured_content is not None and reply.structured_content["success"], reply
    mcp = _told(reply.structured_content["data"]["warnings"])
    assert "outside the project" in mcp[-1] and str(tmp_path / "outside") in mcp[-1]
    assert "controls the engine" in mcp[-2]

    # The CLI: a run's text shows them with its environment.
    done = subprocess.run(
        [str(BIN / "preflight"), "run", "-C", str(project)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    printed = [
        line.removeprefix("warning: ") for line in done.stdout.splitlines() if line.startswith("warning: ")
    ]
    assert _told(printed) == mcp

    # The SDK.
    async with Project.open(project) as sdk:
        result = await sdk.setup()
    assert _told(result.warnings) == mcp
