"""A compose service's run options (`cap_add`, `sysctls`, `ulimits`, `shm_size`...) → `container.options`.

Each key reaches `docker run` as the flag of the same meaning (see `engine.run_options`); values
are read the way compose reads them (sizes with units, `ulimits` as a number or `{soft, hard}`,
`extra_hosts` as a list or a map).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight_sdk.config.dotenv import read_dotenv

from .context import Context

__all__ = ["run_options"]

# Each key becomes the `container.options` key of the same name in camelCase (see `_camel`).
_LISTS = ("cap_add", "cap_drop", "dns", "dns_search", "dns_opt", "security_opt", "group_add", "tmpfs")
_SIZES = ("shm_size", "mem_limit", "mem_reservation")
_INTEGERS = ("cpu_shares", "pids_limit", "oom_score_adj")
_BOOLEANS = ("privileged", "tty", "stdin_open")
_TEXTS = ("stop_signal", "domainname", "platform", "userns_mode")
_NAMESPACES = ("pid", "ipc", "uts")


def run_options(service: Mapping[str, Any], ctx: Context, where: tuple[str | int, ...]) -> dict[str, Any]:
    """Return the `container.options` body of the service at `where` (only the keys it sets)."""
    read = ctx.read
    out: dict[str, Any] = {}
    for key in _LISTS:
        if service.get(key) is not None:
            out[_camel(key)] = read.strings(service[key])
    if ctx.tmpfs:
        out["tmpfs"] = [*out.get("tmpfs", []), *ctx.tmpfs]
    for key in _SIZES:
        if service.get(key) is not None and (size := read.size(service[key], (*where, key))) is not None:
            out[_camel(key)] = size
    for key in _INTEGERS:
        if service.get(key) is not None and (number := read.integer(service[key], (*where, key))) is not None:
            out[_camel(key)] = number
    for key in _BOOLEANS:
        if service.get(key) is not None and read.boolean(service[key], (*where, key)):
            out[_camel(key)] = True
    for key in _TEXTS:
        if service.get(key) is not None:
            out[_camel(key)] = str(service[key])
    for key in _NAMESPACES:
        mode = service.get(key)
        if mode is None:
            continue
        if str(mode).startswith(("service:", "container:")):
            ctx.report(
                (*where, key),
                f"`{key}: {mode}` (another container's namespace) is not supported",
                hint=f"remove `{key}`, or use `host` or `private`",
            )
        else:
            out[_camel(key)] = str(mode)
    if (
        service.get("cpus") is not None
        and (cpus := read.number(service["cpus"], (*where, "cpus"))) is not None
    ):
        out["cpus"] = cpus
    if service.get("stop_grace_period") is not None:
        grace = read.duration(service["stop_grace_period"], (*where, "stop_grace_period"))
        if grace is not None:
            out["stopGracePeriod"] = grace
    if service.get("sysctls") is not None:
        out["sysctls"] = read.mapping(service["sysctls"])
    labels = _label_files(service.get("label_file"), ctx, (*where, "label_file"))
    labels.update(read.mapping(service.get("labels")))
    if labels:
        out["labels"] = labels
    if service.get("extra_hosts") is not None:
        out["extraHosts"] = _extra_hosts(service["extra_hosts"])
    if service.get("ulimits") is not None:
        out["ulimits"] = _ulimits(service["ulimits"], ctx, (*where, "ulimits"))
    if service.get("devices") is not None:
        out["devices"] = [_device(entry) for entry in service["devices"]]
    if service.get("volumes_from") is not None:
        out["volumesFrom"] = _volumes_from(service["volumes_from"], ctx, (*where, "volumes_from"))
    if isinstance(service.get("hostname"), str):
        out["hostname"] = service["hostname"]
    return out


def _label_files(value: Any, ctx: Context, path: tuple[str | int, ...]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for index, name in enumerate(ctx.read.strings(value)):
        file = Path(ctx.path(name))
        if not file.is_file():
            ctx.report(
                (*path, index) if isinstance(value, list) else path, f"label_file {file} does not exist"
            )
            continue
        ctx.sources.append(str(file))
        labels.update(read_dotenv(file))
    return labels


def _volumes_from(value: Any, ctx: Context, path: tuple[str | int, ...]) -> list[str]:
    """`[service, service:ro]`; a `container:NAME` (a container outside the project) is refused."""
    sources = []
    for index, entry in enumerate(ctx.read.strings(value)):
        if entry.startswith("container:"):
            ctx.report(
                (*path, index),
                f"`{entry}`: a container outside the project",
                hint="declare a named volume and mount it in both services",
            )
        else:
            sources.append(entry)
    return sources


def _extra_hosts(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f"{host}:{address}" for host, addresses in value.items() for address in _as_list(addresses)]
    entries = []
    for entry in value:
        # `host=address` (newer) and `host:address` (IPv6 addresses contain colons: split on the first).
        host, sep, address = str(entry).partition("=")
        if not sep:
            host, _, address = str(entry).partition(":")
        entries.append(f"{host}:{address.strip('[]')}")
    return entries


def _as_list(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else [str(value)]


def _ulimits(value: Mapping[str, Any], ctx: Context, path: tuple[str | int, ...]) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    for name, limit in value.items():
        if isinstance(limit, dict):
            soft = ctx.read.integer(limit.get("soft"), (*path, name, "soft"))
            hard = ctx.read.integer(limit.get("hard"), (*path, name, "hard"))
        else:
            soft = hard = ctx.read.integer(limit, (*path, name))
        if soft is not None and hard is not None:
            limits[str(name)] = {"soft": soft, "hard": hard}
    return limits


def _device(entry: Any) -> str:
    if isinstance(entry, dict):
        parts = [str(entry.get("source", "")), str(entry.get("target") or entry.get("source", ""))]
        if entry.get("permissions"):
            parts.append(str(entry["permissions"]))
        return ":".join(parts)
    return str(entry)


def _camel(key: str) -> str:
    """`cap_add` → `capAdd`: a compose key as e2e.yaml spells the same option."""
    first, *rest = key.split("_")
    return first + "".join(part.capitalize() for part in rest)
