"""A container's run options (`RunOptions`) as the Docker API body and as `docker run` flags.

Both forms say the same thing, so a container started over the socket and one started by the CLI
(a remote engine, Podman) are alike. The caller resolves `network_of` into `ContainerSpec.network
= "container:<name>"` and `volumes_from` into container names. A container in another's network
namespace has no network of its own: no aliases, no published ports, no host name.
"""

from __future__ import annotations

from typing import Any

from preflight_sdk.config.run_options import RunOptions
from preflight_sdk.core.durations import parse_duration

__all__ = ["SHARED_NETWORK", "apply_options", "option_flags"]

SHARED_NETWORK = "container:"


def apply_options(body: dict[str, Any], options: RunOptions) -> None:
    """Add `options` to a `POST /containers/create` body (what `docker run` sends for the flags)."""
    host: dict[str, Any] = body["HostConfig"]
    lists = {
        "CapAdd": options.cap_add,
        "CapDrop": options.cap_drop,
        "Dns": options.dns,
        "DnsSearch": options.dns_search,
        "DnsOptions": options.dns_opt,
        "SecurityOpt": options.security_opt,
        "GroupAdd": options.group_add,
        "VolumesFrom": options.volumes_from,
    }
    host.update({key: list(value) for key, value in lists.items() if value})
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
    scalars = {
        "ShmSize": options.shm_size,
        "Memory": options.mem_limit,
        "MemoryReservation": options.mem_reservation,
        "NanoCpus": int(options.cpus * 1_000_000_000) if options.cpus is not None else None,
        "CpuShares": options.cpu_shares,
        "PidsLimit": options.pids_limit,
        "OomScoreAdj": options.oom_score_adj,
        "PidMode": options.pid,
        "IpcMode": options.ipc,
        "UTSMode": options.uts,
        "UsernsMode": options.userns_mode,
    }
    host.update({key: value for key, value in scalars.items() if value is not None})
    if options.privileged:
        host["Privileged"] = True
    body["Labels"] = {**options.labels, **body.get("Labels", {})}
    if options.stop_signal:
        body["StopSignal"] = options.stop_signal
    if options.stop_grace_period is not None:
        body["StopTimeout"] = int(parse_duration(options.stop_grace_period))
    if options.tty:
        body["Tty"] = True
    if options.stdin_open:
        body["OpenStdin"] = True
    if options.domainname:
        body["Domainname"] = options.domainname
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
    repeated = {
        "--cap-add": options.cap_add,
        "--cap-drop": options.cap_drop,
        "--dns": options.dns,
        "--dns-search": options.dns_search,
        "--dns-option": options.dns_opt,
        "--security-opt": options.security_opt,
        "--group-add": options.group_add,
        "--volumes-from": options.volumes_from,
        "--add-host": options.extra_hosts,
        "--tmpfs": options.tmpfs,
        "--device": options.devices,
        "--sysctl": [f"{k}={v}" for k, v in options.sysctls.items()],
        "--label": [f"{k}={v}" for k, v in options.labels.items()],
        "--ulimit": [f"{n}={u.soft}:{u.hard}" for n, u in options.ulimits.items()],
    }
    argv += [a for flag, values in repeated.items() for value in values for a in (flag, value)]
    single = {
        "--shm-size": options.shm_size,
        "--memory": options.mem_limit,
        "--memory-reservation": options.mem_reservation,
        "--cpus": options.cpus,
        "--cpu-shares": options.cpu_shares,
        "--pids-limit": options.pids_limit,
        "--oom-score-adj": options.oom_score_adj,
        "--pid": options.pid,
        "--ipc": options.ipc,
        "--uts": options.uts,
        "--userns": options.userns_mode,
        "--stop-signal": options.stop_signal,
        "--domainname": options.domainname,
        "--hostname": options.hostname,
        "--platform": options.platform,
        "--stop-timeout": (
            int(parse_duration(options.stop_grace_period)) if options.stop_grace_period is not None else None
        ),
    }
    argv += [a for flag, value in single.items() if value is not None for a in (flag, str(value))]
    for flag, on in (
        ("--privileged", options.privileged),
        ("--tty", options.tty),
        ("--interactive", options.stdin_open),
    ):
        if on:
            argv.append(flag)
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
