"""A shard's copy of the environment: its own state, labels and ports on a shared engine."""

from __future__ import annotations

import msgspec

from preflight_sdk.config import LoadedConfig

__all__ = ["shard_copy"]


def shard_copy(loaded: LoadedConfig, shard: str) -> LoadedConfig:
    """`loaded` as one shard's copy of the environment: its own state and labels (`shard`), every
    published port on a free host port and every mock on a free port, so copies on one engine
    (and the project's own environment) never take each other's ports."""
    services = []
    for service in loaded.services:
        ports = [_free_host_port(spec) for spec in service.container.ports]
        container = msgspec.structs.replace(service.container, ports=ports)
        services.append(msgspec.structs.replace(service, container=container))
    mocks = {name: msgspec.structs.replace(mock, port=0) for name, mock in loaded.config.mocks.items()}
    config = msgspec.structs.replace(loaded.config, mocks=mocks)
    return msgspec.structs.replace(loaded, config=config, services=services, shard=shard)


def _free_host_port(spec: str | int) -> str:
    """`8080:80` → `0:80` (keeping a host address and protocol); `80` is already Docker's choice."""
    from preflight_sdk.config import parse_port

    port = parse_port(spec)
    address = f"{port.host_ip}:" if port.host_ip else ""
    return f"{address}0:{port.container}/{port.protocol}"
