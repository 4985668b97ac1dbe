"""What preflight does with each key of a compose file: honour it, set it aside with a warning, or refuse it.

*Honoured*: it reaches the container, network or volume as `docker compose up` would make it.
*Aside*: it cannot change what a test sees (preflight owns the container's lifetime, reads every
log, runs one replica), so it is left out and said so, once per key and file. *Refused*: running
without it would make the environment lie; a `CONFIG_INVALID` problem with its line and a hint.
docs/compose.md shows this table; a test keeps the two equal and covers every key of the vendored
specification.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["DECISIONS", "Decision", "Verdict"]

Verdict = Literal["honoured", "aside", "refused"]
Decision = tuple[Verdict, str]
"""(verdict, what happens: for `aside` the warning's reason, for `refused` the hint)."""

_TUNING = "resource tuning that does not change what a test sees"
_WINDOWS = "Windows containers only"
_BUILDER_DEFAULTS = "the build runs with the builder's defaults"
_BRIDGE_DEFAULTS = "the session's network is a bridge with Docker's defaults"
_WRITTEN_AND_MOUNTED = "written to a file under `.preflight/compose/` and mounted"

_SERVICE: dict[str, Decision] = {
    "annotations": ("aside", "annotations are metadata for the runtime; nothing in the container reads them"),
    "attach": ("aside", "preflight reads every service's logs"),
    "blkio_config": ("aside", _TUNING),
    "build": ("honoured", "`context`, `dockerfile`, `args`, `target`; other build keys per the `build` rows"),
    "cap_add": ("honoured", "`--cap-add`"),
    "cap_drop": ("honoured", "`--cap-drop`"),
    "cgroup": ("aside", _TUNING),
    "cgroup_parent": ("aside", _TUNING),
    "command": ("honoured", "the container's command (string or list)"),
    "configs": ("honoured", "bind-mounted read-only at `/<name>` or `target` (file, environment, content)"),
    "container_name": ("honoured", "a network alias (container names stay unique per session)"),
    "cpu_count": ("aside", _TUNING),
    "cpu_percent": ("aside", _TUNING),
    "cpu_period": ("aside", _TUNING),
    "cpu_quota": ("aside", _TUNING),
    "cpu_rt_period": ("aside", _TUNING),
    "cpu_rt_runtime": ("aside", _TUNING),
    "cpu_shares": ("honoured", "`--cpu-shares`"),
    "cpus": ("honoured", "`--cpus`"),
    "cpuset": ("aside", _TUNING),
    "credential_spec": ("aside", _WINDOWS),
    "depends_on": ("honoured", "start order; `condition`, `required`, `restart` (see below)"),
    "deploy": (
        "aside",
        "one container per service; swarm placement, replicas and update policy do not apply",
    ),
    "develop": ("aside", "`docker compose watch` settings; preflight watches with `preflight watch`"),
    "device_cgroup_rules": ("aside", _TUNING),
    "devices": ("honoured", "`--device`"),
    "dns": ("honoured", "`--dns`"),
    "dns_opt": ("honoured", "`--dns-option`"),
    "dns_search": ("honoured", "`--dns-search`"),
    "domainname": ("honoured", "`--domainname`"),
    "entrypoint": ("honoured", "the entrypoint; `[]` clears the image's"),
    "env_file": ("honoured", "string, list, `{path, required, format: raw}`"),
    "environment": ("honoured", "map or list; a key without a value takes the environment's"),
    "expose": ("honoured", "nothing to do: services reach every port of each other"),
    "extends": ("honoured", "the base service (same file or `file:`) merged under this one"),
    "external_links": ("refused", "reach containers outside the project as services or mocks of e2e.yaml"),
    "extra_hosts": ("honoured", "`--add-host` (map or list, `host-gateway` too)"),
    "gpus": ("refused", "a test environment has no GPUs to give; remove `gpus` in an override"),
    "group_add": ("honoured", "`--group-add`"),
    "healthcheck": ("honoured", "every sub-key; a local HTTP test is probed from the host"),
    "hostname": ("honoured", "`--hostname`, and a network alias"),
    "image": ("honoured", "the image; pulled when missing (`pull_policy`)"),
    "init": ("honoured", "`--init`"),
    "ipc": ("honoured", "`--ipc` (`host`, `shareable`, `private`)"),
    "isolation": ("aside", _WINDOWS),
    "label_file": ("honoured", "labels read from the files"),
    "labels": ("honoured", "container labels (preflight's own labels win)"),
    "links": ("honoured", "the link's alias becomes a network alias of the linked service"),
    "logging": ("aside", "preflight reads every service's logs through the engine"),
    "mac_address": ("aside", "addresses on the session's network are Docker's"),
    "mem_limit": ("honoured", "`--memory`"),
    "mem_reservation": ("honoured", "`--memory-reservation`"),
    "mem_swappiness": ("aside", _TUNING),
    "memswap_limit": ("aside", _TUNING),
    "models": ("refused", "AI models are not provided; run the model server as a service"),
    "network_mode": ("honoured", "`service:NAME` shares that service's network; `host`, `none` are refused"),
    "networks": ("honoured", "the session's one network; `aliases` kept; addresses set aside"),
    "oom_kill_disable": ("aside", _TUNING),
    "oom_score_adj": ("honoured", "`--oom-score-adj`"),
    "pid": ("honoured", "`--pid`"),
    "pids_limit": ("honoured", "`--pids-limit`"),
    "platform": ("honoured", "`--platform`"),
    "ports": ("honoured", "every form; on free host ports unless `hostPorts: asWritten`"),
    "post_start": ("refused", "the hook's command would be skipped; run it as a `kind: job` service"),
    "pre_stop": ("refused", "the hook's command would be skipped; run it in the suite's teardown"),
    "privileged": ("honoured", "`--privileged`"),
    "profiles": ("honoured", "`compose.profiles` in e2e.yaml and `COMPOSE_PROFILES`"),
    "provider": ("refused", "provider services are not run; describe the service with an image"),
    "pull_policy": ("honoured", "`missing` (default for an image) pulls when absent; `build` builds"),
    "pull_refresh_after": ("aside", "images are pulled when missing"),
    "read_only": ("honoured", "`--read-only`"),
    "restart": (
        "aside",
        "preflight owns each container's lifetime and reports a crash instead of restarting",
    ),
    "runtime": ("aside", "containers run on the engine's default runtime"),
    "scale": ("aside", "one container per service"),
    "secrets": ("honoured", "bind-mounted read-only at `/run/secrets/<name>` or `target`"),
    "security_opt": ("honoured", "`--security-opt`"),
    "shm_size": ("honoured", "`--shm-size`"),
    "stdin_open": ("honoured", "`--interactive`"),
    "stop_grace_period": ("honoured", "`--stop-timeout`"),
    "stop_signal": ("honoured", "`--stop-signal`"),
    "storage_opt": ("aside", _TUNING),
    "sysctls": ("honoured", "`--sysctl` (map or list)"),
    "tmpfs": ("honoured", "`--tmpfs` (string or list)"),
    "tty": ("honoured", "`--tty`"),
    "ulimits": ("honoured", "`--ulimit` (a number or `{soft, hard}`)"),
    "use_api_socket": ("refused", "the engine's socket is not handed to containers"),
    "user": ("honoured", "`--user`"),
    "userns_mode": ("honoured", "`--userns`"),
    "uts": ("honoured", "`--uts`"),
    "volumes": ("honoured", "bind mounts and named volumes, short and long forms; `tmpfs` mounts"),
    "volumes_from": (
        "honoured",
        "`--volumes-from` the service's container (`NAME[:ro]`); `container:` is refused",
    ),
    "working_dir": ("honoured", "`--workdir`"),
}

_BUILD: dict[str, Decision] = {
    "context": ("honoured", "the build context (relative to the compose file)"),
    "dockerfile": ("honoured", "relative to `context`"),
    "args": ("honoured", "`--build-arg`"),
    "target": ("honoured", "`--target`"),
    "additional_contexts": ("refused", "build the image yourself and name it in `image`"),
    **dict.fromkeys(("cache_from", "cache_to"), ("aside", "the local build cache is used")),
    "dockerfile_inline": ("refused", "write the Dockerfile to a file and name it in `dockerfile`"),
    **dict.fromkeys(
        ("entitlements", "extra_hosts", "network", "privileged", "shm_size", "ulimits"),
        ("aside", _BUILDER_DEFAULTS),
    ),
    "isolation": ("aside", _WINDOWS),
    "labels": ("aside", "preflight labels the images it builds"),
    "no_cache": ("aside", "`preflight build --no-cache` rebuilds without cache"),
    "platforms": ("aside", "the image is built for this engine's platform"),
    "pull": ("aside", "base images are pulled by the builder when missing"),
    "secrets": ("refused", "build secrets are not passed; build the image yourself"),
    "ssh": ("refused", "SSH agents are not forwarded; build the image yourself"),
    "tags": ("aside", "the image is tagged with `image` only"),
}

_HEALTHCHECK: dict[str, Decision] = {
    **dict.fromkeys(
        ("disable", "interval", "retries", "test", "timeout", "start_period"),
        ("honoured", "as Docker's check, or a host-side HTTP probe"),
    ),
    "start_interval": ("honoured", "the check runs at the shorter of `interval` and `start_interval`"),
}

_NETWORK: dict[str, Decision] = {
    "name": ("honoured", "accepted: every service joins the session's one private network"),
    "driver": ("aside", "the session's network is a bridge"),
    **dict.fromkeys(
        ("driver_opts", "internal", "enable_ipv4", "enable_ipv6", "attachable"), ("aside", _BRIDGE_DEFAULTS)
    ),
    "ipam": ("aside", "addresses on the session's network are Docker's"),
    "external": ("aside", "the session's own network is used instead"),
    "labels": ("aside", "the session's network carries preflight's labels"),
}

_VOLUME: dict[str, Decision] = {
    "name": ("honoured", "the volume's Docker name"),
    "external": ("honoured", "used as is, never created"),
    "driver": ("honoured", "`local` only; any other driver is refused"),
    "driver_opts": (
        "refused",
        "the volume would be another thing (an NFS share, a tmpfs); drop it in an override",
    ),
    "labels": ("aside", "a label on a volume does not change what a test sees"),
}

_SECRET: dict[str, Decision] = {
    "name": ("honoured", "accepted (the mount is named after the secret's key)"),
    "file": ("honoured", "bind-mounted read-only"),
    "environment": ("honoured", _WRITTEN_AND_MOUNTED),
    "external": ("refused", "swarm secrets do not exist here; use `file` or `environment`"),
    "labels": ("aside", "a label on a secret does not change what a test sees"),
    **dict.fromkeys(
        ("driver", "driver_opts"), ("refused", "secret drivers are not run; use `file` or `environment`")
    ),
    "template_driver": ("refused", "templates are not rendered; use `file` or `environment`"),
}

_CONFIG: dict[str, Decision] = {
    "name": ("honoured", "accepted (the mount is named after the config's key)"),
    "file": ("honoured", "bind-mounted read-only"),
    **dict.fromkeys(("environment", "content"), ("honoured", _WRITTEN_AND_MOUNTED)),
    "external": ("refused", "swarm configs do not exist here; use `file`, `environment` or `content`"),
    "labels": ("aside", "a label on a config does not change what a test sees"),
    "template_driver": ("refused", "templates are not rendered; use `file` or `content`"),
}

_TOP: dict[str, Decision] = {
    "version": ("honoured", "accepted and ignored, as the specification says"),
    "name": ("honoured", "the project's name when there is no e2e.yaml"),
    "include": ("honoured", "the included files' services, paths relative to each file"),
    "services": ("honoured", "see the service rows"),
    "networks": ("honoured", "see the network rows"),
    "volumes": ("honoured", "see the volume rows"),
    "secrets": ("honoured", "see the secret rows"),
    "configs": ("honoured", "see the config rows"),
    "models": ("refused", "AI models are not provided; run the model server as a service"),
}

DECISIONS: dict[str, dict[str, Decision]] = {
    "top-level": _TOP,
    "service": _SERVICE,
    "build": _BUILD,
    "healthcheck": _HEALTHCHECK,
    "network": _NETWORK,
    "volume": _VOLUME,
    "secret": _SECRET,
    "config": _CONFIG,
}
"""Decision by section, then key. The sections map to the specification's definitions."""
