"""The kept mocks' admin endpoints answer preflight's own processes only, and show no secret.

`preflight setup` keeps an environment whose service calls a mock with a credential taken from
preflight's own environment; when the command exits, a detached mock host keeps the mock,
listening on the Docker bridge gateway so the service can still reach it. A container on a network
of its own, unrelated to the project, then probes the admin endpoints there: reading the journal,
emptying it and resetting the mock must all be refused. From this machine the journal reads with
the credential masked, and no file preflight wrote holds the credential.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.cli import BIN
from support.docker import force_clean

KEY = "sk_live_admin_guard_5f2b8e1c9d"

CONFIG = """\
project: {name: adminguard}
services:
  web:
    build: {image: preflight-base/python}
    container:
      command: ["python3", "-m", "http.server", "8000"]
      ports: ["0:8000"]
      healthcheck: {path: /}
      environment:
        PAYMENTS_KEY: "{{env.ADMIN_GUARD_KEY}}"
mocks:
  payments:
    port: 0
    routes:
      - method: POST
        path: /charges
        when: {headers: {Authorization: "Bearer {{env.ADMIN_GUARD_KEY}}"}}
        response: {status: 201, body: {ok: true}}
"""

CALL = """
import os, urllib.request
request = urllib.request.Request("http://payments:{port}/charges", data=b"{{}}", method="POST",
                                 headers={{"Authorization": "Bearer " + os.environ["PAYMENTS_KEY"]}})
print(urllib.request.urlopen(request, timeout=10).status)
"""

PROBE = """
import json, urllib.request, urllib.error
for method, path in (("GET", "/_mock/requests"), ("DELETE", "/_mock/requests"), ("POST", "/_mock/reset"),
                     ("GET", "/_mock/routes")):
    request = urllib.request.Request("http://{gateway}:{port}" + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            print(json.dumps([method, path, reply.status, reply.read().decode()]))
    except urllib.error.HTTPError as error:
        print(json.dumps([method, path, error.code, error.read().decode()]))
"""


def preflight(root: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "ADMIN_GUARD_KEY": KEY},
    )
    assert done.stdout, done.stderr
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def bridge_gateway() -> str:
    """The default bridge's gateway (where the mocks listen for containers)."""
    done = subprocess.run(
        ["docker", "network", "inspect", "bridge", "--format", "{{json .IPAM.Config}}"],
        capture_output=True,
        text=True,
        check=True,
    )
    config = json.loads(done.stdout)[0]
    if config.get("Gateway"):
        return str(config["Gateway"])
    return str(ipaddress.ip_network(config["Subnet"]).network_address + 1)


@pytest.fixture
def project(tmp_path: Path) -> Any:
    root = tmp_path / "adminguard"
    root.mkdir()
    (root / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    yield root
    force_clean(root)


def test_a_container_elsewhere_cannot_read_empty_or_reset_the_kept_mocks_and_nothing_on_disk_holds_the_key(
    project: Path,
) -> None:
    started = preflight(project, "setup")
    assert started["success"], started
    state = json.loads((project / ".preflight" / "state.json").read_text())
    (mock,) = state["mocks"]
    port, container = mock["port"], state["containers"][0]["name"]
    assert b"preflight_sdk.mocks.serve" in Path(f"/proc/{mock['pid']}/cmdline").read_bytes()

    called = subprocess.run(
        ["docker", "exec", container, "python3", "-c", CALL.format(port=port)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert called.returncode == 0 and called.stdout.strip() == "201", called.stderr

    suffix = secrets.token_hex(4)
    network = f"pf-test-probe-{suffix}"
    subprocess.run(
        ["docker", "network", "create", "--label", "preflight.test=1", network],
        check=True,
        capture_output=True,
    )
    try:
        probe = subprocess.run(
            ["docker", "run", "--rm", "--network", network, "--label", "preflight.test=1", "preflight-base/python",
             "python3", "-c", PROBE.format(gateway=bridge_gateway(), port=port)],
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
    finally:
        subprocess.run(["docker", "network", "rm", network], capture_output=True)
    assert probe.returncode == 0, probe.stderr
    answers = [json.loads(line) for line in probe.stdout.splitlines() if line.startswith("[")]
    assert [(m, p, status) for m, p, status, _ in answers] == [
        ("GET", "/_mock/requests", 403),
        ("DELETE", "/_mock/requests", 403),
        ("POST", "/_mock/reset", 403),
        ("GET", "/_mock/routes", 403),
    ]
    assert all(KEY not in body for *_, body in answers)

    # Nothing was emptied or reset; from this machine the journal reads, the credential masked.
    journal = httpx.get(f"http://127.0.0.1:{port}/_mock/requests", timeout=10, trust_env=False)
    assert journal.status_code == 200
    (entry,) = journal.json()["requests"]
    assert entry["path"] == "/charges" and entry["status"] == 201
    assert KEY not in journal.text and entry["headers"]["authorization"] == "[redacted]"
    routes = httpx.get(f"http://127.0.0.1:{port}/_mock/routes", timeout=10, trust_env=False)
    assert routes.status_code == 200 and KEY not in routes.text
    listed = preflight(project, "mock-requests")
    assert listed["success"] and len(listed["data"]["mocks"][0]["requests"]) == 1

    for path in (project / ".preflight").rglob("*"):
        if path.is_file() and path.suffix != ".db":
            assert KEY.encode() not in path.read_bytes(), f"{path} holds the raw key"

    cleaned = preflight(project, "clean")
    assert cleaned["success"], cleaned
