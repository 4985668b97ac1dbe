"""`container.options` in e2e.yaml: the Docker run options compose files use (`cap_add`, `sysctls`...).

Each field is what `docker run` takes for it, so a compose service's keys reach the container as
`docker compose up` makes it. Sizes are bytes, CPUs a fraction of one (`0.5`), the grace period a
duration.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from ._meta import Duration

__all__ = ["RunOptions", "Ulimit"]


class _Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """Base of the option sections: `_meta.Section` spelled out, so that linters see msgspec's `[]` defaults."""


class Ulimit(_Options, frozen=True, kw_only=True):
    """One resource limit (`--ulimit name=soft:hard`)."""

    soft: Annotated[int, Meta(description="Soft limit.")]
    hard: Annotated[int, Meta(description="Hard limit.")]


class RunOptions(_Options, frozen=True, kw_only=True):
    """Docker run options of the container (all optional; the defaults are Docker's)."""

    # An empty `[]` or `{}` default is copied for each instance by msgspec, never shared.
    cap_add: Annotated[list[str], Meta(description="Capabilities to add (`NET_ADMIN`).")] = []
    cap_drop: Annotated[list[str], Meta(description="Capabilities to drop (`ALL`).")] = []
    sysctls: Annotated[dict[str, str], Meta(description="Namespaced kernel parameters.")] = {}
    labels: Annotated[dict[str, str], Meta(description="Extra container labels.")] = {}
    tmpfs: Annotated[list[str], Meta(description="tmpfs mounts `path[:options]`.")] = []
    extra_hosts: Annotated[list[str], Meta(description="`/etc/hosts` entries `name:address`.")] = []
    dns: Annotated[list[str], Meta(description="DNS servers.")] = []
    dns_search: Annotated[list[str], Meta(description="DNS search domains.")] = []
    dns_opt: Annotated[list[str], Meta(description="resolv.conf options.")] = []
    security_opt: Annotated[list[str], Meta(description="Security options (`no-new-privileges`).")] = []
    group_add: Annotated[list[str], Meta(description="Extra groups of the user.")] = []
    devices: Annotated[list[str], Meta(description="Host devices `host[:container[:perms]]`.")] = []
    ulimits: Annotated[dict[str, Ulimit], Meta(description="Resource limits by name (`nofile`).")] = {}
    shm_size: Annotated[int, Meta(ge=0, description="Size of /dev/shm in bytes.")] | None = None
    mem_limit: Annotated[int, Meta(ge=0, description="Memory limit in bytes.")] | None = None
    mem_reservation: Annotated[int, Meta(ge=0, description="Memory soft limit in bytes.")] | None = None
    cpus: Annotated[float, Meta(ge=0, description="CPUs (a fraction: `0.5`).")] | None = None
    cpu_shares: Annotated[int, Meta(ge=0, description="Relative CPU weight.")] | None = None
    pids_limit: Annotated[int | None, Meta(description="Process limit (-1: none).")] = None
    oom_score_adj: Annotated[int, Meta(ge=-1000, le=1000, description="OOM score adjustment.")] | None = None
    stop_signal: Annotated[str | None, Meta(description="Signal that stops the container.")] = None
    stop_grace_period: Annotated[str | int | None, Duration("Wait after the stop signal before SIGKILL.")] = (
        None
    )
    privileged: Annotated[bool, Meta(description="Give the container every capability and device.")] = False
    tty: Annotated[bool, Meta(description="Allocate a pseudo-TTY.")] = False
    stdin_open: Annotated[bool, Meta(description="Keep stdin open.")] = False
    domainname: Annotated[str | None, Meta(description="The container's NIS domain name.")] = None
    hostname: Annotated[str | None, Meta(description="The container's host name.")] = None
    platform: Annotated[str | None, Meta(description="Image platform (`linux/amd64`).")] = None
    pid: Annotated[str | None, Meta(description="PID namespace (`host`).")] = None
    ipc: Annotated[str | None, Meta(description="IPC namespace (`host`, `shareable`).")] = None
    uts: Annotated[str | None, Meta(description="UTS namespace (`host`).")] = None
    userns_mode: Annotated[str | None, Meta(description="User namespace (`host`).")] = None
    volumes_from: Annotated[
        list[str],
        Meta(
            description="Mount every volume of these services (`name` or `name:ro`; compose `volumes_from`)."
        ),
    ] = []
    network_of: Annotated[
        str | None,
        Meta(description="Share this service's network namespace (compose `network_mode: service:NAME`)."),
    ] = None
