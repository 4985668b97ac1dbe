"""What a container gets when a mock stands in for real host names: the names, the CA, the variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.core.errors import EnvironmentError_
from preflight_sdk.lifecycle.setup.specs import container_spec

CONFIG = """\
project: {name: trust}
services:
  api:
    build: {image: "trust-api:e2e"}
    container:
      environment: {NODE_EXTRA_CA_CERTS: /own/ca.pem, PAYMENTS_URL: "{{mocks.stripe.url}}"}
mocks:
  stripe: {port: 9100, hosts: [api.stripe.test, files.stripe.test]}
  plain: {port: 9200}
"""


@pytest.fixture
def loaded(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    return load_config(tmp_path)


def test_every_container_resolves_the_hosts_to_the_mocks_and_trusts_the_projects_ca(loaded) -> None:  # type: ignore[no-untyped-def]
    service = loaded.service("api")
    spec = container_spec(loaded, service, session="s1", network="n1", mocks={"stripe": 9100, "plain": 9200})
    assert list(spec.add_hosts) == [
        ("stripe", "host-gateway"),
        ("plain", "host-gateway"),
        ("api.stripe.test", "host-gateway"),
        ("files.stripe.test", "host-gateway"),
    ]
    bundle = Path(loaded.root) / ".preflight" / "tls" / "bundle.pem"
    assert f"{bundle}:/etc/preflight/ca-bundle.pem:ro" in spec.volumes
    assert spec.env["SSL_CERT_FILE"] == spec.env["REQUESTS_CA_BUNDLE"] == spec.env["CURL_CA_BUNDLE"]
    assert spec.env["SSL_CERT_FILE"] == "/etc/preflight/ca-bundle.pem"
    assert spec.env["NODE_EXTRA_CA_CERTS"] == "/own/ca.pem"  # the service's own setting wins
    assert spec.env["PAYMENTS_URL"] == "http://stripe:9100"


def test_without_hosts_nothing_is_added(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(CONFIG.replace(", hosts: [api.stripe.test, files.stripe.test]", ""))
    loaded = load_config(tmp_path)
    spec = container_spec(
        loaded, loaded.service("api"), session="s1", network="n1", mocks={"stripe": 9100, "plain": 9200}
    )
    assert "SSL_CERT_FILE" not in spec.env and not any("ca-bundle" in v for v in spec.volumes)
    assert [h for h, _ in spec.add_hosts] == ["stripe", "plain"]


def test_an_engine_elsewhere_cannot_mount_the_ca_and_says_so(loaded) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EnvironmentError_) as caught:
        container_spec(
            loaded,
            loaded.service("api"),
            session="s1",
            network="n1",
            mocks={"stripe": 9100},
            mock_address="10.1.2.3",
        )
    assert caught.value.code == "UNSUPPORTED_ON_ENGINE"
    assert caught.value.details is not None and caught.value.details["hosts"] == [
        "api.stripe.test",
        "files.stripe.test",
    ]
