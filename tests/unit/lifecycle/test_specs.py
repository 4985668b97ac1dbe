"""container_spec: paths against the e2e.yaml directory, aliases, mock hosts, labels, templates."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from preflight_sdk.config import LoadedConfig, load_config
from preflight_sdk.engine.base import ContainerSpec
from preflight_sdk.lifecycle.setup.specs import container_spec

CONFIG = """
project: {name: "Shop App"}
mocks:
  payments: {port: 9100}
  auth: {port: 0}
services:
  api:
    build: {image: "shop-api:e2e"}
    container:
      name: shop-api
      aliases: [backend, shop-api, api]
      ports: ["0:8080", "127.0.0.1:9000:9000"]
      volumes:
        - ./data:/data
        - fixtures/seed.sql:/seed.sql:ro
        - ../shared:/shared
        - /etc/ssl/certs:/certs:ro
        - cache:/cache
        - /scratch
      environment:
        PAYMENTS_URL: "{{mocks.payments.url}}"
        AUTH_HOST: "{{mocks.auth.host}}:{{mocks.auth.port}}"
        DEBUG: true
        WORKERS: 4
      command: "serve --auth {{mocks.auth.url}} --name 'shop api'"
  worker:
    build: {image: "shop-api:e2e"}
    container:
      command: ["work", "--queue", "{{mocks.payments.url}}/queue"]
"""
# The ports the mocks got at setup: a configured port, and a free one picked for `0`.
MOCKS = {"payments": 9100, "auth": 41002}


@pytest.fixture
def loaded(
    make_project: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> LoadedConfig:
    root = make_project(CONFIG, name="checkout/shop")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # relative paths must not depend on the working directory
    return load_config(root / "e2e.yaml")


def _spec(loaded: LoadedConfig, service: str, mocks: dict[str, int]) -> ContainerSpec:
    chosen = loaded.service(service)
    assert chosen is not None
    return container_spec(loaded, chosen, session="a1b2c3", network="pf-shop-app-a1b2c3", mocks=mocks)


def test_relative_volumes_are_resolved_against_the_e2e_yaml_directory(loaded: LoadedConfig) -> None:
    root = Path(loaded.root)
    assert root.name == "shop" and Path.cwd().name == "elsewhere"
    spec = _spec(loaded, "api", MOCKS)
    assert list(spec.volumes) == [
        f"{root / 'data'}:/data",
        f"{root / 'fixtures/seed.sql'}:/seed.sql:ro",
        f"{root / '../shared'}:/shared",
        "/etc/ssl/certs:/certs:ro",
        "cache:/cache",  # a named volume stays a name
        "/scratch",  # an anonymous volume stays a container path
    ]


def test_a_home_relative_volume_is_expanded(
    make_project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = make_project(
        "project: {name: x}\nservices:\n  api:\n    build: {image: 'a:b'}\n"
        "    container: {volumes: ['~/cache:/cache']}\n"
    )
    spec = _spec(load_config(root), "api", {})
    assert list(spec.volumes) == [f"{tmp_path / 'home' / 'cache'}:/cache"]
    assert list(spec.add_hosts) == [], "no mocks, no extra hosts"


def test_names_aliases_and_network(loaded: LoadedConfig) -> None:
    spec = _spec(loaded, "api", MOCKS)
    assert spec.name == "pf-shop-app-a1b2c3-api"
    assert spec.network == "pf-shop-app-a1b2c3"
    assert spec.image == "shop-api:e2e"
    # The service name, the configured container name, then the extra aliases, each once.
    assert list(spec.aliases) == ["api", "shop-api", "backend"]
    assert list(_spec(loaded, "worker", MOCKS).aliases) == ["worker"]


def test_one_add_host_per_mock_through_the_host_gateway(loaded: LoadedConfig) -> None:
    spec = _spec(loaded, "api", MOCKS)
    assert list(spec.add_hosts) == [("payments", "host-gateway"), ("auth", "host-gateway")]


def test_labels_name_the_project_session_checkout_and_service(loaded: LoadedConfig) -> None:
    spec = _spec(loaded, "api", MOCKS)
    assert dict(spec.labels) == {
        "preflight.managed": "true",
        "preflight.project": "shop-app",
        "preflight.session": "a1b2c3",
        "preflight.root": loaded.root,
        "preflight.service": "api",
    }
    assert _spec(loaded, "worker", MOCKS).labels["preflight.service"] == "worker"


def test_mock_addresses_fill_the_environment_and_the_command(loaded: LoadedConfig) -> None:
    spec = _spec(loaded, "api", MOCKS)
    assert dict(spec.env) == {
        "PAYMENTS_URL": "http://payments:9100",
        "AUTH_HOST": "auth:41002",
        "DEBUG": "true",
        "WORKERS": "4",
    }
    assert list(spec.command or []) == ["serve", "--auth", "http://auth:41002", "--name", "shop api"]
    worker = _spec(loaded, "worker", MOCKS)
    assert list(worker.command or []) == ["work", "--queue", "http://payments:9100/queue"]


def test_ports_are_parsed_with_their_host_address(loaded: LoadedConfig) -> None:
    spec = _spec(loaded, "api", MOCKS)
    assert [(p.host_ip, p.host, p.container) for p in spec.ports] == [
        (None, 0, 8080),
        ("127.0.0.1", 9000, 9000),
    ]
    assert [p.docker_arg() for p in spec.ports] == ["8080/tcp", "127.0.0.1:9000:9000/tcp"]
