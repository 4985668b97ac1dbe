"""A container on a user network reaches a host mock by name through `--add-host <mock>:host-gateway`."""

from __future__ import annotations

import ipaddress
import json
import secrets
import subprocess

import anyio
import msgspec
import pytest

from preflight_sdk.config.model import MockConfig
from preflight_sdk.mocks import MockHost

pytestmark = pytest.mark.anyio

CLIENT = """
import json, urllib.request
request = urllib.request.Request(
    "http://payments:{port}/v1/charges",
    data=json.dumps({{"amount": 42, "currency": "EUR", "meta": {{"order": "o-7"}}}}).encode(),
    headers={{"Content-Type": "application/json"}},
    method="POST",
)
with urllib.request.urlopen(request, timeout=10) as response:
    print(json.dumps({{"status": response.status, "body": json.loads(response.read())}}))
"""


def bridge_gateway() -> str:
    """The default bridge's gateway: what `host-gateway` resolves to inside containers."""
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


async def docker(*args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return await anyio.run_process(["docker", *args], check=check)


async def test_a_container_posts_json_to_a_mock_by_name_and_the_journal_has_it() -> None:
    gateway = await anyio.to_thread.run_sync(bridge_gateway)
    config = msgspec.convert(
        {
            "port": 0,
            "routes": [
                {
                    "method": "POST",
                    "path": "/v1/charges",
                    "when": {"body": {"amount": {"gt": 0}}},
                    "response": {
                        "status": 201,
                        "body": {"id": "ch_{{request.body.amount}}", "n": "{{counter}}"},
                    },
                }
            ],
        },
        MockConfig,
    )
    host = MockHost({"payments": config}, bind_hosts=("127.0.0.1", gateway))
    await host.start()
    suffix = secrets.token_hex(4)
    network, container = f"pf-test-mock-{suffix}", f"pf-test-mock-client-{suffix}"
    try:
        await docker("network", "create", "--label", "preflight.test=1", network)
        script = CLIENT.format(port=host.port("payments"))
        with anyio.fail_after(120):
            done = await docker(
                "run",
                "--name",
                container,
                "--label",
                "preflight.test=1",
                "--network",
                network,
                "--add-host",
                "payments:host-gateway",
                "preflight-base/python",
                "python3",
                "-c",
                script,
                check=False,
            )
        assert done.returncode == 0, done.stderr.decode()
        answer = json.loads(done.stdout.decode().strip().splitlines()[-1])
        assert answer == {"status": 201, "body": {"id": "ch_42", "n": 1}}
        [entry] = host.entries("payments")
        assert entry.method == "POST"
        assert entry.path == "/v1/charges"
        assert entry.body == {"amount": 42, "currency": "EUR", "meta": {"order": "o-7"}}
        assert entry.body_encoding == "json"
        assert entry.status == 201
        assert entry.url == f"http://payments:{host.port('payments')}/v1/charges"
    finally:
        await docker("rm", "-f", container, check=False)
        await docker("network", "rm", network, check=False)
        await host.stop()
