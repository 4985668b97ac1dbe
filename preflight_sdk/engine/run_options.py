"""A container's run options (`RunOptions`) as the Docker API body and as `docker run` flags.

Both forms say the same thing, so a container started over the socket and one started by the CLI
(a remote engine, Podman) are alike: each plain option is one row of `_PLAIN`, read by both. The
caller resolves `network_of` into `ContainerSpec.network = "container:<name>"` and `volumes_from`
into container names. A container in another's network namespace has no network of its own: no
aliases, no published ports, no host name.
"""

from __future__ import annotations

from typing import Any

from preflight_sdk.config.run_options import RunOptions
from preflight_sdk.core.durations import parse_duration

__all__ = ["SHARED_NETWORK", "apply_options", "option_flags"]

SHARED_NETWORK = "container:"
# Each option that means the same in both forms: its `RunOptions` field, its key in the body's
# `HostConfig` (or, after a `.`, in the body itself) and its `docker run` flag. A list repeats
# the flag; `True` is the flag alone; None, False and an empty list are left out.
_PLAIN = (
    ("cap_add", "CapAdd", "--cap-add"),
    ("cap_drop", "CapDrop", "--cap-drop"),
    ("dns", "Dns", "--dns"),
    ("dns_search", "DnsSearch", "--dns-search"),
    ("dns_opt", "DnsOptions", "--dns-option"),
    ("security_opt", "SecurityOpt", "--security-opt"),
    ("group_add", "GroupAdd", "--group-add"),
    ("volumes_from", "VolumesFrom", "--volumes-from"),
    ("shm_size", "ShmSize", "--shm-size"),
    ("mem_limit", "Memory", "--memory"),
    ("mem_reservation", "MemoryReservation", "--memory-reservation"),
    ("cpu_shares", "CpuShares", "--cpu-shares"),
    ("pids_limit", "PidsLimit", "--pids-limit"),
    ("oom_score_adj", "OomScoreAdj", "--oom-score-adj"),
    ("pid", "PidMode", "--pid"),
    ("ipc", "IpcMode", "--ipc"),
    ("uts", "UTSMode", "--uts"),
    ("userns_mode", "UsernsMode", "--userns"),
    ("privileged", "Privileged", "--privileged"),
    ("stop_signal", ".StopSignal", "--stop-signal"),
    ("domainname", ".Domainname", "--domainname"),
    ("tty", ".Tty", "--tty"),
    ("stdin_open", ".OpenStdin", "--interactive"),
)


def _plain(options: RunOptions) -> list[tuple[str, str, Any]]:
    """The `_PLAIN` options that are set: `(key, flag, value)`."""
    found = [(key, flag, getattr(options, field)) for field, key, flag in _PLAIN]
    return [
        (key, flag, value)
        for key, flag, value in found
        if value is not None and value is not False and value != []
    ]


def _stop_timeout(options: RunOptions) -> int | None:
    grace = options.stop_grace_period
    return None if grace is None else int(parse_duration(grace))


def apply_options(body: dict[str, Any], options: RunOptions) -> None:
    """Add `options` to a `POST /containers/create` body (what `docker run` sends for the flags)."""
    host: dict[str, Any] = body["HostConfig"]
    for key, _, value in _plain(options):
        (body if key.startswith(".") else host)[key.lstrip(".")] = value
    if options.extra_hosts:
        host["ExtraHosts"] = [*(host.get("ExtraHosts") or []), *options.extra_hosts]
    if options.sysctls:
        host["Sysctls"] = dict(options.sysctls)
    if options.tmpfs:
        host["Tmpfs"] = {path: opts for path, _, opts in (t.partition(":") for t in options.tmpfs)}
    if options.ulimits:
        host["Ulimits"] = [{"Name": n, "Soft": u.soft, "Hard": u.hard} for n, u in options.ulimits.items()]
    if options.devices:
        host["Devices"] = [_device(spec) for spec in options.devices]
    if options.cpus is not None:
        host["NanoCpus"] = int(options.cpus * 1_000_000_000)
    body["Labels"] = {**options.labels, **body.get("Labels", {})}
    if options.stop_grace_period is not None:
        body["StopTimeout"] = _stop_timeout(options)
    if str(host.get("NetworkMode", "")).startswith(SHARED_NETWORK):
        # Docker refuses aliases, published ports and a host name in another container's namespace.
        body.pop("NetworkingConfig", None)
        body["ExposedPorts"] = {}
        host["PortBindings"] = {}
    elif options.hostname:
        body["Hostname"] = options.hostname


def option_flags(options: RunOptions) -> list[str]:
    """The `docker run` flags for `options` (the CLI path of `apply_options`)."""
    argv: list[str] = []
    for _, flag, value in _plain(options):
        values = [] if value is True else value if isinstance(value, list) else [value]
        argv += [flag] if value is True else [a for item in values for a in (flag, str(item))]
    repeated = {
        "--add-host": options.extra_hosts,
        "--tmpfs": options.tmpfs,
        "--device": options.devices,
        "--sysctl": [f"{k}={v}" for k, v in options.sysctls.items()],
        "--label": [f"{k}={v}" for k, v in options.labels.items()],
        "--ulimit": [f"{n}={u.soft}:{u.hard}" for n, u in options.ulimits.items()],
    }
    argv += [a for flag, values in repeated.items() for value in values for a in (flag, value)]
    single = {
        "--cpus": options.cpus,
        "--hostname": options.hostname,
        "--platform": options.platform,
        "--stop-timeout": _stop_timeout(options),
    }
    argv += [a for flag, value in single.items() if value is not None for a in (flag, str(value))]
    return argv


def _device(spec: str) -> dict[str, str]:
    parts = spec.split(":")
    host = parts[0]
    container = parts[1] if len(parts) > 1 else host
    return {
        "PathOnHost": host,
        "PathInContainer": container,
        "CgroupPermissions": parts[2] if len(parts) > 2 else "rwm",
    }
