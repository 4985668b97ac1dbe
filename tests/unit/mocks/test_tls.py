"""Mocks at real host names over real TLS: the project's CA, one certificate for every name, one listener.

The clients verify the certificate against the project's bundle (nothing is turned off); the
listener is on 127.0.0.1 and a free port here (443 on the bridge gateway in an environment).
"""

from __future__ import annotations

import os
import ssl
import stat
from pathlib import Path

import httpx
import msgspec
import pytest

from preflight_sdk.config.model import MockConfig
from preflight_sdk.mocks import MockHost
from preflight_sdk.mocks.tls import TlsIdentity, project_ca

pytestmark = pytest.mark.anyio


def mock(hosts: list[str], body: object) -> MockConfig:
    return msgspec.convert(
        {"port": 0, "hosts": hosts, "routes": [{"path": "/v1/hello", "response": {"body": body}}]}, MockConfig
    )


def test_the_project_ca_is_made_once_its_key_private_and_its_bundle_holds_the_public_roots_too(
    tmp_path: Path,
) -> None:
    folder = tmp_path / ".preflight" / "tls"
    ca = project_ca(folder)
    assert stat.S_IMODE(os.stat(ca.key).st_mode) == 0o600
    cert = Path(ca.cert).read_bytes()
    bundle = Path(ca.bundle).read_bytes()
    assert bundle.startswith(cert) and bundle.count(b"BEGIN CERTIFICATE") > 50
    again = project_ca(folder)
    assert Path(again.cert).read_bytes() == cert  # kept, not made anew


async def test_each_host_name_reaches_its_own_mock_with_verification_on(tmp_path: Path) -> None:
    ca = project_ca(tmp_path / "tls")
    identity = TlsIdentity(ca, ["api.stripe.test", "api.github.test"])
    host = MockHost(
        {
            "stripe": mock(["api.stripe.test"], {"from": "stripe"}),
            "github": mock(["api.github.test"], {"from": "github"}),
        },
        tls=identity,
        tls_binds=["127.0.0.1"],
        tls_port=0,
    )
    await host.start()
    try:
        port = host.tls_port
        assert port
        context = ssl.create_default_context(cafile=ca.bundle)
        for name, expected in (("api.stripe.test", "stripe"), ("api.github.test", "github")):
            # The name resolves to the listener, as /etc/hosts makes it in a container.
            transport = httpx.AsyncHTTPTransport(verify=context)
            async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
                answer = await client.get(
                    f"https://127.0.0.1:{port}/v1/hello",
                    headers={"Host": name},
                    extensions={"sni_hostname": name},
                )
            assert answer.status_code == 200 and answer.json() == {"from": expected}
        (entry,) = host.entries("stripe")
        assert entry.url == "https://api.stripe.test/v1/hello"
        with pytest.raises(httpx.ConnectError):  # another CA's client does not trust the mocks
            async with httpx.AsyncClient(trust_env=False) as client:
                await client.get(f"https://127.0.0.1:{port}/v1/hello", headers={"Host": "api.stripe.test"})
    finally:
        await host.stop()


async def test_a_name_no_mock_stands_in_for_is_misdirected(tmp_path: Path) -> None:
    ca = project_ca(tmp_path / "tls")
    host = MockHost(
        {"stripe": mock(["api.stripe.test"], {})},
        tls=TlsIdentity(ca, ["api.stripe.test"]),
        tls_binds=["127.0.0.1"],
        tls_port=0,
    )
    await host.start()
    try:
        context = ssl.create_default_context(cafile=ca.bundle)
        async with httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(verify=context), trust_env=False
        ) as client:
            answer = await client.get(
                f"https://127.0.0.1:{host.tls_port}/v1/hello",
                headers={"Host": "api.other.test"},
                extensions={"sni_hostname": "api.stripe.test"},
            )
        assert answer.status_code == 421 and answer.json()["hosts"] == ["api.stripe.test"]
    finally:
        await host.stop()


async def test_a_reload_that_adds_a_host_name_serves_a_certificate_naming_it(tmp_path: Path) -> None:
    ca = project_ca(tmp_path / "tls")
    host = MockHost(
        {"stripe": mock(["api.stripe.test"], {"v": 1})},
        tls=TlsIdentity(ca, ["api.stripe.test"]),
        tls_binds=["127.0.0.1"],
        tls_port=0,
    )
    await host.start()
    try:
        host.reload({"stripe": mock(["api.stripe.test", "files.stripe.test"], {"v": 2})})
        context = ssl.create_default_context(cafile=ca.bundle)
        async with httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(verify=context), trust_env=False
        ) as client:
            answer = await client.get(
                f"https://127.0.0.1:{host.tls_port}/v1/hello",
                headers={"Host": "files.stripe.test"},
                extensions={"sni_hostname": "files.stripe.test"},
            )
        assert answer.status_code == 200 and answer.json() == {"v": 2}
    finally:
        await host.stop()
