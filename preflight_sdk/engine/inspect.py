"""Read what the daemon says: its objects (as `lane.py` decodes them) as `ContainerInfo`s, RFC 3339
times, timestamped log lines."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal, cast

from preflight_sdk.core.log_text import uncoloured
from preflight_sdk.core.results.lifecycle import ContainerStatus, LogLine, PortMapping

from .base import ContainerInfo, NetworkInfo
from .lane import (
    ContainerConfig,
    ContainerObject,
    ContainerState,
    IpamConfig,
    ListedContainer,
    ListedNetwork,
    NetworkSettings,
    PortBinding,
)

__all__ = [
    "bridge_gateway",
    "container_from_inspect",
    "container_from_list",
    "docker_time",
    "join_fragments",
    "labels_of",
    "merge_log_streams",
    "network_from_list",
    "normalise_timestamp",
    "parse_log_line",
    "parse_time",
]

_STATUSES = {"created", "running", "paused", "restarting", "removing", "exited", "dead"}
# Podman's own words for the same states: "stopped" is a process that has exited but whose
# cleanup has not run yet (its ExitCode is already known), "configured" one not yet created.
_PODMAN_STATUSES = {
    "stopped": "exited",
    "stopping": "running",
    "configured": "created",
    "initialized": "created",
}
_HEALTH = {"healthy", "unhealthy", "starting"}
Health = Literal["healthy", "unhealthy", "starting", "none"]
_FRAGMENT = 16 * 1024
_STAMP_BYTES = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}) ")
_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$")


def normalise_timestamp(text: str) -> str | None:
    """Return an RFC 3339 time with exactly 9 fraction digits and `Z`, so strings sort by time."""
    match = _STAMP.match(text.strip())
    if match is None:
        return None
    base, fraction, zone = match.groups()
    if zone != "Z":
        moment = parse_time(text)
        if moment is None:
            return None
        base = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{(fraction or '').ljust(9, '0')}Z"


def parse_time(text: str | None) -> datetime | None:
    """Parse a docker time (nanoseconds are cut to microseconds); None for the zero time."""
    if not text or text.startswith("0001-01-01") or _STAMP.match(text.strip()) is None:
        return None
    return datetime.fromisoformat(text.strip()).astimezone(UTC)


def docker_time(moment: datetime) -> str:
    """Format a moment for `--since`/`--until` (RFC 3339, UTC)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_log_line(line: str, stream: Literal["stdout", "stderr"]) -> LogLine | None:
    """Split a `docker logs --timestamps` line into its timestamp and text (colour codes dropped:
    no reader of a result, a report or a pytest section has the terminal they were written for)."""
    stamp, _, text = line.partition(" ")
    normal = normalise_timestamp(stamp)
    if normal is None:
        return None if not line else LogLine(timestamp="", stream=stream, text=uncoloured(line))
    return LogLine(timestamp=normal, stream=stream, text=uncoloured(text))


def join_fragments(raw: bytes) -> tuple[bytes, int]:
    """Join the 16 KB fragments of one `docker logs --timestamps` line; return it and their count.

    The daemon stores a longer line as 16384-byte entries, printed with a timestamp each and no
    newline between them (`<ts> <16384 bytes><ts> <rest>`); the first timestamp is kept."""
    stamp_end = raw.find(b" ")
    if stamp_end < 0:
        return raw, 1
    head, body = raw[: stamp_end + 1], raw[stamp_end + 1 :]
    parts: list[bytes] = []
    count = 1
    while len(body) > _FRAGMENT:
        match = _STAMP_BYTES.match(body, _FRAGMENT)
        if match is None:
            break
        parts.append(body[:_FRAGMENT])
        body = body[match.end() :]
        count += 1
    parts.append(body)
    return head + b"".join(parts), count


def merge_log_streams(pieces: Iterable[tuple[str, bytes]]) -> tuple[list[LogLine], int]:
    """Order the lines of `docker logs --timestamps` by the daemon's timestamps (stable for equal times).

    `pieces` are `(stream, line)` pairs, the streams read apart (their order between streams is
    arbitrary). Returns the lines and the daemon log entries they were (16 KB fragments count each)."""
    lines: list[LogLine] = []
    entries = 0
    previous = {"stdout": "", "stderr": ""}
    for source, raw in pieces:
        stream: Literal["stdout", "stderr"] = "stderr" if source == "stderr" else "stdout"
        joined, count = join_fragments(raw.removesuffix(b"\n"))
        entries += count
        # Only LF ends a docker log line: a CR inside one (a progress bar) belongs to its text.
        parsed = parse_log_line(joined.removesuffix(b"\r").decode("utf-8", "replace"), stream)
        if parsed is None:
            continue
        if not parsed.timestamp:
            # Not a line of its own: keep it after the line it follows, not first in the sort.
            parsed = LogLine(timestamp=previous[stream], stream=stream, text=parsed.text)
        previous[stream] = parsed.timestamp
        lines.append(parsed)
    lines.sort(key=lambda line: line.timestamp)
    return lines, entries


def container_from_inspect(item: ContainerObject) -> ContainerInfo:
    """Reduce one `docker inspect` object to a `ContainerInfo`."""
    state = item.state or ContainerState()
    config = item.config or ContainerConfig()
    settings = item.network_settings or NetworkSettings()
    status = _PODMAN_STATUSES.get(state.status, state.status)
    health = state.health.status if state.health else None
    networks = {
        name: (net.ip_address if net else None) or "" for name, net in (settings.networks or {}).items()
    }
    return ContainerInfo(
        id=item.id,
        name=item.name.lstrip("/"),
        image=config.image,
        status=cast(ContainerStatus, status if status in _STATUSES else "unknown"),
        running=state.running,
        exit_code=state.exit_code if status in ("exited", "dead") else None,
        health=cast(Health, health if health in _HEALTH else "none"),
        started_at=parse_time(state.started_at),
        finished_at=parse_time(state.finished_at),
        ports=_ports(settings.ports or {}),
        labels=dict(config.labels or {}),
        networks=networks,
        oom_killed=state.oom_killed,
        error=state.error or None,
    )


def labels_of(text: str) -> dict[str, str]:
    """The labels of a `docker ps`/`docker network ls` line (`k=v,k2=v2`)."""
    labels = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            labels[key.strip()] = value
    return labels


def bridge_gateway(configs: Iterable[IpamConfig]) -> str | None:
    """Return a bridge's IPv4 gateway (the default bridge's is what `host-gateway` resolves to)."""
    for config in configs:
        if config.gateway and ":" not in config.gateway:
            return config.gateway
        subnet = config.subnet or ""
        if subnet and ":" not in subnet:
            # Docker gives the bridge the first address of its subnet when no gateway is listed.
            network = ipaddress.ip_network(subnet, strict=False)
            return str(next(network.hosts()))
    return None


def container_from_list(item: ListedContainer) -> ContainerInfo:
    """Reduce one listed container to id, name, state and labels."""
    state = _PODMAN_STATUSES.get(item.state, item.state)
    return ContainerInfo(
        id=item.id,
        name=(item.names or [""])[0].lstrip("/"),
        image=item.image,
        status=cast(ContainerStatus, state if state in _STATUSES else "unknown"),
        running=state == "running",
        labels=dict(item.labels or {}),
    )


def _ports(raw: Mapping[str, Sequence[PortBinding] | None]) -> list[PortMapping]:
    mappings: list[PortMapping] = []
    for key, bindings in raw.items():
        container_port, _, protocol = key.partition("/")
        if protocol not in ("", "tcp") or not bindings:
            continue
        # Docker may bind IPv4 and IPv6 to *different* random ports: prefer the IPv4 one.
        ordered = sorted(bindings, key=lambda b: ":" in b.host_ip)
        for binding in ordered:
            if binding.host_port.isdigit():
                mappings.append(PortMapping(host=int(binding.host_port), container=int(container_port)))
                break
    return sorted(mappings, key=lambda m: m.container)


def network_from_list(item: ListedNetwork) -> NetworkInfo:
    """Reduce one listed network."""
    return NetworkInfo(id=item.id, name=item.name, labels=dict(item.labels or {}))
